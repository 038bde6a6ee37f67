#pragma once
// Appends EventBatches (block-local ids) to a TraceBuilder (trace-wide ids), in order.
#include "event_batch.h"

#include "stallscope/model/trace_builder.h"

#include <map>
#include <tuple>
#include <vector>

namespace stallscope::importers {

class BatchMerger {
public:
    explicit BatchMerger(model::TraceBuilder& builder) : m_b(builder) {}
    void merge(EventBatch& batch);
    void mergeDiagnostics(const model::Diagnostics& d) { m_b.diagnostics().merge(d); }
    [[nodiscard]] uint64_t events() const { return m_events; }

private:
    model::TraceBuilder& m_b;
    std::vector<uint32_t> m_str;      // local string id -> global
    std::vector<model::ProcessId> m_proc;
    std::vector<model::TrackId> m_track;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, model::CounterId> m_series;
    uint64_t m_events = 0;
};

} // namespace stallscope::importers
