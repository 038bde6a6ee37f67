// Collective communication kernels by type (docs/analysis.md "Collectives"): what each
// kernel moved, read from the kernel's NCCL arguments (Kineto >= 2.2 writes "Collective
// name", "In msg nelems", "Out msg nelems", "dtype", "Group size" on them), else from the
// `record_param_comms` operator or the `nccl:<collective>` range around its launch (older
// traces: its "Input Dims" and "Input type"), and bandwidths as nccl-tests defines them.
#include "arg_values.h"
#include "stats_tables.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace stallscope::analysis {

namespace {

using namespace detail;

/// Collective types and their bus-bandwidth factors, after nccl-tests doc/PERFORMANCE.md
/// (github.com/NVIDIA/nccl-tests): busBw = algBw * factor(n).
struct CollectiveType {
    std::string_view name; // canonical: lower case, no separators
    int kind;              // 0: 2(n-1)/n, 1: (n-1)/n, 2: 1
};
constexpr CollectiveType kTypes[] = {
    {"allreduce", 0}, {"reducescatter", 1}, {"allgather", 1}, {"alltoall", 1}, {"broadcast", 2},
    {"reduce", 2},    {"sendrecv", 2},      {"send", 2},      {"recv", 2},
};

/// Element sizes of the dtype spellings PyTorch writes ("Float", "c10::BFloat16", "float")
/// and NCCL kernel names use ("f32", "bf16", "int8_t").
struct DtypeSize {
    std::string_view name; // lower case
    int bytes;
};
constexpr DtypeSize kDtypes[] = {
    {"float", 4},
    {"float32", 4},
    {"f32", 4},
    {"int", 4},
    {"int32", 4},
    {"i32", 4},
    {"u32", 4},
    {"uint32", 4},
    {"half", 2},
    {"float16", 2},
    {"f16", 2},
    {"bfloat16", 2},
    {"bf16", 2},
    {"c10::half", 2},
    {"c10::bfloat16", 2},
    {"short", 2},
    {"int16", 2},
    {"double", 8},
    {"float64", 8},
    {"f64", 8},
    {"long", 8},
    {"int64", 8},
    {"i64", 8},
    {"u64", 8},
    {"long int", 8},
    {"byte", 1},
    {"char", 1},
    {"bool", 1},
    {"int8", 1},
    {"uint8", 1},
    {"i8", 1},
    {"u8", 1},
    {"int8_t", 1},
    {"uint8_t", 1},
    {"unsigned char", 1},
    {"signed char", 1},
    {"float8_e4m3fn", 1},
    {"float8_e5m2", 1},
    {"f8e4m3", 1},
    {"f8e5m2", 1},
};

std::string lower(std::string_view v) {
    std::string out(v);
    for (char& ch : out) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

int dtypeBytes(std::string_view dtype) {
    const std::string l = lower(dtype);
    for (const DtypeSize& d : kDtypes)
        if (d.name == l) return d.bytes;
    return 0;
}

/// "all_reduce", "nccl:all_to_all", "_allgather_base", "reduce_scatter_tensor" -> the
/// canonical type; empty when it names none.
std::string canonicalType(std::string_view written) {
    std::string n;
    for (char ch : lower(written))
        if (std::isalnum(static_cast<unsigned char>(ch))) n += ch;
    if (n.rfind("nccl", 0) == 0) n.erase(0, 4);
    // Longest names first: "reducescatter" before "reduce", "sendrecv" before "send".
    static constexpr std::string_view kOrder[] = {"allreduce", "reducescatter", "allgather",
                                                  "alltoall",  "broadcast",     "sendrecv",
                                                  "reduce",    "send",          "recv"};
    for (std::string_view t : kOrder)
        if (n.find(t) != std::string::npos) return std::string(t);
    return {};
}

/// What an NCCL/RCCL kernel's name says: "ncclKernel_AllReduce_RING_LL_Sum_float",
/// "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL" -> type, "RING LL", dtype.
struct KernelName {
    std::string type, algorithm, dtype;
};

KernelName parseKernelName(std::string_view name) {
    KernelName k;
    name = name.substr(0, name.find('('));
    for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_"}) {
        if (name.rfind(prefix, 0) != 0) continue;
        name.remove_prefix(prefix.size());
        std::vector<std::string_view> tok;
        for (size_t at = 0; at <= name.size();) {
            const size_t us = std::min(name.find('_', at), name.size());
            tok.push_back(name.substr(at, us - at));
            at = us + 1;
        }
        if (tok.empty()) return k;
        k.type = canonicalType(tok[0]);
        static constexpr std::string_view kAlgos[] = {"RING", "TREE", "COLLNET", "NVLS", "PAT"};
        static constexpr std::string_view kJoin[] = {"DIRECT", "CHAIN", "TREE"};
        static constexpr std::string_view kProtos[] = {"LL", "LL128", "SIMPLE"};
        std::string algo, proto;
        for (size_t i = 1; i < tok.size(); ++i) {
            if (std::find(std::begin(kAlgos), std::end(kAlgos), tok[i]) != std::end(kAlgos)) {
                algo = std::string(tok[i]);
                if (i + 1 < tok.size() && (tok[i] == "COLLNET" || tok[i] == "NVLS") &&
                    std::find(std::begin(kJoin), std::end(kJoin), tok[i + 1]) != std::end(kJoin))
                    algo += "_" + std::string(tok[++i]);
            } else if (std::find(std::begin(kProtos), std::end(kProtos), tok[i]) !=
                       std::end(kProtos)) {
                proto = std::string(tok[i]);
            } else if (i + 1 == tok.size() || dtypeBytes(tok[i]) > 0) {
                if (dtypeBytes(tok[i]) > 0) k.dtype = std::string(tok[i]);
            }
        }
        k.algorithm = algo.empty() ? proto : proto.empty() ? algo : algo + " " + proto;
        return k;
    }
    return k;
}

/// What one call moved, from arguments.
struct Message {
    std::string type, dtype;
    int64_t inElems = -1, outElems = -1;
    int32_t group = -1;
};

void readNcclArgs(const std::vector<model::ArgValue>& args, Message& m) {
    for (const auto& a : args) {
        if (a.key == "Collective name") {
            if (auto v = argString(a.json); v && m.type.empty()) m.type = canonicalType(*v);
        } else if (a.key == "In msg nelems") {
            if (auto v = argInteger(a.json)) m.inElems = *v;
        } else if (a.key == "Out msg nelems") {
            if (auto v = argInteger(a.json)) m.outElems = *v;
        } else if (a.key == "dtype") {
            if (auto v = argString(a.json)) m.dtype = *v;
        } else if (a.key == "Group size") {
            if (auto v = argInteger(a.json); v && *v > 0 && *v < (1 << 24)) m.group = int32_t(*v);
        }
    }
}

/// An older trace's `nccl:all_reduce` range: the first input's elements and type.
void readRangeArgs(const std::vector<model::ArgValue>& args, Message& m) {
    for (const auto& a : args) {
        if (a.key == "Input Dims" || a.key == "Input dims") {
            const auto dims = parseDims(a.json);
            if (!dims.empty() && !dims[0].empty()) {
                int64_t n = 1;
                for (int64_t d : dims[0])
                    n = d > 0 && n < (int64_t(1) << 50) / d ? n * d : (d == 0 ? 0 : n);
                m.inElems = n;
            }
        } else if (a.key == "Input type") {
            const auto first = a.json.find('"');
            const auto end = first == std::string::npos ? first : a.json.find('"', first + 1);
            if (end != std::string::npos && m.dtype.empty())
                m.dtype = a.json.substr(first + 1, end - first - 1);
        }
    }
}

Message messageOf(const model::Trace& t, uint32_t kernel, const KernelName& kn) {
    Message m;
    std::vector<model::ArgValue> args;
    std::string error;
    if (t.sliceArgs(model::SliceId(kernel), args, error)) readNcclArgs(args, m);
    if (m.inElems < 0 && m.outElems < 0) {
        // The operator or range around the launch (innermost first).
        const model::SliceTable& s = t.slices();
        const model::SliceId launch = t.launchOf(model::SliceId(kernel));
        for (model::SliceId p = launch.valid() ? s.parent[launch.index()] : model::SliceId();
             p.valid() && m.inElems < 0 && m.outElems < 0; p = s.parent[p.index()]) {
            const std::string_view n = t.str(s.name[p.index()]);
            const bool comms = n == "record_param_comms", range = n.rfind("nccl:", 0) == 0;
            if (!comms && !range) continue;
            args.clear();
            if (!t.sliceArgs(p, args, error)) continue;
            Message around;
            readNcclArgs(args, around);
            if (range) {
                readRangeArgs(args, around);
                if (around.type.empty()) around.type = canonicalType(n);
            }
            if (m.type.empty()) m.type = around.type;
            if (m.dtype.empty()) m.dtype = around.dtype;
            if (m.group < 0) m.group = around.group;
            m.inElems = around.inElems;
            m.outElems = around.outElems;
        }
    }
    if (m.type.empty()) m.type = kn.type;
    if (m.dtype.empty()) m.dtype = kn.dtype;
    return m;
}

} // namespace

double busBandwidthFactor(std::string_view type, int32_t n) {
    if (n <= 0) return -1;
    for (const CollectiveType& c : kTypes) {
        if (c.name != type) continue;
        if (c.kind == 2) return 1.0;
        const double f = double(n - 1) / double(n);
        return c.kind == 0 ? 2 * f : f;
    }
    return -1;
}

namespace detail {

std::vector<CollectiveStat> collectiveStats(const model::Trace& t,
                                            const std::vector<uint32_t>& kernels) {
    const model::SliceTable& s = t.slices();
    const int32_t world = t.metadata().distributed.worldSize;
    std::map<std::string, CollectiveStat> byType;
    std::map<std::string, std::set<std::string>> algos;
    std::map<std::string, std::set<std::string>> dtypes;
    std::map<std::string, std::set<int32_t>> groups;
    std::map<uint32_t, KernelName> names; // by name id
    for (uint32_t w : kernels) {
        auto [it, fresh] = names.try_emplace(s.name[w].value);
        if (fresh) it->second = parseKernelName(t.str(s.name[w]));
        const KernelName& kn = it->second;
        const Message m = messageOf(t, w, kn);
        const std::string type = m.type.empty() ? std::string("unknown") : m.type;
        CollectiveStat& c = byType[type];
        if (c.count == 0) c.type = type, c.example = model::SliceId(w);
        ++c.count;
        c.totalNs = model::satAdd(c.totalNs, s.dur[w]);
        if (!kn.algorithm.empty()) algos[type].insert(kn.algorithm);
        if (!m.dtype.empty()) dtypes[type].insert(m.dtype);
        if (m.group > 0) groups[type].insert(m.group);
        const int size = dtypeBytes(m.dtype);
        const int64_t elems = std::max(m.inElems, m.outElems);
        if (size > 0 && elems >= 0) {
            const int64_t bytes = elems * size;
            c.minBytes = c.sizedCount == 0 ? bytes : std::min(c.minBytes, bytes);
            c.maxBytes = std::max(c.maxBytes, bytes);
            ++c.sizedCount;
            c.sizedNs = model::satAdd(c.sizedNs, s.dur[w]);
            c.bytes = model::satAdd(c.bytes, bytes);
        }
    }
    std::vector<CollectiveStat> out;
    for (auto& [type, c] : byType) {
        std::string a;
        for (const std::string& x : algos[type]) a += (a.empty() ? "" : ", ") + x;
        c.algorithms = a;
        const auto& d = dtypes[type];
        c.dtype = d.size() == 1 ? *d.begin() : d.empty() ? std::string() : std::string("mixed");
        const auto& g = groups[type];
        if (g.size() == 1) {
            c.groupSize = *g.begin();
        } else if (g.size() > 1) {
            c.groupSize = 0;
        } else if (world > 0) {
            c.groupSize = world;
            c.groupFromWorld = true;
        }
        if (c.sizedNs > 0) {
            c.algGbps = double(c.bytes) / double(c.sizedNs);
            const double f = busBandwidthFactor(c.type, c.groupSize);
            if (f > 0) c.busGbps = c.algGbps * f;
        }
        out.push_back(std::move(c));
    }
    std::sort(out.begin(), out.end(), [](const CollectiveStat& a, const CollectiveStat& b) {
        return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.type < b.type;
    });
    return out;
}

} // namespace detail
} // namespace stallscope::analysis
