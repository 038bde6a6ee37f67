#pragma once
// Appends EventBatches (block-local ids) to a TraceBuilder (trace-wide ids), in order.
#include "event_batch.h"

#include "stallscope/importers/import_options.h"
#include "stallscope/model/trace_builder.h"

#include <map>
#include <tuple>
#include <vector>

namespace stallscope::importers {

class BatchMerger {
public:
    explicit BatchMerger(model::TraceBuilder& builder,
                         std::shared_ptr<const PidSelection> pids = nullptr)
        : m_b(builder), m_pids(std::move(pids)) {}
    void merge(EventBatch& batch);
    void mergeDiagnostics(const model::Diagnostics& d) { m_b.diagnostics().merge(d); }
    [[nodiscard]] uint64_t events() const { return m_events; }

private:
    /// The builder's key of a batch pid, or false when the selection leaves it out.
    bool selectPid(const EventBatch& b, const LocalKey& k, model::RowKey& out);

    model::TraceBuilder& m_b;
    std::shared_ptr<const PidSelection> m_pids;
    std::vector<uint32_t> m_str;      // local string id -> global
    std::vector<model::ProcessId> m_proc;
    std::vector<model::TrackId> m_track;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t>, model::CounterId> m_series;
    uint64_t m_events = 0;
};

} // namespace stallscope::importers
