#include "stallscope/analysis/trace_summary.h"

#include "arg_values.h"

#include <algorithm>
#include <map>

namespace stallscope::analysis {

using namespace model;

bool isProfilerStepName(std::string_view name) {
    constexpr std::string_view kPrefix = "ProfilerStep#";
    if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return false;
    for (char c : name.substr(kPrefix.size()))
        if (c < '0' || c > '9') return false;
    return true;
}

namespace {
/// The recording machine from the top-level keys (Kineto's cuda/hip_driver_version, and the
/// host_* keys the Nsight import writes).
std::string hostText(const model::TraceMetadata& md) {
    std::map<std::string_view, std::string_view> top;
    for (const auto& [k, v] : md.other) top.emplace(k, v);
    auto text = [&](std::string_view key) {
        const auto it = top.find(key);
        return it == top.end() ? std::string() : detail::argString(it->second).value_or("");
    };
    auto number = [&](std::string_view key) {
        const auto it = top.find(key);
        return it == top.end() ? int64_t(-1) : detail::argInteger(it->second).value_or(-1);
    };
    std::vector<std::string> parts;
    std::string cpu = text("host_cpu");
    if (const int64_t cores = number("host_cpu_cores"); cores > 0)
        cpu += (cpu.empty() ? "" : ", ") + std::to_string(cores) + " cores";
    if (!cpu.empty()) parts.push_back(cpu);
    if (std::string os = text("host_os"); !os.empty()) parts.push_back(os);
    if (std::string h = text("hostname"); !h.empty()) parts.push_back("host " + h);
    if (std::string g = text("gpu_driver_version"); !g.empty()) parts.push_back("GPU driver " + g);
    // CUDA's version numbers are 1000 x major + 10 x minor (12080 = 12.8, cudaDriverGetVersion);
    // HIP's 10^7 x major + 10^5 x minor + patch (70051831 = 7.0.51831, HIP_VERSION).
    if (const int64_t v = number("cuda_driver_version"); v > 0)
        parts.push_back("CUDA driver " + std::to_string(v / 1000) + "." +
                        std::to_string(v % 1000 / 10));
    if (const int64_t v = number("hip_driver_version"); v > 0)
        parts.push_back("HIP driver " + std::to_string(v / 10'000'000) + "." +
                        std::to_string(v / 100'000 % 100) + "." + std::to_string(v % 100'000));
    std::string out;
    for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
    return out;
}
} // namespace

TraceSummary summarize(const Trace& t) {
    TraceSummary s;
    const auto& md = t.metadata();
    s.format = md.formatName;
    s.path = md.sourcePath;
    s.compressed = md.compressed;
    s.startNs = t.startNs();
    s.endNs = t.endNs();
    const auto& st = t.importStats();
    s.events = st.entries;
    s.byPhase = st.byPhase;
    s.byCategory = st.byCategory;
    s.inputBytes = st.inputBytes;
    s.textBytes = st.textBytes;
    s.modelBytes = t.memoryBytes();
    s.modelEvents = t.eventCount();
    s.processes = static_cast<uint32_t>(t.processes().size());
    for (const auto& tr : t.tracks()) {
        if (tr.kind == TrackKind::CpuThread) ++s.cpuThreads;
        else if (tr.kind == TrackKind::GpuStream)
            s.gpuStreams += tr.syncOf.valid() ? 0 : 1;
        else ++s.otherTracks;
    }
    if (md.distributed.present) {
        s.rank = md.distributed.rank;
        s.worldSize = md.distributed.worldSize;
        s.backend = md.distributed.backend;
    }

    s.host = hostText(md);

    std::map<int32_t, DeviceSummary> devices;
    for (const auto& d : md.devices) {
        DeviceSummary& ds = devices[d.id];
        ds.device = d.id;
        ds.name = d.name;
        ds.computeMajor = d.computeMajor;
        ds.computeMinor = d.computeMinor;
        ds.numSms = d.numSms;
        ds.totalGlobalMem = d.totalGlobalMem;
        ds.hasProperties = true;
    }
    // GPU work intervals per device, merged across streams.
    std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> intervals;
    const SliceTable& sl = t.slices();
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        const int32_t dev = t.process(tr.process).gpuDevice;
        bool counted = false;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            const EventKind k = sl.kind[i];
            if (!(sl.flags[i] & kSliceFromBeginEnd) && isProfilerStepName(t.str(sl.name[i])))
                ++s.profilerSteps;
            if (!isGpuWork(k)) continue;
            const bool fromX = !(sl.flags[i] & kSliceFromBeginEnd);
            if (fromX) {
                if (k == EventKind::Kernel) ++s.kernels;
                else if (k == EventKind::Memcpy) ++s.memcpys;
                else ++s.memsets;
            }
            DeviceSummary& ds = devices[dev];
            ds.device = dev;
            ds.hasWork = true;
            if (k == EventKind::Kernel) ++ds.kernels;
            else if (k == EventKind::Memcpy) ++ds.memcpys;
            else ++ds.memsets;
            if (!counted) {
                ++ds.streams;
                counted = true;
            }
            intervals[dev].emplace_back(sl.start[i], sl.start[i] + sl.dur[i]);
        }
    }
    for (auto& [dev, iv] : intervals) {
        std::sort(iv.begin(), iv.end());
        DeviceSummary& ds = devices[dev];
        ds.firstNs = iv.front().first;
        int64_t curS = iv.front().first, curE = iv.front().second, busy = 0, last = curE;
        for (size_t i = 1; i < iv.size(); ++i) {
            if (iv[i].first > curE) {
                busy += curE - curS;
                curS = iv[i].first;
                curE = iv[i].second;
            } else {
                curE = std::max(curE, iv[i].second);
            }
            last = std::max(last, iv[i].second);
        }
        busy += curE - curS;
        ds.busyNs = busy;
        ds.lastNs = std::max(last, curE);
    }
    for (auto& [dev, ds] : devices) s.devices.push_back(ds);
    return s;
}

} // namespace stallscope::analysis
