#pragma once
// The injection's settings, from the environment the recorder gives the target:
//
//   STALLSCOPE_CAPTURE_SOCKET          the recorder's Unix socket (required)
//   STALLSCOPE_CAPTURE_DELAY           seconds after the first CUDA call before recording
//   STALLSCOPE_CAPTURE_DURATION        seconds to record (0 or unset: until the end)
//   STALLSCOPE_CAPTURE_PROFILER_RANGE  1: record only inside cudaProfilerStart/Stop
//   STALLSCOPE_CAPTURE_BUFFER_MB       CUPTI buffer memory in MiB (default 256, 8..8192)
//   STALLSCOPE_CAPTURE_FLUSH_MS        how often records are sent (default 200, 10..10000)
//   STALLSCOPE_CAPTURE_ALL_API         1: keep every runtime/driver API record
//
// A malformed value is reported and its default used; capture goes on.
//
// Not read here but needed from the recorder for NVTX ranges: NVTX hands its calls to CUPTI
// only when NVTX_INJECTION64_PATH names libcupti.so in the program's environment (NVTX
// reads it at the first NVTX call, so it cannot be set from inside the program safely).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stallscope::capture::cupti {

inline constexpr const char* kDelayEnv = "STALLSCOPE_CAPTURE_DELAY";
inline constexpr const char* kDurationEnv = "STALLSCOPE_CAPTURE_DURATION";
inline constexpr const char* kProfilerRangeEnv = "STALLSCOPE_CAPTURE_PROFILER_RANGE";
inline constexpr const char* kBufferMbEnv = "STALLSCOPE_CAPTURE_BUFFER_MB";
inline constexpr const char* kFlushMsEnv = "STALLSCOPE_CAPTURE_FLUSH_MS";
inline constexpr const char* kAllApiEnv = "STALLSCOPE_CAPTURE_ALL_API";

inline constexpr size_t kBufferBytes = 4u << 20; // one CUPTI buffer

struct CaptureConfig {
    std::string socketPath;
    int64_t delayNs = 0;
    int64_t durationNs = 0;
    bool profilerRange = false;
    size_t bufferMb = 256;
    int flushMs = 200;
    bool allApi = false;
    /// Problems with the values, one sentence each ("STALLSCOPE_CAPTURE_DELAY='x' is not a
    /// number of seconds; using 0").
    std::vector<std::string> problems;

    [[nodiscard]] size_t maxBuffers() const { return (bufferMb << 20) / kBufferBytes; }
};

using EnvLookup = std::function<const char*(const char*)>;

/// Reads the settings through `env` (getenv in the injection, a table in tests).
CaptureConfig parseCaptureConfig(const EnvLookup& env);

} // namespace stallscope::capture::cupti
