#pragma once
// Builds tiny Kineto-style traces as JSON text for semantics tests, so every test reads
// like the timeline it describes. Times are integer microseconds.
#include "stallscope/importers/importer.h"

#include <memory>
#include <string>
#include <vector>

namespace stallscope::test {

class TraceText {
public:
    TraceText& cpu(const std::string& name, int64_t ts, int64_t dur, int tid = 1, const char* cat = "cpu_op") {
        return add(R"({"ph": "X", "cat": ")" + std::string(cat) + R"(", "name": ")" + name + R"(", "pid": 100, "tid": )" +
                   std::to_string(tid) + ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "}");
    }
    TraceText& annotation(const std::string& name, int64_t ts, int64_t dur, int tid = 1) {
        return cpu(name, ts, dur, tid, "user_annotation");
    }
    TraceText& python(const std::string& name, int64_t ts, int64_t dur, int tid = 1) {
        return cpu(name, ts, dur, tid, "python_function");
    }
    TraceText& step(int n, int64_t ts, int64_t dur, int tid = 1) {
        return annotation("ProfilerStep#" + std::to_string(n), ts, dur, tid);
    }
    TraceText& runtime(const std::string& name, int64_t ts, int64_t dur, int corr, int tid = 1) {
        return add(R"({"ph": "X", "cat": "cuda_runtime", "name": ")" + name + R"(", "pid": 100, "tid": )" +
                   std::to_string(tid) + ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
                   ", \"args\": {\"correlation\": " + std::to_string(corr) + "}}");
    }
    TraceText& kernel(const std::string& name, int64_t ts, int64_t dur, int corr, int stream = 7, int device = 0,
                      double blocksPerSm = -1, double occupancy = -1) {
        std::string args = "\"correlation\": " + std::to_string(corr) + ", \"stream\": " + std::to_string(stream) +
                           ", \"device\": " + std::to_string(device);
        if (blocksPerSm >= 0) args += ", \"blocks per SM\": " + std::to_string(blocksPerSm);
        if (occupancy >= 0) args += ", \"est. achieved occupancy %\": " + std::to_string(occupancy);
        return gpu("kernel", name, ts, dur, stream, device, args);
    }
    TraceText& memcpy(const std::string& name, int64_t ts, int64_t dur, int corr, int64_t bytes, int stream = 7,
                      int device = 0) {
        return gpu("gpu_memcpy", name, ts, dur, stream, device,
                   "\"correlation\": " + std::to_string(corr) + ", \"bytes\": " + std::to_string(bytes));
    }
    TraceText& memory(int64_t ts, int64_t totalReserved, int device = 0) {
        return add(R"({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 1, "ts": )" +
                   std::to_string(ts) + R"(, "args": {"Device Type": 1, "Device Id": )" + std::to_string(device) +
                   R"(, "Bytes": 1, "Total Allocated": 1, "Total Reserved": )" + std::to_string(totalReserved) + "}}");
    }
    /// A profile_memory event: `bytes` > 0 allocates at `addr`, < 0 frees it.
    TraceText& alloc(int64_t ts, uint64_t addr, int64_t bytes, int64_t totalAllocated,
                     int64_t totalReserved, int device = 0, int tid = 1) {
        return add(
            R"({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 100, "tid": )" +
            std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) +
            R"(, "args": {"Device Type": )" + (device < 0 ? "0" : "1") + R"(, "Device Id": )" +
            std::to_string(device) + R"(, "Addr": )" + std::to_string(addr) + R"(, "Bytes": )" +
            std::to_string(bytes) + R"(, "Total Allocated": )" + std::to_string(totalAllocated) +
            R"(, "Total Reserved": )" + std::to_string(totalReserved) + "}}");
    }
    TraceText& add(const std::string& event) {
        m_events.push_back(event);
        return *this;
    }
    /// Launch + kernel in one go: cudaLaunchKernel [ts, ts+launchDur) -> kernel at kernelTs.
    TraceText& launch(const std::string& kernelName, int64_t ts, int64_t launchDur, int64_t kernelTs,
                      int64_t kernelDur, int stream = 7, int tid = 1) {
        const int corr = ++m_corr;
        runtime("cudaLaunchKernel", ts, launchDur, corr, tid);
        return kernel(kernelName, kernelTs, kernelDur, corr, stream);
    }
    int nextCorrelation() { return ++m_corr; }

    /// The JSON text; `computeMajor` < 0 omits deviceProperties.
    [[nodiscard]] std::string json(int computeMajor = 8, int64_t totalGlobalMem = 40'000'000'000) const {
        std::string s = "{\"schemaVersion\": 1,\n";
        if (computeMajor >= 0)
            s += "\"deviceProperties\": [{\"id\": 0, \"name\": \"Test GPU\", \"totalGlobalMem\": " +
                 std::to_string(totalGlobalMem) + ", \"computeMajor\": " + std::to_string(computeMajor) +
                 ", \"computeMinor\": 0, \"numSms\": 100}],\n";
        s += "\"traceEvents\": [\n";
        for (size_t i = 0; i < m_events.size(); ++i) s += "  " + m_events[i] + (i + 1 < m_events.size() ? ",\n" : "\n");
        return s + "]}\n";
    }

    [[nodiscard]] std::shared_ptr<const model::Trace> load(int computeMajor = 8,
                                                           int64_t totalGlobalMem = 40'000'000'000) const {
        auto r = importers::importBuffer(json(computeMajor, totalGlobalMem));
        return r ? r.value() : nullptr;
    }

    /// Loaded as recorded on a named GPU (deviceProperties' name, compute capability, SMs):
    /// what the GPU peak table matches.
    [[nodiscard]] std::shared_ptr<const model::Trace> loadOn(const std::string& gpuName,
                                                             int computeMajor, int sms) const {
        std::string text = json(computeMajor);
        text.replace(text.find("Test GPU"), 8, gpuName);
        const std::string numSms = "\"numSms\": 100";
        text.replace(text.find(numSms), numSms.size(), "\"numSms\": " + std::to_string(sms));
        auto r = importers::importBuffer(text);
        return r ? r.value() : nullptr;
    }

private:
    TraceText& gpu(const char* cat, const std::string& name, int64_t ts, int64_t dur, int stream, int device,
                   const std::string& args) {
        return add(R"({"ph": "X", "cat": ")" + std::string(cat) + R"(", "name": ")" + name + R"(", "pid": )" +
                   std::to_string(device) + ", \"tid\": " + std::to_string(stream) + ", \"ts\": " + std::to_string(ts) +
                   ", \"dur\": " + std::to_string(dur) + ", \"args\": {" + args + "}}");
    }

    std::vector<std::string> m_events;
    int m_corr = 0;
};

} // namespace stallscope::test
