// rocprofv3 JSON (`rocprofv3 --output-format json`), plain or gzip: one object whose key
// "rocprofiler-sdk-tool" holds one entry per profiled process. Each record is written as
// the Kineto event that means the same (kineto_text.h):
//   buffer_records.kernel_dispatch -> kernel on pid = the agent's gpu_index, tid = the HIP
//     stream (stream_id.handle), named from kernel_symbols (formatted, else demangled);
//   buffer_records.memory_copy -> gpu_memcpy "Memcpy HtoD" on the GPU agent's row;
//   buffer_records.hip_api -> cuda_runtime, marker_api (roctx) -> user_annotation, on the
//     process's pid and the record's thread_id, named through strings.buffer_records
//     [kind].operations[operation];
//   agents (GPU) -> deviceProperties (product name, compute units as SMs, wavefront size).
// correlation_id.internal links calls and GPU work. Other record kinds (hsa_api, rccl_api,
// memory_allocation, scratch_memory, ...) are counted, not read. Times are nanoseconds
// (rocprofiler's timestamp API). Notes: tests/tools/foreign_formats_notes.md.
#include "byte_stream.h"
#include "content_signatures.h"
#include "kineto_text.h"

#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/input_format.h"

#include <simdjson.h>

#include <map>
#include <set>
#include <unordered_map>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

using model::DiagnosticKind;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

constexpr uint64_t kMaxJsonBytes = uint64_t(4) << 30;

int64_t intAt(element e, std::string_view key, int64_t ifMissing = 0) {
    int64_t v = ifMissing;
    if (e[key].get_int64().get(v)) {
        uint64_t u = 0;
        if (!e[key].get_uint64().get(u)) return static_cast<int64_t>(u & INT64_MAX);
        return ifMissing;
    }
    return v;
}

/// e[a][b] as an integer ("agent_id": {"handle": 7}).
int64_t handleAt(element e, std::string_view a, std::string_view b = "handle") {
    element inner;
    if (e[a].get(inner)) return -1;
    return intAt(inner, b, -1);
}

std::string_view textAt(element e, std::string_view key) {
    std::string_view v;
    return e[key].get_string().get(v) ? std::string_view() : v;
}

/// "MEMORY_COPY_HOST_TO_DEVICE" -> "HtoD"; "" when not a copy direction.
std::string copyDirection(std::string_view op) {
    constexpr std::string_view prefix = "MEMORY_COPY_";
    if (!op.starts_with(prefix)) return "";
    op.remove_prefix(prefix.size());
    const size_t to = op.find("_TO_");
    if (to == std::string_view::npos || to == 0 || to + 4 >= op.size()) return "";
    return std::string(1, op[0]) + "to" + std::string(1, op[to + 4]);
}

class RocprofReader {
public:
    RocprofReader(element entry, KinetoText& out) : m_entry(entry), m_out(out) {}

    base::Status read() {
        element md;
        if (!m_entry["metadata"].get(md)) {
            m_pid = intAt(md, "pid", 0);
            readHost(md);
        }
        readAgents();
        readSymbols();
        readOperationNames();
        object records;
        if (m_entry["buffer_records"].get(records))
            return Error{ErrorKind::InvalidStructure,
                         "a rocprofv3 JSON entry without buffer_records"};
        for (auto [key, value] : records) {
            array rows;
            if (value.get(rows)) continue;
            if (key == "kernel_dispatch")
                readDispatches(rows);
            else if (key == "memory_copy")
                readCopies(rows);
            else if (key == "hip_api")
                readCalls(rows, "cuda_runtime");
            else if (key == "marker_api")
                readCalls(rows, "user_annotation");
            else if (rows.size())
                m_out.note(DiagnosticKind::SourceNotRead,
                           std::to_string(rows.size()) + " " + std::string(key) + " records");
        }
        writeNames();
        return {};
    }

private:
    /// The recording machine as top-level keys of the Kineto form (docs/formats.md "Top-level
    /// keys"): metadata.node's host name and kernel, the CPU agents' product name.
    void readHost(element md) {
        auto text = [&](std::string_view key, std::string_view value) {
            if (value.empty()) return;
            base::JsonWriter w;
            w.value(value);
            m_out.topLevel(key, w.str());
        };
        element node;
        if (!md["node"].get(node)) {
            text("hostname", textAt(node, "hostname"));
            const std::string_view sys = textAt(node, "system_name"), rel = textAt(node, "release");
            if (!sys.empty() && !rel.empty())
                text("host_os", std::string(sys) + " " + std::string(rel));
        }
        array agents;
        if (m_entry["agents"].get(agents)) return;
        std::string cpu;
        int sockets = 0; // CPU agents: one per NUMA node (the name: a count of them)
        for (element a : agents)
            if (intAt(a, "type") == 1) {
                const std::string_view name = textAt(a, "product_name");
                if (sockets++ == 0)
                    cpu = name;
                else if (cpu != name)
                    cpu.clear(); // different CPUs: not said as one
            }
        if (sockets > 1 && !cpu.empty()) cpu += " (" + std::to_string(sockets) + " NUMA nodes)";
        text("host_cpu", cpu);
    }

    void readAgents() {
        array agents;
        if (m_entry["agents"].get(agents)) return;
        for (element a : agents) {
            if (intAt(a, "type") != 2) continue; // 1 CPU, 2 GPU
            const int64_t index = intAt(a, "gpu_index", -1);
            if (index < 0) continue;
            m_gpuOfAgent[handleAt(a, "id")] = index;
            model::DeviceProperties d;
            d.id = static_cast<int32_t>(index);
            d.name = textAt(a, "product_name");
            if (d.name.empty()) d.name = textAt(a, "name");
            d.numSms = static_cast<int32_t>(intAt(a, "cu_count"));
            d.warpSize = static_cast<int32_t>(intAt(a, "wave_front_size"));
            d.maxThreadsPerBlock = static_cast<int32_t>(intAt(a, "workgroup_max_size"));
            m_gpuNames[index] = d.name;
            m_out.device(d);
        }
    }

    void readSymbols() {
        array symbols;
        if (m_entry["kernel_symbols"].get(symbols)) return;
        for (element s : symbols) {
            std::string_view name = textAt(s, "formatted_kernel_name");
            if (name.empty()) name = textAt(s, "demangled_kernel_name");
            if (name.empty()) name = textAt(s, "kernel_name");
            m_kernelNames[intAt(s, "kernel_id", -1)] = name;
        }
    }

    /// strings.buffer_records[kind].operations[operation]: the record's name.
    void readOperationNames() {
        array kinds;
        if (m_entry["strings"]["buffer_records"].get(kinds)) return;
        for (element k : kinds) {
            std::vector<std::string_view> ops;
            array names;
            if (!k["operations"].get(names))
                for (element n : names) {
                    std::string_view s;
                    ops.push_back(n.get_string().get(s) ? std::string_view() : s);
                }
            m_operations.push_back(std::move(ops));
        }
    }

    std::string_view operationName(element r) const {
        const int64_t kind = intAt(r, "kind", -1), op = intAt(r, "operation", -1);
        if (kind < 0 || op < 0 || size_t(kind) >= m_operations.size() ||
            size_t(op) >= m_operations[size_t(kind)].size())
            return {};
        return m_operations[size_t(kind)][size_t(op)];
    }

    int64_t gpu(int64_t agent) {
        const auto it = m_gpuOfAgent.find(agent);
        return it == m_gpuOfAgent.end() ? agent : it->second;
    }

    void readDispatches(array rows) {
        for (element r : rows) {
            element info;
            if (r["dispatch_info"].get(info)) continue;
            const int64_t dev = gpu(handleAt(info, "agent_id"));
            const int64_t stream = std::max<int64_t>(0, handleAt(r, "stream_id"));
            const auto name = m_kernelNames.find(intAt(info, "kernel_id", -1));
            const int64_t start = intAt(r, "start_timestamp"), end = intAt(r, "end_timestamp");
            const int64_t corr = handleAt(r, "correlation_id", "internal");
            m_streams.insert({dev, stream});
            m_out.slice("kernel",
                        name == m_kernelNames.end() ? "(kernel not in kernel_symbols)"
                                                    : name->second,
                        dev, stream, start, end - start, [&](base::JsonWriter& a) {
                            a.key("device").value(dev);
                            a.key("stream").value(stream);
                            if (corr > 0) a.key("correlation").value(corr);
                            a.key("queue").value(handleAt(info, "queue_id"));
                            a.key("grid").beginArray();
                            for (const char* d : {"x", "y", "z"})
                                a.value(handleAt(info, "grid_size", d));
                            a.endArray().key("block").beginArray();
                            for (const char* d : {"x", "y", "z"})
                                a.value(handleAt(info, "workgroup_size", d));
                            a.endArray();
                        });
        }
    }

    void readCopies(array rows) {
        for (element r : rows) {
            const std::string direction = copyDirection(operationName(r));
            const int64_t dst = handleAt(r, "dst_agent_id"), src = handleAt(r, "src_agent_id");
            const int64_t dev = m_gpuOfAgent.count(dst) ? gpu(dst) : gpu(src);
            const int64_t start = intAt(r, "start_timestamp"), end = intAt(r, "end_timestamp");
            const int64_t corr = handleAt(r, "correlation_id", "internal");
            const int64_t stream = std::max<int64_t>(0, handleAt(r, "stream_id"));
            m_streams.insert({dev, stream});
            m_out.slice("gpu_memcpy", "Memcpy " + (direction.empty() ? "?" : direction), dev,
                        stream, start, end - start, [&](base::JsonWriter& a) {
                            a.key("device").value(dev);
                            a.key("stream").value(stream);
                            if (corr > 0) a.key("correlation").value(corr);
                            a.key("bytes").value(intAt(r, "bytes"));
                        });
        }
    }

    void readCalls(array rows, std::string_view cat) {
        for (element r : rows) {
            const int64_t tid = intAt(r, "thread_id");
            const int64_t start = intAt(r, "start_timestamp"), end = intAt(r, "end_timestamp");
            const int64_t corr = handleAt(r, "correlation_id", "internal");
            std::string_view name = operationName(r);
            if (cat == "user_annotation" && !textAt(r, "message").empty())
                name = textAt(r, "message");
            m_threads.insert(tid);
            m_out.slice(cat, name.empty() ? "(unnamed call)" : name, m_pid, tid, start, end - start,
                        [&](base::JsonWriter& a) {
                            if (corr > 0 && cat == "cuda_runtime") a.key("correlation").value(corr);
                        });
        }
    }

    void writeNames() {
        if (!m_threads.empty()) m_out.processName(m_pid, "process " + std::to_string(m_pid));
        std::set<int64_t> gpus;
        for (const auto& [dev, stream] : m_streams) {
            if (gpus.insert(dev).second) {
                const auto n = m_gpuNames.find(dev);
                const std::string label = "GPU " + std::to_string(dev);
                m_out.processName(dev, n == m_gpuNames.end() ? label : label + " " + n->second,
                                  label);
            }
            m_out.threadName(dev, stream, "stream " + std::to_string(stream));
        }
    }

    element m_entry;
    KinetoText& m_out;
    int64_t m_pid = 0;
    std::unordered_map<int64_t, int64_t> m_gpuOfAgent;
    std::map<int64_t, std::string> m_gpuNames;
    std::unordered_map<int64_t, std::string_view> m_kernelNames;
    std::vector<std::vector<std::string_view>> m_operations;
    std::set<std::pair<int64_t, int64_t>> m_streams;
    std::set<int64_t> m_threads;
};

/// rocprofv3's JSON is one object whose (only) key is "rocprofiler-sdk-tool".
bool isRocprofJson(const ContentProbe& p) {
    return firstObjectKey(p.content()) == "rocprofiler-sdk-tool";
}

Result<KinetoText> translateRocprof(const fs::path& path, const ImportOptions&) {
    auto text = readWholeFile(path.string(), kMaxJsonBytes, "a rocprofv3 JSON");
    if (!text) return text.error();
    simdjson::dom::parser parser;
    element doc;
    const simdjson::padded_string padded(text.value());
    text.value().clear();
    text.value().shrink_to_fit();
    if (auto err = parser.parse(padded).get(doc))
        return Error{ErrorKind::InvalidJson, std::string("a rocprofv3 JSON that does not parse: ") +
                                                 simdjson::error_message(err)};
    array entries;
    if (doc["rocprofiler-sdk-tool"].get(entries))
        return Error{ErrorKind::InvalidStructure,
                     "a rocprofv3 JSON whose \"rocprofiler-sdk-tool\" is not an array"};
    KinetoText out;
    for (element entry : entries)
        if (auto s = RocprofReader(entry, out).read(); !s) return s.error();
    if (out.events() == 0)
        return Error{ErrorKind::InvalidStructure,
                     "this rocprofv3 JSON holds no kernel dispatches, copies, HIP calls or "
                     "markers: nothing to show"};
    if (entries.size() > 1)
        out.note(DiagnosticKind::SourceLacks,
                 std::to_string(entries.size()) +
                     " profiled processes in one file: read as one trace");
    out.setFormatName("rocprofv3 JSON");
    return out;
}

} // namespace

extern const FileFormat kFormatRocprofJson;
const FileFormat kFormatRocprofJson{InputFormat::RocprofJson,
                                    "rocprofv3 JSON",
                                    isRocprofJson,
                                    importVia<translateRocprof>,
                                    {},
                                    {},
                                    nullptr,
                                    kinetoTextVia<translateRocprof>};

} // namespace stallscope::importers
