// RPD (rocmProfileData) SQLite profiles, plain or gzip-compressed, read-only through
// libsqlite3, each row written as the Kineto event that means the same (kineto_text.h):
//   rocpd_op: KernelExecution and Task (a kernel node of a graph run by hipGraphLaunch) ->
//     kernel; Copy<From>To<To> -> gpu_memcpy "Memcpy HtoD"; FillBuffer -> gpu_memset; on
//     pid = gpuId, tid = queueId (RPD keeps streams only as launch arguments);
//   rocpd_api: hip* calls -> cuda_runtime on pid/tid; UserMarker (roctx ranges) ->
//     user_annotation named by its argument, or cpu_op when ext_autogradapi lists it as a
//     PyTorch operator (rpd's autograd hook), with its sequence number and sizes;
//   rocpd_api_ops: the API -> op links, as correlations (one hipGraphLaunch owns all the
//     ops of its graph).
// The tracer's own records (OpTable::writeRows, hcc_activity_callback ...) are counted, not
// read. Times are nanoseconds (RPD_INFO.md). RPD does not name its GPUs.
// Schema notes: tests/tools/foreign_formats_notes.md; mapping: docs/formats.md.
#include "kineto_text.h"
#include "sqlite_db.h"
#include "sqlite_schema.h"

#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"

#include <map>
#include <set>
#include <unordered_map>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

using model::DiagnosticKind;

/// "CopyHostToDevice" -> "HtoD"; "CopyDeviceToDevice" -> "DtoD"; "" when not a copy.
std::string copyDirection(std::string_view opType) {
    if (!opType.starts_with("Copy")) return "";
    const std::string_view d = opType.substr(4);
    const size_t to = d.find("To");
    if (to == std::string_view::npos || to == 0 || to + 2 >= d.size()) return "";
    return std::string(1, d[0]) + "to" + std::string(1, d[to + 2]);
}

class RpdReader {
public:
    RpdReader(const SqliteDb& db, KinetoText& out) : m_db(db), m_out(out) {}

    base::Status read() {
        for (auto s : {readStrings(), readLinks(), readApi(), readOps()})
            if (!s) return s;
        writeNames();
        for (const auto& [name, n] : m_notRead)
            m_out.note(DiagnosticKind::SourceNotRead,
                       std::to_string(n) + " " + name + " rows of rocpd_" +
                           (name.starts_with("op type ") ? "op" : "api"));
        m_out.note(DiagnosticKind::SourceLacks,
                   "RPD files do not name their GPUs: device peaks and GPU-specific advice "
                   "are not known");
        return {};
    }

    [[nodiscard]] std::string producer() const {
        const auto it = m_meta.find("schema_version");
        return it == m_meta.end() ? "schema version not said" : "schema " + it->second;
    }

private:
    base::Status query(std::string_view table, const std::vector<std::string_view>& columns,
                       const std::function<void(const SqliteRow&)>& row) {
        return eachRow(m_db, table, columns, row);
    }

    base::Status readStrings() {
        (void)query("rocpd_metadata", {"tag", "value"}, [&](const SqliteRow& r) {
            m_meta[std::string(r.text(0))] = std::string(r.text(1));
        });
        return str.read(m_db, "rocpd_string", "id", "string");
    }

    /// The API -> op links (correlations), copy sizes, and the autograd operators.
    base::Status readLinks() {
        auto s = query("rocpd_api_ops", {"api_id", "op_id"}, [&](const SqliteRow& r) {
            m_apiOfOp[r.integer(1)] = r.integer(0);
            m_correlation.try_emplace(r.integer(0),
                                      static_cast<uint32_t>(m_correlation.size() + 1));
        });
        if (!s) return s;
        s = query("rocpd_copyapi", {"api_ptr_id", "size", "pinned"}, [&](const SqliteRow& r) {
            m_copy[r.integer(0)] = {r.integer(1, -1), r.integer(2)};
        });
        if (!s) return s;
        return query("ext_autogradapi", {"api_ptr_id", "autogradName_id", "seq", "sizes"},
                     [&](const SqliteRow& r) {
                         Autograd& a = m_autograd[r.integer(0)];
                         a.name = str(r.integer(1));
                         a.seq = r.text(2).empty() ? -1 : r.integer(2);
                         a.sizes = std::string(r.text(3));
                     });
    }

    base::Status readApi() {
        if (!m_db.hasTable("rocpd_api"))
            m_out.note(DiagnosticKind::SourceLacks, "no rocpd_api table: no HIP calls");
        return query("rocpd_api", {"id", "pid", "tid", "start", "end", "apiName_id", "args_id"},
                     [&](const SqliteRow& r) {
                         const std::string_view name = str(r.integer(5));
                         const int64_t pid = r.integer(1), tid = r.integer(2);
                         const int64_t start = r.integer(3), dur = r.integer(4) - r.integer(3);
                         if (name.starts_with("hip")) {
                             m_threads.insert({pid, tid});
                             const auto c = m_correlation.find(r.integer(0));
                             m_out.slice("cuda_runtime", name, pid, tid, start, dur,
                                         [&](base::JsonWriter& a) {
                                             if (c != m_correlation.end())
                                                 a.key("correlation").value(c->second);
                                             if (!str(r.integer(6)).empty())
                                                 a.key("args").value(str(r.integer(6)));
                                         });
                             return;
                         }
                         if (name != "UserMarker") {
                             ++m_notRead[std::string(name)];
                             return;
                         }
                         m_threads.insert({pid, tid});
                         const auto op = m_autograd.find(r.integer(0));
                         if (op == m_autograd.end()) {
                             m_out.slice("user_annotation", str(r.integer(6)), pid, tid, start,
                                         dur);
                             return;
                         }
                         const Autograd& a = op->second;
                         m_out.slice("cpu_op", a.name.empty() ? str(r.integer(6)) : a.name, pid,
                                     tid, start, dur, [&](base::JsonWriter& w) {
                                         if (a.seq >= 0) w.key("Sequence number").value(a.seq);
                                         if (isShapeList(a.sizes)) w.key("Input Dims").raw(a.sizes);
                                     });
                     });
    }

    base::Status readOps() {
        if (!m_db.hasTable("rocpd_op"))
            m_out.note(DiagnosticKind::SourceLacks, "no rocpd_op table: no GPU work");
        return query(
            "rocpd_op", {"id", "gpuId", "queueId", "start", "end", "description_id", "opType_id"},
            [&](const SqliteRow& r) {
                const std::string_view type = str(r.integer(6));
                const int64_t gpu = r.integer(1), queue = r.integer(2);
                const int64_t start = r.integer(3), dur = r.integer(4) - r.integer(3);
                const auto api = m_apiOfOp.find(r.integer(0));
                const int64_t apiId = api == m_apiOfOp.end() ? -1 : api->second;
                const auto c = m_correlation.find(apiId);
                auto ids = [&](base::JsonWriter& a) {
                    a.key("device").value(gpu);
                    a.key("queue").value(queue);
                    if (c != m_correlation.end()) a.key("correlation").value(c->second);
                };
                std::string direction = copyDirection(type);
                const char* cat = nullptr;
                std::string name;
                if (type == "KernelExecution" || type == "Task") {
                    cat = "kernel";
                    name = str(r.integer(5));
                } else if (!direction.empty()) {
                    cat = "gpu_memcpy";
                    const auto copy = m_copy.find(apiId);
                    const bool pinned = copy != m_copy.end() && copy->second.second != 0;
                    const char* host = pinned ? "Pinned" : "Host";
                    auto kind = [&](char c) { return c == 'H' ? host : c == 'D' ? "Device" : "?"; };
                    name = "Memcpy " + direction + " (" + kind(direction[0]) + " -> " +
                           kind(direction.back()) + ")";
                } else if (type == "FillBuffer") {
                    cat = "gpu_memset";
                    name = "Memset (Device)";
                } else {
                    ++m_notRead["op type " + std::string(type)];
                    return;
                }
                m_streams.insert({gpu, queue});
                m_out.slice(cat, name, gpu, queue, start, dur, [&](base::JsonWriter& a) {
                    ids(a);
                    if (type == "Task") a.key("graph node").value(true);
                    const auto copy = m_copy.find(apiId);
                    if (copy != m_copy.end() && copy->second.first >= 0 && *cat != 'k')
                        a.key("bytes").value(copy->second.first);
                });
            });
    }

    void writeNames() {
        std::set<int64_t> pids, gpus;
        for (const auto& [pid, tid] : m_threads) pids.insert(pid);
        for (const int64_t pid : pids) m_out.processName(pid, "process " + std::to_string(pid));
        for (const auto& [gpu, queue] : m_streams) {
            if (gpus.insert(gpu).second)
                m_out.processName(gpu, "GPU " + std::to_string(gpu), "GPU " + std::to_string(gpu));
            m_out.threadName(gpu, queue, "queue " + std::to_string(queue));
        }
    }

    struct Autograd {
        std::string_view name; // in str
        std::string sizes;
        int64_t seq = -1;
    };

    const SqliteDb& m_db;
    KinetoText& m_out;
    StringIds str; // the file's strings by id
    std::map<std::string, std::string> m_meta;
    std::unordered_map<int64_t, int64_t> m_apiOfOp;
    std::unordered_map<int64_t, uint32_t> m_correlation;
    std::unordered_map<int64_t, std::pair<int64_t, int64_t>> m_copy; // api -> size, pinned
    std::unordered_map<int64_t, Autograd> m_autograd;
    std::map<std::string, uint64_t> m_notRead;
    std::set<std::pair<int64_t, int64_t>> m_threads, m_streams;
};

bool isRpdSqlite(const ContentProbe& p) {
    return looksSqlite(p.content()) && p.sqlite().has("rocpd_*");
}

Result<KinetoText> translateRpd(const fs::path& path, const ImportOptions& options) {
    auto db = openProfilerDatabase(path, options);
    if (!db) return db.error();
    db->setCancel(options.cancel);
    // rocprofv3's own rocpd databases (--output-format rocpd) share the prefix, not the schema.
    if (!db->hasTable("rocpd_op") && !db->hasTable("rocpd_api")) {
        auto tables = db->tables(64);
        bool rocprofv3 = false;
        if (tables)
            for (const std::string& t : tables.value())
                rocprofv3 |= t.starts_with("rocpd_kernel_dispatch") || t.starts_with("rocpd_info_");
        if (rocprofv3)
            return Error{
                ErrorKind::Unsupported,
                "this is a rocprofv3 rocpd database (rocpd_info_*, rocpd_kernel_dispatch*), "
                "whose schema Stallscope does not read yet: profile with rocprofv3 "
                "--output-format json and open the JSON"};
    }
    KinetoText text;
    RpdReader reader(db.value(), text);
    if (auto s = reader.read(); !s) return s.error();
    if (text.events() == 0)
        return Error{ErrorKind::InvalidStructure,
                     "this RPD profile holds no GPU operations or HIP calls: nothing to show"};
    text.setFormatName("RPD (rocmProfileData) SQLite (" + reader.producer() + ")");
    return text;
}

} // namespace

extern const FileFormat kFormatRpdSqlite;
const FileFormat kFormatRpdSqlite{InputFormat::RpdSqlite,
                                  "RPD (rocmProfileData) SQLite",
                                  isRpdSqlite,
                                  importVia<translateRpd>,
                                  {},
                                  {},
                                  nullptr,
                                  kinetoTextVia<translateRpd>};

} // namespace stallscope::importers
