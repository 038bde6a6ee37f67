#pragma once
// What a GPU can do at most: dense TFLOP/s per data type and memory bandwidth, one line per
// GPU in analysis/data/gpu_peaks.txt (data, each line citing its vendor datasheet), matched
// from the trace's deviceProperties. A GPU the table does not know is unknown: no guess.
#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/model/trace.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::analysis {

struct GpuPeaks {
    std::string key;                // "h100-sxm"
    std::vector<std::string> match; // lower-case substrings the device name must all hold
    int ccMajor = 0, ccMinor = 0, sms = 0;
    double memGb = 0, bandwidthTbps = 0;
    std::array<double, size_t(Precision::Count)> tflops{}; // dense; 0 = not supported/said
    std::string source;                                    // the datasheet's URL
    int line = 0;
    [[nodiscard]] double peakTflops(Precision p) const { return tflops[size_t(p)]; }
};

class GpuPeakTable {
public:
    /// Parses table text; nullopt with `error` ("line N: ...") on a malformed line.
    static std::optional<GpuPeakTable> parse(std::string_view text, std::string& error);
    /// The built-in table (analysis/data/gpu_peaks.txt).
    static const GpuPeakTable& builtIn();
    /// The first line whose substrings the device's name holds (any case) and whose compute
    /// capability major and multiprocessor count agree with the device's where both say
    /// them; nullptr otherwise.
    [[nodiscard]] const GpuPeaks* match(const model::DeviceProperties& device) const;
    [[nodiscard]] const std::vector<GpuPeaks>& gpus() const { return m_gpus; }

private:
    std::vector<GpuPeaks> m_gpus;
};

} // namespace stallscope::analysis
