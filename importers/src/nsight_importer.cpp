// Nsight Systems SQLite exports (`nsys export --type sqlite FILE`), read-only through
// libsqlite3, each row written as the Kineto event that means the same (kineto_text.h):
//   CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET -> kernel / gpu_memcpy / gpu_memset on
//     pid = GPU, tid = stream; CUPTI_ACTIVITY_KIND_RUNTIME -> cuda_runtime (eventClass
//     "CUDA runtime") or cuda_driver, on pid/tid unpacked from globalTid;
//   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> cuda_sync on the GPU row, named by the call it
//     correlates to (the file's own sync-type labels disagree with the calls);
//   CUPTI_ACTIVITY_KIND_GRAPH_TRACE (--cuda-graph-trace=graph) -> one GPU slice per graph
//     execution, its kernels not listed;
//   NVTX_EVENTS -> cpu_op for PyTorch's autograd ranges (--pytorch=autograd-nvtx: "aten::mm,
//     seq = 3, op_id = 7, sizes = [[2, 3], [3, 4]]"), user_annotation for the rest, marks as
//     instants; OSRT_API -> os_runtime slices;
//   TARGET_INFO_GPU -> deviceProperties; PROCESSES / ThreadNames -> names.
// Correlation ids are per process: (pid, correlationId) pairs are renumbered. Tables are
// created lazily by nsys (a table is absent when nothing of its kind was recorded) and
// columns differ between export versions: everything is read by the columns present and
// what the file lacks is said as a diagnostic. Times are the export's nanoseconds.
// Schema notes: tests/tools/foreign_formats_notes.md; mapping: docs/formats.md.
#include "byte_stream.h"
#include "kineto_text.h"
#include "sqlite_db.h"
#include "sqlite_schema.h"

#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"

#include <charconv>
#include <map>
#include <set>
#include <unordered_map>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

using model::DiagnosticKind;

constexpr int64_t kNoStream = 4294967295; // CUPTI's "no stream" (a context or event sync)

/// globalTid / globalPid: bits 24..47 the pid, 0..23 the tid (foreign_formats_notes.md).
int64_t pidOf(int64_t global) {
    return (global >> 24) & 0xFFFFFF;
}
int64_t tidOf(int64_t global) {
    return global & 0xFFFFFF;
}

/// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": nsys appends the CUDA version an API
/// entry point appeared in (4 or 5 digits); "cuMemAlloc_v2" is the function's own name.
std::string_view apiName(std::string_view n) {
    const size_t v = n.rfind("_v");
    if (v == std::string_view::npos || n.size() - v - 2 < 4 || n.size() - v - 2 > 5) return n;
    for (size_t i = v + 2; i < n.size(); ++i)
        if (n[i] < '0' || n[i] > '9') return n;
    return n.substr(0, v);
}

/// The Kineto name of a synchronisation, from the call it correlates to, else its type.
std::string_view syncName(std::string_view call, std::string_view typeName) {
    auto has = [](std::string_view s, std::string_view p) {
        return s.find(p) != std::string_view::npos;
    };
    if (has(call, "StreamWaitEvent")) return "Stream Wait Event";
    if (has(call, "StreamSynchronize") || has(call, "StreamQuery")) return "Stream Sync";
    if (has(call, "EventSynchronize") || has(call, "EventQuery")) return "Event Sync";
    if (has(call, "DeviceSynchronize") || has(call, "CtxSynchronize")) return "Context Sync";
    if (has(typeName, "STREAM_WAIT")) return "Stream Wait Event";
    if (has(typeName, "STREAM")) return "Stream Sync";
    if (has(typeName, "EVENT")) return "Event Sync";
    if (has(typeName, "CONTEXT")) return "Context Sync";
    return "Synchronization";
}

/// "CUDA_MEMCPY_KIND_HTOD" / "..._UVM_DTOH" -> "HtoD" / "DtoH"; "PTOP" -> "PtoP".
std::string copyDirection(std::string_view enumName) {
    const size_t k = enumName.rfind('_');
    std::string_view d = k == std::string_view::npos ? enumName : enumName.substr(k + 1);
    const size_t to = d.find("TO");
    if (to == std::string_view::npos || to == 0 || to + 2 >= d.size()) return "";
    return std::string(d.substr(0, to)) + "to" + std::string(d.substr(to + 2));
}

/// "Pageable", "Device Static" -> "Device": the memory-kind label's first word.
std::string_view memoryKind(std::string_view label) {
    return label.substr(0, label.find(' '));
}

/// PyTorch's autograd NVTX text (torch/csrc/profiler/util.cpp getNvtxStr): the operator,
/// then ", seq = N", ", op_id = N", ", sizes = [[...]]" or ", input_op_ids = ...".
struct AutogradRange {
    bool is = false;
    std::string_view op, sizes;
    int64_t seq = -1;
};

AutogradRange autogradRange(std::string_view text) {
    AutogradRange r;
    const size_t comma = text.find(", ");
    if (comma == std::string_view::npos || comma == 0) return r;
    const std::string_view rest = text.substr(comma + 2);
    if (!rest.starts_with("seq = ") && !rest.starts_with("op_id = ") &&
        !rest.starts_with("sizes = ") && !rest.starts_with("input_op_ids = "))
        return r;
    r.is = true;
    r.op = text.substr(0, comma);
    if (rest.starts_with("seq = ")) {
        r.seq = 0;
        for (size_t i = 6; i < rest.size() && rest[i] >= '0' && rest[i] <= '9'; ++i)
            r.seq = r.seq * 10 + (rest[i] - '0');
    }
    const size_t s = text.find(", sizes = [");
    if (s != std::string_view::npos) {
        const std::string_view v = text.substr(s + 10);
        int depth = 0;
        for (size_t end = 0; end < v.size(); ++end) {
            if (v[end] == '[') ++depth;
            if (v[end] == ']' && --depth == 0) {
                if (isShapeList(v.substr(0, end + 1))) r.sizes = v.substr(0, end + 1);
                break;
            }
        }
    }
    return r;
}

class NsightReader {
public:
    NsightReader(const SqliteDb& db, KinetoText& out) : m_db(db), m_out(out) {}

    base::Status read() {
        for (auto s :
             {readStrings(), readEnums(), readGpus(), readHost(), readNames(), readRuntime(),
              readGpuWork(), readSync(), readGraphTrace(), readNvtx(), readOsrt()})
            if (!s) return s;
        writeNames();
        noteSkipped();
        return {};
    }

    [[nodiscard]] std::string producer() const {
        std::string out = m_meta.count("EXPORT_PRODUCT_VERSION")
                              ? "nsys " + m_meta.at("EXPORT_PRODUCT_VERSION")
                              : "nsys version not said";
        if (m_meta.count("EXPORT_SCHEMA_VERSION"))
            out += ", schema " + m_meta.at("EXPORT_SCHEMA_VERSION");
        return out;
    }

private:
    base::Status query(std::string_view table, const std::vector<std::string_view>& columns,
                       const std::function<void(const SqliteRow&)>& row) {
        return eachRow(m_db, table, columns, row);
    }

    bool lacks(std::string_view table, std::string_view meaning) {
        if (m_db.hasTable(table)) return false;
        m_out.note(DiagnosticKind::SourceLacks,
                   "no " + std::string(table) + " table: " + std::string(meaning));
        return true;
    }

    base::Status readStrings() {
        (void)query("META_DATA_EXPORT", {"name", "value"}, [&](const SqliteRow& r) {
            m_meta[std::string(r.text(0))] = std::string(r.text(1));
        });
        return str.read(m_db, "StringIds", "id", "value");
    }

    base::Status readEnums() {
        const std::pair<std::string_view, std::map<int64_t, std::pair<std::string, std::string>>*>
            enums[] = {{"ENUM_CUDA_MEMCPY_OPER", &m_copyKinds},
                       {"ENUM_CUDA_MEM_KIND", &m_memKinds},
                       {"ENUM_CUPTI_SYNC_TYPE", &m_syncTypes},
                       {"ENUM_NSYS_EVENT_CLASS", &m_eventClasses},
                       {"ENUM_NSYS_EVENT_TYPE", &m_eventTypes}};
        for (const auto& [table, into] : enums)
            if (auto s = query(
                    table, {"id", "name", "label"},
                    [&, into = into](const SqliteRow& r) {
                        (*into)[r.integer(0)] = {std::string(r.text(1)), std::string(r.text(2))};
                    });
                !s)
                return s;
        return {};
    }

    std::string_view label(const std::map<int64_t, std::pair<std::string, std::string>>& e,
                           int64_t id, bool name = false) const {
        const auto it = e.find(id);
        if (it == e.end()) return {};
        return name ? it->second.first : it->second.second;
    }

    base::Status readGpus() {
        lacks("TARGET_INFO_GPU", "the GPUs' names and properties are not known");
        auto s =
            query("TARGET_INFO_GPU",
                  {"id", "name", "totalMemory", "smCount", "computeMajor", "computeMinor",
                   "maxThreadsPerBlock", "threadsPerWarp", "maxShmemPerBlock",
                   "maxRegistersPerBlock", "maxShmemPerSm", "maxRegistersPerSm", "maxWarpsPerSm"},
                  [&](const SqliteRow& r) {
                      model::DeviceProperties d;
                      d.id = static_cast<int32_t>(r.integer(0));
                      d.name = r.text(1);
                      d.totalGlobalMem = r.integer(2);
                      d.numSms = static_cast<int32_t>(r.integer(3));
                      d.computeMajor = static_cast<int32_t>(r.integer(4));
                      d.computeMinor = static_cast<int32_t>(r.integer(5));
                      d.maxThreadsPerBlock = static_cast<int32_t>(r.integer(6));
                      d.warpSize = static_cast<int32_t>(r.integer(7));
                      d.sharedMemPerBlock = r.integer(8);
                      d.regsPerBlock = static_cast<int32_t>(r.integer(9));
                      d.sharedMemPerMultiprocessor = r.integer(10);
                      d.regsPerMultiprocessor = static_cast<int32_t>(r.integer(11));
                      d.maxThreadsPerMultiprocessor =
                          static_cast<int32_t>(r.integer(12) * r.integer(7));
                      m_gpuNames[d.id] = d.name;
                      m_out.device(d);
                  });
        if (!s) return s;
        // A process's CUDA ordinal -> the GPU's id in TARGET_INFO_GPU.
        return query("TARGET_INFO_CUDA_DEVICE", {"pid", "cudaId", "gpuId"},
                     [&](const SqliteRow& r) {
                         m_gpuOf[{r.integer(0), r.integer(1)}] = r.integer(2);
                     });
    }

    /// The recording machine (TARGET_INFO_SYSTEM_ENV) as top-level keys of the Kineto form:
    /// Kineto's own cuda_driver_version, and host_cpu, host_cpu_cores, host_os, hostname,
    /// gpu_driver_version (docs/formats.md "Top-level keys").
    base::Status readHost() {
        std::map<std::string, std::string> env;
        auto s = query("TARGET_INFO_SYSTEM_ENV", {"name", "value"},
                       [&](const SqliteRow& r) { env.emplace(r.text(0), r.text(1)); });
        if (!s) return s;
        auto text = [&](const char* name, const char* key) {
            const auto it = env.find(name);
            if (it == env.end() || it->second.empty()) return;
            base::JsonWriter w;
            w.value(it->second);
            m_out.topLevel(key, w.str());
        };
        auto number = [&](const char* name, const char* key) {
            const auto it = env.find(name);
            int64_t v = 0;
            const char* b = it == env.end() ? nullptr : it->second.data();
            if (b && std::from_chars(b, b + it->second.size(), v).ec == std::errc() && v > 0)
                m_out.topLevel(key, std::to_string(v));
        };
        text("CpuDescription", "host_cpu");
        number("CpuCores", "host_cpu_cores");
        text("OsDescription", "host_os");
        text("Hostname", "hostname");
        text("NvDriverVersion", "gpu_driver_version");
        number("CudaDriverVersion", "cuda_driver_version");
        return {};
    }

    base::Status readNames() {
        auto s = query("PROCESSES", {"pid", "name"},
                       [&](const SqliteRow& r) { m_processNames[r.integer(0)] = r.text(1); });
        if (!s) return s;
        return query("ThreadNames", {"globalTid", "nameId"}, [&](const SqliteRow& r) {
            m_threadNames[{pidOf(r.integer(0)), tidOf(r.integer(0))}] = str(r.integer(1));
        });
    }

    /// The Kineto correlation of a (process, correlationId) pair.
    uint32_t correlation(int64_t pid, int64_t id) {
        const auto [it, added] =
            m_correlations.try_emplace({pid, id}, static_cast<uint32_t>(m_correlations.size() + 1));
        return it->second;
    }

    /// The GPU of a row: TARGET_INFO_GPU's id for the process's CUDA ordinal, else the ordinal.
    int64_t gpu(int64_t pid, int64_t ordinal) {
        const auto it = m_gpuOf.find({pid, ordinal});
        const int64_t g = it == m_gpuOf.end() ? ordinal : it->second;
        m_gpuUsers[g].insert(pid);
        return g;
    }

    void cpuRow(int64_t pid, int64_t tid) { m_cpuUsed.insert({pid, tid}); }

    base::Status readRuntime() {
        lacks("CUPTI_ACTIVITY_KIND_RUNTIME", "no CUDA runtime or driver calls were traced, so "
                                             "no GPU work links to the call that launched it");
        return query(
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            {"start", "end", "eventClass", "globalTid", "correlationId", "nameId", "returnValue"},
            [&](const SqliteRow& r) {
                const int64_t pid = pidOf(r.integer(3)), tid = tidOf(r.integer(3));
                const std::string_view raw = str(r.integer(5));
                const std::string_view name = apiName(raw);
                const bool driver =
                    label(m_eventClasses, r.integer(2)).find("driver") != std::string_view::npos ||
                    (m_eventClasses.empty() && name.starts_with("cu") && !name.starts_with("cuda"));
                const uint32_t c = correlation(pid, r.integer(4));
                m_callName[c] = name;
                cpuRow(pid, tid);
                m_out.slice(driver ? "cuda_driver" : "cuda_runtime", name, pid, tid, r.integer(0),
                            r.integer(1) - r.integer(0), [&](base::JsonWriter& a) {
                                a.key("correlation").value(c);
                                if (raw != name) a.key("nsys name").value(raw);
                                if (!r.isNull(6)) a.key("return value").value(r.integer(6));
                            });
            });
    }

    void gpuIds(base::JsonWriter& a, int64_t device, int64_t stream, uint32_t corr,
                const SqliteRow& r, int contextColumn) {
        a.key("device").value(device);
        a.key("stream").value(stream);
        a.key("correlation").value(corr);
        if (!r.isNull(contextColumn)) a.key("context").value(r.integer(contextColumn));
    }

    base::Status readGpuWork() {
        (void)lacks("CUPTI_ACTIVITY_KIND_KERNEL", "no kernels were traced");
        auto s =
            query("CUPTI_ACTIVITY_KIND_KERNEL",
                  {"start",
                   "end",
                   "deviceId",
                   "streamId",
                   "correlationId",
                   "globalPid",
                   "demangledName",
                   "shortName",
                   "mangledName",
                   "contextId",
                   "gridX",
                   "gridY",
                   "gridZ",
                   "blockX",
                   "blockY",
                   "blockZ",
                   "registersPerThread",
                   "staticSharedMemory",
                   "dynamicSharedMemory",
                   "graphId",
                   "graphNodeId"},
                  [&](const SqliteRow& r) {
                      const int64_t pid = pidOf(r.integer(5));
                      const int64_t dev = gpu(pid, r.integer(2)), stream = r.integer(3);
                      std::string_view name = str(r.integer(6));
                      if (name.empty()) name = str(r.integer(7));
                      if (name.empty()) name = str(r.integer(8));
                      m_streams.insert({dev, stream});
                      const uint32_t c = correlation(pid, r.integer(4));
                      m_out.slice("kernel", name, dev, stream, r.integer(0),
                                  r.integer(1) - r.integer(0), [&](base::JsonWriter& a) {
                                      gpuIds(a, dev, stream, c, r, 9);
                                      a.key("grid").beginArray();
                                      for (int i = 10; i < 13; ++i) a.value(r.integer(i, 1));
                                      a.endArray().key("block").beginArray();
                                      for (int i = 13; i < 16; ++i) a.value(r.integer(i, 1));
                                      a.endArray();
                                      a.key("registers per thread").value(r.integer(16));
                                      a.key("shared memory").value(r.integer(17) + r.integer(18));
                                      if (!r.isNull(19)) a.key("graph id").value(r.integer(19));
                                      if (!r.isNull(20))
                                          a.key("graph node id").value(r.integer(20));
                                  });
                  });
        if (!s) return s;
        s = query("CUPTI_ACTIVITY_KIND_MEMCPY",
                  {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes",
                   "copyKind", "srcKind", "dstKind", "contextId"},
                  [&](const SqliteRow& r) {
                      const int64_t pid = pidOf(r.integer(5));
                      const int64_t dev = gpu(pid, r.integer(2)), stream = r.integer(3);
                      std::string name =
                          "Memcpy " + copyDirection(label(m_copyKinds, r.integer(7), true));
                      const std::string_view src = memoryKind(label(m_memKinds, r.integer(8)));
                      const std::string_view dst = memoryKind(label(m_memKinds, r.integer(9)));
                      if (!src.empty() && !dst.empty())
                          name += " (" + std::string(src) + " -> " + std::string(dst) + ")";
                      m_streams.insert({dev, stream});
                      const uint32_t c = correlation(pid, r.integer(4));
                      m_out.slice("gpu_memcpy", name, dev, stream, r.integer(0),
                                  r.integer(1) - r.integer(0), [&](base::JsonWriter& a) {
                                      gpuIds(a, dev, stream, c, r, 10);
                                      a.key("bytes").value(r.integer(6));
                                  });
                  });
        if (!s) return s;
        return query("CUPTI_ACTIVITY_KIND_MEMSET",
                     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid", "bytes",
                      "memKind", "value", "contextId"},
                     [&](const SqliteRow& r) {
                         const int64_t pid = pidOf(r.integer(5));
                         const int64_t dev = gpu(pid, r.integer(2)), stream = r.integer(3);
                         const std::string_view kind = memoryKind(label(m_memKinds, r.integer(7)));
                         const std::string name =
                             "Memset (" + std::string(kind.empty() ? "Device" : kind) + ")";
                         m_streams.insert({dev, stream});
                         const uint32_t c = correlation(pid, r.integer(4));
                         m_out.slice("gpu_memset", name, dev, stream, r.integer(0),
                                     r.integer(1) - r.integer(0), [&](base::JsonWriter& a) {
                                         gpuIds(a, dev, stream, c, r, 9);
                                         a.key("bytes").value(r.integer(6));
                                         a.key("value").value(r.integer(8));
                                     });
                     });
    }

    base::Status readSync() {
        return query("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
                      "syncType", "contextId"},
                     [&](const SqliteRow& r) {
                         const int64_t pid = pidOf(r.integer(5));
                         const int64_t dev = gpu(pid, r.integer(2));
                         const int64_t raw = r.integer(3, kNoStream);
                         const int64_t stream = raw == kNoStream ? -1 : raw;
                         const uint32_t c = correlation(pid, r.integer(4));
                         const auto call = m_callName.find(c);
                         const std::string_view name =
                             syncName(call == m_callName.end() ? std::string_view() : call->second,
                                      label(m_syncTypes, r.integer(6), true));
                         if (stream >= 0) m_streams.insert({dev, stream});
                         m_out.slice("cuda_sync", name, dev, stream < 0 ? 0 : stream, r.integer(0),
                                     r.integer(1) - r.integer(0), [&](base::JsonWriter& a) {
                                         gpuIds(a, dev, stream, c, r, 7);
                                         a.key("cuda_sync_kind").value(name);
                                     });
                     });
    }

    base::Status readGraphTrace() {
        return query("CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
                     {"start", "end", "deviceId", "streamId", "correlationId", "globalPid",
                      "graphId", "graphExecId", "contextId"},
                     [&](const SqliteRow& r) {
                         const int64_t pid = pidOf(r.integer(5));
                         const int64_t dev = gpu(pid, r.integer(2)), stream = r.integer(3);
                         m_streams.insert({dev, stream});
                         const uint32_t c = correlation(pid, r.integer(4));
                         const std::string name = "CUDA graph " + std::to_string(r.integer(6)) +
                                                  " (whole graph: nodes not traced)";
                         m_out.slice("kernel", name, dev, stream, r.integer(0),
                                     r.integer(1) - r.integer(0), [&](base::JsonWriter& a) {
                                         gpuIds(a, dev, stream, c, r, 8);
                                         a.key("graph id").value(r.integer(6));
                                         a.key("graph exec id").value(r.integer(7));
                                         a.key("graph trace").value(true);
                                     });
                         ++m_graphRows;
                     });
    }

    base::Status readNvtx() {
        (void)lacks("NVTX_EVENTS", "no NVTX ranges (nsys -t nvtx; with --pytorch=autograd-nvtx "
                                   "PyTorch's operators are NVTX ranges)");
        return query(
            "NVTX_EVENTS", {"start", "end", "eventType", "globalTid", "text", "textId", "domainId"},
            [&](const SqliteRow& r) {
                const std::string_view type = label(m_eventTypes, r.integer(2), true);
                const bool range = type == "NvtxPushPopRange" || type == "NvtxStartEndRange";
                const bool mark = type == "NvtxMark";
                if (!range && !mark) {
                    ++m_nvtxOther;
                    return;
                }
                const int64_t pid = pidOf(r.integer(3)), tid = tidOf(r.integer(3));
                const std::string_view text = r.isNull(4) ? str(r.integer(5)) : r.text(4);
                cpuRow(pid, tid);
                if (mark || r.isNull(1)) {
                    m_out.instant("user_annotation", text, pid, tid, r.integer(0));
                    return;
                }
                const AutogradRange op = autogradRange(text);
                m_out.slice(op.is ? "cpu_op" : "user_annotation", op.is ? op.op : text, pid, tid,
                            r.integer(0), r.integer(1) - r.integer(0), [&](base::JsonWriter& a) {
                                if (op.is) a.key("nvtx").value(text);
                                if (op.seq >= 0) a.key("Sequence number").value(op.seq);
                                if (!op.sizes.empty()) a.key("Input Dims").raw(op.sizes);
                                if (!r.isNull(6) && r.integer(6))
                                    a.key("nvtx domain").value(r.integer(6));
                            });
            });
    }

    base::Status readOsrt() {
        return query("OSRT_API", {"start", "end", "globalTid", "nameId"}, [&](const SqliteRow& r) {
            const int64_t pid = pidOf(r.integer(2)), tid = tidOf(r.integer(2));
            cpuRow(pid, tid);
            m_out.slice("os_runtime", str(r.integer(3)), pid, tid, r.integer(0),
                        r.integer(1) - r.integer(0));
        });
    }

    /// Several processes that ran GPU work, each on GPUs of its own (a job's ranks on one
    /// node): each process and its GPUs named "rank N", N in pid order, so that they are read
    /// as the ranks of one file (ranks_in_one_file.h). The export does not say the job's ranks,
    /// and a note says so; processes sharing a GPU stay one trace.
    std::map<int64_t, int64_t> ranksByPid() {
        std::map<int64_t, int64_t> rank; // pid -> rank
        for (const auto& [g, users] : m_gpuUsers)
            for (const int64_t pid : users) rank.emplace(pid, 0);
        if (rank.size() < 2) return {};
        for (const auto& [g, users] : m_gpuUsers)
            if (users.size() > 1) {
                std::string pids;
                for (const int64_t pid : users)
                    pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
                m_out.note(DiagnosticKind::SourceLacks,
                           "processes " + pids + " all ran work on GPU " + std::to_string(g) +
                               ": read as one trace, not as ranks");
                return {};
            }
        int64_t n = 0;
        std::string pids;
        for (auto& [pid, r] : rank) {
            r = n++;
            pids += (pids.empty() ? "pid " : ", pid ") + std::to_string(pid) + " rank " +
                    std::to_string(r);
        }
        m_out.note(DiagnosticKind::SourceLacks,
                   std::to_string(rank.size()) +
                       " processes ran GPU work, each on GPUs of its own: read as ranks "
                       "numbered in pid order (" +
                       pids + "); the export does not say the job's ranks");
        return rank;
    }

    void writeNames() {
        const std::map<int64_t, int64_t> rank = ranksByPid();
        auto ofRank = [&](int64_t pid) {
            const auto it = rank.find(pid);
            return it == rank.end() ? std::string() : " · rank " + std::to_string(it->second);
        };
        std::set<int64_t> pids;
        for (const auto& [pid, tid] : m_cpuUsed) pids.insert(pid);
        for (const int64_t pid : pids) {
            const auto it = m_processNames.find(pid);
            m_out.processName(
                pid, (it == m_processNames.end() ? "process " + std::to_string(pid) : it->second) +
                         ofRank(pid));
        }
        for (const auto& key : m_cpuUsed) {
            const auto it = m_threadNames.find(key);
            if (it != m_threadNames.end()) m_out.threadName(key.first, key.second, it->second);
        }
        for (const auto& [g, users] : m_gpuUsers) {
            const auto it = m_gpuNames.find(g);
            std::string label = "GPU " + std::to_string(g);
            m_out.processName(g,
                              (it == m_gpuNames.end() ? label : label + " " + it->second) +
                                  (users.size() == 1 ? ofRank(*users.begin()) : std::string()),
                              label);
        }
        for (const auto& [dev, stream] : m_streams)
            m_out.threadName(dev, stream, "stream " + std::to_string(stream));
    }

    void noteSkipped() {
        if (m_nvtxOther)
            m_out.note(DiagnosticKind::SourceNotRead,
                       std::to_string(m_nvtxOther) +
                           " NVTX_EVENTS rows that are neither ranges nor marks (domains, "
                           "categories, counters)");
        if (m_graphRows)
            m_out.note(DiagnosticKind::SourceLacks,
                       std::to_string(m_graphRows) +
                           " CUDA graph executions traced as whole graphs "
                           "(--cuda-graph-trace=graph): their kernels are not in the file, "
                           "each execution is one GPU slice");
        for (const char* table :
             {"CUDA_GRAPH_EVENTS", "SCHED_EVENTS", "CUPTI_ACTIVITY_KIND_CUDA_EVENT",
              "COMPOSITE_EVENTS", "GPU_METRICS", "CUDA_GPU_MEMORY_USAGE_EVENTS",
              "NVTX_PAYLOAD_SCHEMAS", "MPI_P2P_EVENTS", "NCCL_EVENTS"}) {
            uint64_t rows = 0;
            if (!m_db.hasTable(table)) continue;
            (void)m_db.each("SELECT count(*) FROM \"" + std::string(table) + "\"",
                            [&](const SqliteRow& r) { rows = uint64_t(r.integer(0)); });
            if (rows)
                m_out.note(DiagnosticKind::SourceNotRead,
                           std::to_string(rows) + " rows of " + table);
        }
    }

    const SqliteDb& m_db;
    KinetoText& m_out;
    StringIds str; // the file's strings by id
    std::map<std::string, std::string> m_meta;
    std::map<int64_t, std::pair<std::string, std::string>> m_copyKinds, m_memKinds, m_syncTypes,
        m_eventClasses, m_eventTypes;
    std::map<int64_t, std::string> m_gpuNames, m_processNames;
    std::map<std::pair<int64_t, int64_t>, int64_t> m_gpuOf;
    std::map<std::pair<int64_t, int64_t>, std::string> m_threadNames;
    std::map<std::pair<int64_t, int64_t>, uint32_t> m_correlations;
    std::unordered_map<uint32_t, std::string> m_callName;
    std::map<int64_t, std::set<int64_t>> m_gpuUsers; // GPU -> the processes that ran work on it
    std::set<std::pair<int64_t, int64_t>> m_cpuUsed, m_streams;
    uint64_t m_nvtxOther = 0, m_graphRows = 0;
};

bool isNsightSqlite(const ContentProbe& p) {
    if (!looksSqlite(p.content())) return false;
    const SqliteSchema& s = p.sqlite();
    return s.has("CUPTI_ACTIVITY_KIND_*") || s.has("TARGET_INFO_*") ||
           (s.has("NVTX_EVENTS") && s.has("StringIds"));
}

Result<KinetoText> translateNsight(const fs::path& path, const ImportOptions& options) {
    auto db = openProfilerDatabase(path, options);
    if (!db) return db.error();
    db->setCancel(options.cancel);
    KinetoText text;
    NsightReader reader(db.value(), text);
    if (auto s = reader.read(); !s) return s.error();
    if (text.events() == 0)
        return Error{ErrorKind::InvalidStructure,
                     "this Nsight Systems SQLite export holds no kernels, copies, CUDA calls, NVTX "
                     "ranges or OS runtime calls: nothing to show"};
    text.setFormatName("Nsight Systems SQLite export (" + reader.producer() + ")");
    return text;
}

} // namespace

extern const FileFormat kFormatNsightSqlite;
const FileFormat kFormatNsightSqlite{InputFormat::NsightSqlite,
                                     "Nsight Systems SQLite export",
                                     isNsightSqlite,
                                     importVia<translateNsight>,
                                     {},
                                     {},
                                     nullptr,
                                     kinetoTextVia<translateNsight>};

} // namespace stallscope::importers
