#pragma once
// What is in a trace, at a glance: the numbers `stallscope-cli info` prints.
#include "stallscope/model/trace.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stallscope::analysis {

struct DeviceSummary {
    int32_t device = -1;
    std::string name;             // from deviceProperties, empty when absent
    int32_t computeMajor = 0, computeMinor = 0, numSms = 0;
    int64_t totalGlobalMem = 0;
    bool hasProperties = false;
    bool hasWork = false;
    int64_t busyNs = 0;           // union of kernel / memcpy / memset intervals
    int64_t firstNs = 0, lastNs = 0;
    uint64_t kernels = 0, memcpys = 0, memsets = 0;
    uint32_t streams = 0;
};

struct TraceSummary {
    std::string format;
    std::string path;
    bool compressed = false;
    int64_t startNs = 0, endNs = 0;
    uint64_t events = 0;
    std::map<std::string, uint64_t> byPhase, byCategory;
    uint64_t kernels = 0, memcpys = 0, memsets = 0;
    uint64_t profilerSteps = 0;   // X events named ProfilerStep#N
    uint32_t processes = 0, cpuThreads = 0, gpuStreams = 0, otherTracks = 0;
    std::vector<DeviceSummary> devices;
    int32_t rank = -1, worldSize = -1;
    std::string backend;
    // The recording machine, as the file says it ("AMD EPYC 7413 24-Core Processor, 48 cores;
    // Ubuntu 24.04.1 LTS; host h1; GPU driver 570.86.15; CUDA driver 12.8"); "" when it does
    // not (top-level keys: docs/formats.md "Top-level keys").
    std::string host;
    uint64_t inputBytes = 0, textBytes = 0;
    size_t modelBytes = 0;
    size_t modelEvents = 0;
};

TraceSummary summarize(const model::Trace& trace);

/// "ProfilerStep#12" -> true.
bool isProfilerStepName(std::string_view name);

} // namespace stallscope::analysis
