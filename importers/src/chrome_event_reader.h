#pragma once
// Reads the fields of one Chrome-trace event object (simdjson on-demand) and appends the
// event to an EventBatch. JSON syntax errors are returned; semantic problems (missing or
// mistyped fields, "N/A", out-of-range numbers) become counted diagnostics.
#include "event_batch.h"
#include "json_number.h"

#include <simdjson.h>

#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stallscope::importers {

namespace sjo = simdjson::ondemand;

class ChromeEventReader {
public:
    explicit ChromeEventReader(EventBatch& batch);

    /// Parses the fields of `obj`. Call commit() afterwards when it returned SUCCESS.
    simdjson::error_code read(sjo::object& obj, uint64_t offset);
    /// Appends the event just read; `offset`/`length` locate its text in the input.
    void commit(uint64_t offset, uint32_t length);

private:
    struct Event {
        std::string_view ph;
        bool hasPh = false, hasName = false, hasCat = false, hasPid = false, hasTid = false;
        bool hasTs = false, hasDur = false, hasId = false, hasBindId = false;
        bool flowIn = false, flowOut = false;
        uint32_t name = 0, cat = 0;
        LocalKey pid, tid;
        NumberStatus tsStatus = NumberStatus::Ok, durStatus = NumberStatus::Ok;
        int64_t ts = 0, dur = 0;
        uint64_t id = 0, bindId = 0;
        char bp = 0, scope = 0;
        // args
        uint32_t correlation = model::SliceTable::kNoCorrelation;
        uint64_t externalId = model::SliceExtra::kNone;
        int64_t bytes = -1;
        float blocksPerSm = -1.0f, occupancy = -1.0f;
        uint32_t metaText = UINT32_MAX;    // args.name / args.labels of M events
        bool hasSortIndex = false;
        int64_t sortIndex = 0;
        int64_t memBytes = 0, totalAllocated = -1, totalReserved = -1;
        uint64_t memAddr = 0;
        int16_t deviceType = -1, deviceId = -1;
        bool memoryFields = false;
        std::vector<std::pair<uint32_t, double>> numerics;  // C events: key -> value
        std::string_view wrongType;  // first field with an unusable type
    };

    simdjson::error_code readField(sjo::field& field, uint64_t offset);
    simdjson::error_code readArgs(sjo::value& v, uint64_t offset);
    simdjson::error_code readRowKey(sjo::value& v, LocalKey& key, bool isTid);
    simdjson::error_code readTime(sjo::value& v, int64_t& out, NumberStatus& status);
    simdjson::error_code readId(sjo::value& v, uint64_t& out, bool& ok);
    simdjson::error_code readString(sjo::value& v, uint32_t& id, bool& ok);
    simdjson::error_code readInt(sjo::value& v, int64_t& out, bool& ok);
    simdjson::error_code readNumber(sjo::value& v, double& out, bool& ok);
    /// v.get_string(), except that a string simdjson cannot unescape (a lone UTF-16
    /// surrogate such as "\udc80", an unknown escape such as "\x") is read with those escapes
    /// replaced by '?' and counted (invalid_escape), instead of failing the import.
    simdjson::error_code getString(sjo::value& v, std::string_view& out, uint64_t offset);

    uint32_t processIndex(LocalKey pid);
    uint32_t trackIndex(LocalKey pid, LocalKey tid);
    model::EventKind kindOf(uint32_t cat, bool hasCat);
    void countPhase();

    void commitSlice(uint64_t offset, uint32_t length);
    void commitInstant(uint64_t offset, uint32_t length);
    void commitCounter(uint64_t offset);
    void commitFlow(char phase);
    void commitBeginEnd(bool begin, uint64_t offset, uint32_t length);
    void commitMetadata(uint64_t offset);
    bool requireTime(uint64_t offset);

    EventBatch& m_b;
    Event m_ev;
    uint64_t m_offset = 0;                // of the event being read
    /// Problems found while reading the event: counted by commit(), dropped when the event
    /// turns out to be cut by the end of a block (it is read again whole from the next
    /// one, or reported as truncated), so nothing is counted twice or for a lost event.
    struct PendingDiagnostic {
        model::DiagnosticKind kind;
        uint64_t offset;
        std::string detail;
    };
    std::vector<PendingDiagnostic> m_pending;
    void note(model::DiagnosticKind kind, uint64_t offset, std::string detail) {
        m_pending.push_back({kind, offset, std::move(detail)});
    }
    std::deque<std::string> m_repaired;   // strings getString repaired, for this event (stable)
    sjo::parser m_repairParser;           // unescapes them (the main parser is mid-document)
    std::vector<uint8_t> m_catKind;  // by local string id: EventKind + 1, 0 = unknown yet
    uint32_t m_memoryName = UINT32_MAX;
    // one-entry caches: consecutive events are usually on the same row
    LocalKey m_lastPid, m_lastTid;
    uint32_t m_lastTrack = UINT32_MAX, m_lastProcess = UINT32_MAX;
    struct KeyHash {
        size_t operator()(const std::pair<uint32_t, LocalKey>& k) const noexcept {
            uint64_t h = (static_cast<uint64_t>(k.first) << 32) ^ k.second.text;
            h ^= static_cast<uint64_t>(k.second.number) * 0x9e3779b97f4a7c15ull;
            return static_cast<size_t>(h ^ (h >> 31));
        }
    };
    std::unordered_map<std::pair<uint32_t, LocalKey>, uint32_t, KeyHash> m_processMap;
    std::unordered_map<std::pair<uint32_t, LocalKey>, uint32_t, KeyHash> m_trackMap;
};

/// Strips the whitespace simdjson leaves after a raw token.
inline std::string_view trimToken(std::string_view t) {
    while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t'))
        t.remove_suffix(1);
    return t;
}

} // namespace stallscope::importers
