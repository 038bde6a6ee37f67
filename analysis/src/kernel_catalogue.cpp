#include "stallscope/analysis/kernel_catalogue.h"

#include "catalogue_lines.h"
#include "stallscope/analysis/name_rules.h"

#include <algorithm>
#include <array>
#include <cstdlib>

namespace stallscope::analysis {

namespace detail {
extern const char* const kKernelCatalogueText; // generated from analysis/data/kernel_catalogue.txt
}

namespace {

constexpr std::array<std::string_view, static_cast<size_t>(KernelFamily::Count)> kFamilies{
    "other",       "gemm",      "grouped_gemm", "conv",   "attention", "comm",
    "elementwise", "reduction", "copy",         "memset", "optimizer", "norm"};
constexpr std::array<std::string_view, static_cast<size_t>(Precision::Count)> kPrecisions{
    "unknown", "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8"};

template <size_t N> int indexOf(const std::array<std::string_view, N>& names, std::string_view v) {
    for (size_t i = 0; i < N; ++i)
        if (names[i] == v) return static_cast<int>(i);
    return -1;
}

} // namespace

std::string_view kernelFamilyName(KernelFamily f) {
    return kFamilies[std::min<size_t>(size_t(f), kFamilies.size() - 1)];
}
std::string_view precisionName(Precision p) {
    return kPrecisions[std::min<size_t>(size_t(p), kPrecisions.size() - 1)];
}

bool tensorCorePrecision(Precision p) {
    return p == Precision::FP16 || p == Precision::BF16 || p == Precision::TF32 ||
           p == Precision::FP8 || p == Precision::FP4 || p == Precision::INT8;
}

std::optional<KernelCatalogue> KernelCatalogue::parse(std::string_view text, std::string& error) {
    KernelCatalogue cat;
    const bool ok = detail::forEachCatalogueLine(
        text, 3,
        [&](const detail::CatalogueLine& l) -> std::string {
            const std::string_view field = l.words[0], value = l.words[1], match = l.words[2];
            if (l.rest.empty()) return "expected FIELD VALUE MATCH PATTERN";
            Rule r{};
            r.line = l.number;
            if (field == "family") {
                const int v = indexOf(kFamilies, value);
                if (v < 0) return "unknown family '" + std::string(value) + "'";
                r.field = Rule::Field::Family, r.value = uint8_t(v);
            } else if (field == "precision") {
                const int v = indexOf(kPrecisions, value);
                if (v <= 0) return "unknown precision '" + std::string(value) + "'";
                r.field = Rule::Field::Precision, r.value = uint8_t(v);
            } else if (field == "tensor_core" || field == "library") {
                if (value != "yes" && value != "no") return std::string(field) + " is yes or no";
                r.field = field == "library" ? Rule::Field::Library : Rule::Field::TensorCore;
                r.value = uint8_t(value == "yes" ? TensorCoreUse::Yes : TensorCoreUse::No);
            } else {
                return "unknown field '" + std::string(field) +
                       "' (family, precision, tensor_core or library)";
            }
            if (match == "prefix")
                r.match = Rule::Match::Prefix;
            else if (match == "contains")
                r.match = Rule::Match::Contains;
            else if (match == "icontains")
                r.match = Rule::Match::IContains;
            else
                return "unknown match '" + std::string(match) + "' (prefix, contains or icontains)";
            r.pattern = std::string(l.rest);
            cat.m_rules.push_back(std::move(r));
            return {};
        },
        error);
    if (!ok) return std::nullopt;
    return cat;
}

const KernelCatalogue& KernelCatalogue::builtIn() {
    static const KernelCatalogue cat = [] {
        std::string error;
        auto c = parse(detail::kKernelCatalogueText, error);
        if (!c) std::abort(); // the built-in file is checked by test_kernel_catalogue
        return std::move(*c);
    }();
    return cat;
}

KernelClass KernelCatalogue::classify(std::string_view name) const {
    KernelClass k;
    bool family = false, precision = false, tc = false, library = false;
    for (const Rule& r : m_rules) {
        bool* done = r.field == Rule::Field::Family      ? &family
                     : r.field == Rule::Field::Precision ? &precision
                     : r.field == Rule::Field::Library   ? &library
                                                         : &tc;
        if (*done) continue;
        const bool hit =
            r.match == Rule::Match::Prefix     ? name.substr(0, r.pattern.size()) == r.pattern
            : r.match == Rule::Match::Contains ? name.find(r.pattern) != std::string_view::npos
                                               : names::containsNoCase(name, r.pattern);
        if (!hit) continue;
        *done = true;
        switch (r.field) {
        case Rule::Field::Family: k.family = KernelFamily(r.value); break;
        case Rule::Field::Precision: k.precision = Precision(r.value); break;
        case Rule::Field::TensorCore:
            k.tensorCore = TensorCoreUse(r.value);
            k.tensorCoreNamed = true;
            break;
        case Rule::Field::Library: k.library = TensorCoreUse(r.value) == TensorCoreUse::Yes; break;
        }
        if (family && precision && tc && library) break;
    }
    // Matrix multiplies in a Tensor-Core type run on them (cuBLAS, CUTLASS, Triton and the
    // AMD libraries pick the matrix instructions for these types); fp32/fp64 ones do not.
    if (!tc && (k.matmul() || k.family == KernelFamily::Attention) &&
        k.precision != Precision::Unknown)
        k.tensorCore = tensorCorePrecision(k.precision) ? TensorCoreUse::Yes : TensorCoreUse::No;
    return k;
}

KernelClass classifyKernel(std::string_view name) {
    return KernelCatalogue::builtIn().classify(name);
}

Precision precisionFromInputTypes(std::string_view json) {
    // Quoted dtype names as PyTorch writes them ("float", "c10::Half", "c10::BFloat16",
    // "c10::Float8_e4m3fn", "double"), in input order; the first floating one decides.
    size_t at = 0;
    while ((at = json.find('"', at)) != std::string_view::npos) {
        const size_t end = json.find('"', at + 1);
        if (end == std::string_view::npos) break;
        const std::string_view t = json.substr(at + 1, end - at - 1);
        at = end + 1;
        if (t == "float") return Precision::FP32;
        if (t == "double") return Precision::FP64;
        if (t == "c10::Half") return Precision::FP16;
        if (t == "c10::BFloat16") return Precision::BF16;
        if (t.find("Float8") != std::string_view::npos) return Precision::FP8;
        if (t.find("Float4") != std::string_view::npos) return Precision::FP4;
    }
    return Precision::Unknown;
}

} // namespace stallscope::analysis
