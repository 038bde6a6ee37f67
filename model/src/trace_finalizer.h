#pragma once
// Turns what a TraceBuilder collected (arrival order) into the immutable Trace layout.
#include "stallscope/model/trace_builder.h"

#include <atomic>

namespace stallscope::model {

class TraceFinalizer {
public:
    explicit TraceFinalizer(TraceBuilder& b, const std::atomic<bool>* stop = nullptr)
        : m_b(b), m_t(*b.m_trace), m_stop(stop) {}
    /// False when stopped (the trace is then incomplete and to be dropped).
    bool run();

private:
    void applyTimeBase();
    void clampTimes();
    void pairBeginEnd();
    void classifyTracks();
    void foldStreamSyncRows();
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

    [[nodiscard]] bool stopped() const { return m_stop && m_stop->load(std::memory_order_relaxed); }

    TraceBuilder& m_b;
    Trace& m_t;
    const std::atomic<bool>* m_stop = nullptr;
};

} // namespace stallscope::model
