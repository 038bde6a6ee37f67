#pragma once
// Turns what a TraceBuilder collected (arrival order) into the immutable Trace layout.
#include "stallscope/model/trace_builder.h"

namespace stallscope::model {

class TraceFinalizer {
public:
    explicit TraceFinalizer(TraceBuilder& b) : m_b(b), m_t(*b.m_trace) {}
    void run();

private:
    void applyTimeBase();
    void clampTimes();
    void pairBeginEnd();
    void classifyTracks();
    void sortSlices();
    void computeNesting();
    void buildEndIndex();
    void sortInstants();
    void resolveFlows();
    void buildCorrelationIndex(Diagnostics& diagnostics);
    void sortCounters();
    void computeSpan();
    void nameTracks();
    void buildDisplayOrder();

    [[nodiscard]] SliceId enclosingSlice(TrackId track, int64_t ts) const;
    [[nodiscard]] SliceId nextSlice(TrackId track, int64_t ts) const;

    TraceBuilder& m_b;
    Trace& m_t;
};

} // namespace stallscope::model
