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
    // ASCII case folding inline (the C locale's tolower, without a libc call per byte and
    // the same whatever locale the GUI set): a name of 10 MB took seconds per rule.
    auto fold = [](char c) { return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c; };
    if (p.empty()) return true;
    if (p.size() > s.size()) return false;
    const char first = fold(p[0]);
    const size_t last = s.size() - p.size();
    for (size_t i = 0; i <= last; ++i) {
        if (fold(s[i]) != first) continue;
        size_t k = 1;
        while (k < p.size() && fold(s[i + k]) == fold(p[k])) ++k;
        if (k == p.size()) return true;
    }
    return false;
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
    // Named input-pipeline work: tokenisers, Hugging Face processors and image processors
    // ("processing_owlv2.py", "image_processing_utils.py"), torchvision transforms and image
    // decoding, collation, datasets and torch.utils.data, image reads. Not the model's own
    // modules: "TransformerBlock", diffusers' "AttnProcessor" and an LLM's "decode_step" are
    // not input preparation, so bare "Transform", "processor" and "decode_" are not needles.
    static constexpr std::array<std::string_view, 16> kNeedles{
        "tokeniz",       "Tokeniz",        "processing_",    "torchvision/transforms",
        "transforms.py", "collate",        "PIL/",           "PIL.",
        "cv2.",          "torchvision.io", "torchvision/io", "feature_extract",
        "load_image",    "dataset.py",     "datasets/",      "torch/utils/data/"};
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

bool isBackward(std::string_view name) {
    // Autograd's backward nodes ("autograd::engine::evaluate_function: ConvolutionBackward0",
    // "ConvolutionBackward0", "aten::convolution_backward"), the engine itself, and
    // torch.autograd.backward / Tensor.backward frames.
    return contains(name, "Backward") || contains(name, "_backward") ||
           startsWith(name, "autograd::engine") || contains(name, "torch/autograd/__init__.py") ||
           (contains(name, "torch/_tensor.py") && contains(name, ": backward"));
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
