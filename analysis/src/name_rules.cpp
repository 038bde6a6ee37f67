#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>

namespace stallscope::analysis::names {

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

template <size_t N>
bool anyOf(std::string_view s, const std::array<std::string_view, N>& needles) {
    for (auto n : needles)
        if (contains(s, n)) return true;
    return false;
}

} // namespace

bool containsNoCase(std::string_view s, std::string_view p) {
    if (p.size() > s.size()) return false;
    auto it = std::search(s.begin(), s.end(), p.begin(), p.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) ==
               std::tolower(static_cast<unsigned char>(b));
    });
    return it != s.end();
}

bool isProfilerStep(std::string_view name) { return profilerStepNumber(name) >= 0; }

int64_t profilerStepNumber(std::string_view name) {
    constexpr std::string_view kPrefix = "ProfilerStep#";
    if (name.size() <= kPrefix.size() || !startsWith(name, kPrefix)) return -1;
    int64_t n = 0;
    for (char c : name.substr(kPrefix.size())) {
        if (c < '0' || c > '9' || n > (INT64_MAX / 10) - 10) return -1;
        n = n * 10 + (c - '0');
    }
    return n;
}

bool isDataLoader(std::string_view name) {
    return startsWith(name, "enumerate(DataLoader)") || startsWith(name, "enumerate(DataPipe)") ||
           contains(name, "DataLoaderIter.__next__") || contains(name, "dataloader.py") ||
           contains(name, "_next_data");
}

bool isInputPreparation(std::string_view name) {
    static constexpr std::array<std::string_view, 14> kNeedles{
        "tokeniz", "Tokeniz", "processor", "Processor", "transforms", "Transform", "collate",
        "decode_", "decode(", "PIL", "cv2.", "torchvision.io", "feature_extract", "load_image"};
    return anyOf(name, kNeedles);
}

bool isOptimizer(std::string_view name) {
    return startsWith(name, "Optimizer.step#") || startsWith(name, "Optimizer.zero_grad#") ||
           contains(name, "optimizer.py") || (contains(name, ": step") && contains(name, "optim"));
}

bool isIoLoggingCheckpoint(std::string_view name) {
    static constexpr std::array<std::string_view, 16> kNeedles{
        "torch.save", "serialization.py", "_save(", "save_checkpoint", "checkpoint.py", "pickle",
        "builtins.print", "<built-in function print>", "logging/__init__", "tensorboard", "SummaryWriter",
        "add_scalar", "wandb", "mlflow", ".write(", "_io.TextIOWrapper"};
    return anyOf(name, kNeedles) ||
           (containsNoCase(name, "checkpoint") && !containsNoCase(name, "activation") &&
            !containsNoCase(name, "torch/utils/checkpoint"));
}

bool isSyncCall(std::string_view name) {
    static constexpr std::array<std::string_view, 12> kExact{
        "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
        "cuCtxSynchronize",      "cuEventSynchronize",    "hipStreamSynchronize", "hipDeviceSynchronize",
        "hipEventSynchronize",   "aten::item",            "aten::_local_scalar_dense", "cudaStreamWaitEvent"};
    for (auto e : kExact)
        if (name == e) return true;
    return name == "Stream Sync" || name == "Event Sync" || name == "Context Sync";
}

bool isSyncCopyCall(std::string_view name) {
    return name == "cudaMemcpy" || name == "cudaMemcpy2D" || name == "cudaMemcpyToSymbol" ||
           name == "cudaMemcpyFromSymbol" || name == "hipMemcpy" || name == "cuMemcpyHtoD_v2" ||
           name == "cuMemcpyDtoH_v2" || name == "cuMemcpy" || name == "hipMemcpyWithStream";
}

bool isCopyCall(std::string_view name) {
    return startsWith(name, "cudaMemcpy") || startsWith(name, "hipMemcpy") || startsWith(name, "cuMemcpy");
}

bool isLaunchCall(std::string_view name) {
    static constexpr std::array<std::string_view, 8> kPrefixes{
        "cudaLaunch", "cuLaunch", "cudaGraphLaunch", "cuGraphLaunch", "hipLaunch", "hipExtLaunch",
        "hipModuleLaunch", "hipGraphLaunch"};
    for (auto p : kPrefixes)
        if (startsWith(name, p)) return true;
    return startsWith(name, "cudaMemsetAsync") || startsWith(name, "cudaMemcpyAsync") ||
           startsWith(name, "hipMemsetAsync") || startsWith(name, "hipMemcpyAsync");
}

bool isCompilation(std::string_view name) {
    // dynamo_timed marks every compile phase ("_compile.compile_inner (dynamo_timed)",
    // "OutputGraph.call_user_compiler (dynamo_timed)"); Inductor's autotuning and compile_fx
    // run inside them or on their own.
    return name.find("(dynamo_timed)") != std::string_view::npos ||
           name.starts_with("compile_fx") ||
           name.find("compile_fx.<locals>") != std::string_view::npos ||
           name.find("autotune") != std::string_view::npos ||
           name.find("_compile.compile_inner") != std::string_view::npos;
}

bool isCompiledRegion(std::string_view name) {
    return name.starts_with("Torch-Compiled Region");
}

bool isCaptureBegin(std::string_view name) {
    return name.starts_with("cudaStreamBeginCapture") ||
           name.starts_with("hipStreamBeginCapture") || name.starts_with("cuStreamBeginCapture");
}

bool isCaptureEnd(std::string_view name) {
    return name.starts_with("cudaStreamEndCapture") || name.starts_with("hipStreamEndCapture") ||
           name.starts_with("cuStreamEndCapture");
}

} // namespace stallscope::analysis::names
