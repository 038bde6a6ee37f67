#pragma once
// CUPTI activity records -> pb::Batch messages. The injection library runs every record of
// every flush through convert(); the tests feed it CUPTI structs filled in memory. No CUPTI
// call is made here (headers only), so this builds and tests without a driver or a GPU.
// The mapping (kinds, names, categories, fields) is documented in stallscope_cupti_names.h.
//
// One convert() call takes the records of one flush in two passes: first the bookkeeping
// records (external correlations, contexts, and the context -> device pairs of GPU work)
// so that an API call and its GPU work get their external id whatever the order of the
// buffers, then the activities. Times go through the ClockMap; activities that do not
// overlap the recording intervals are left out. Activities are cut into batches of at most
// `maxActivitiesPerBatch`; each batch carries the strings first used by it.
#include "stallscope_cupti_buffers.h"
#include "stallscope_cupti_clock.h"
#include "stallscope_cupti_links.h"
#include "stallscope_cupti_markers.h"
#include "stallscope_cupti_range.h"

#include "stallscope/capture/protocol.h"

#include <cupti_activity.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace stallscope::capture::cupti {

struct ConvertOptions {
    int64_t pid = 0; // the target process: GPU work carries it
    bool allApi = false;
    size_t maxActivitiesPerBatch = 16384;
    size_t maxOpenMarkers = 65536;
    size_t maxExternalIds = 1u << 20;
};

/// Cumulative counts (the injection logs them; the tests check them).
struct ConvertCounters {
    uint64_t records = 0;      // records seen
    uint64_t activities = 0;   // activities produced
    uint64_t apiFiltered = 0;  // runtime/driver records not kept
    uint64_t ownThread = 0;    // API records of the injection's own threads
    uint64_t outsideRange = 0; // activities outside the recording intervals
    uint64_t otherKinds = 0;   // records of kinds that are not converted
};

class ActivityConverter {
public:
    ActivityConverter(ConvertOptions options, DropLedger& drops);

    void setClock(const ClockMap& clock) { m_clock = clock; }
    /// Records outside these intervals are left out; without a call, everything is kept.
    void setRecordingIntervals(RecordingIntervals intervals) { m_range = std::move(intervals); }
    /// CUPTI thread id -> OS thread id (ThreadRegistry::snapshot()).
    void setThreadMap(ThreadRegistry::Map map) { m_threads = std::move(map); }
    /// API records of this OS thread (the injection's flush thread) are left out.
    void ignoreThread(int64_t osTid) { m_ignoredTid = osTid; }

    void convert(std::span<const CUpti_Activity* const> records);

    /// Devices described since the last call (CUPTI_ACTIVITY_KIND_DEVICE).
    std::vector<pb::Device> takeDevices();
    /// The batches built since the last call, in order, the last one closed too. Sequence
    /// numbers and drop accounting are the sender's.
    std::vector<pb::Batch> takeBatches();

    [[nodiscard]] const ConvertCounters& counters() const { return m_counters; }
    [[nodiscard]] const ClockMap& clock() const { return m_clock; }
    [[nodiscard]] size_t openMarkers() const { return m_markers.open(); }

private:
    struct ApiName {
        uint32_t nameId;
        bool keep;
    };

    void note(const CUpti_Activity* record);
    void convertOne(const CUpti_Activity* record);
    void kernel(const CUpti_ActivityKernel10& k);
    void memcpy(const CUpti_ActivityMemcpy6& m);
    void peerCopy(const CUpti_ActivityMemcpyPtoP4& m);
    void memset(const CUpti_ActivityMemset4& m);
    void api(const CUpti_ActivityAPI& a, bool runtime);
    void sync(const CUpti_ActivitySynchronization2& s);
    void marker(const CUpti_ActivityMarker2& m);
    void overhead(const CUpti_ActivityOverhead3& o);
    void device(const CUpti_ActivityDevice5& d);

    /// A new activity in the current batch with kind, times, name and category set, or
    /// nullptr when it lies outside the recording intervals. Times are CUPTI ns.
    pb::Activity* add(pb::Activity::Kind kind, uint64_t start, uint64_t end, uint32_t nameId,
                      std::string_view category);
    /// add() for an activity whose times are realtime ns already.
    pb::Activity* addMapped(pb::Activity::Kind kind, int64_t start, int64_t end, uint32_t nameId,
                            std::string_view category);
    bool timed(uint64_t start, uint64_t end);
    void setCorrelation(pb::Activity& a, uint32_t correlationId);
    [[nodiscard]] int64_t osThread(uint32_t cuptiThreadId) const;
    uint32_t kernelNameId(const char* mangled);
    uint32_t copyNameId(uint32_t copyKind, uint32_t src, uint32_t dst);
    ApiName apiName(uint32_t cbid, bool runtime);
    void sealBatch();

    ConvertOptions m_options;
    DropLedger& m_drops;
    StringTable m_strings;
    ClockMap m_clock;
    std::optional<RecordingIntervals> m_range;
    ThreadRegistry::Map m_threads;
    int64_t m_ignoredTid = -1;
    ExternalCorrelations m_external;
    ContextDevices m_contexts;
    MarkerPairer m_markers;
    ConvertCounters m_counters;
    std::unordered_map<std::string, uint32_t> m_kernelNames;
    std::unordered_map<uint32_t, uint32_t> m_copyNames;
    std::unordered_map<uint32_t, ApiName> m_runtimeNames, m_driverNames;
    pb::Batch m_batch;
    std::vector<pb::Batch> m_done;
    std::vector<pb::Device> m_devices;
};

} // namespace stallscope::capture::cupti
