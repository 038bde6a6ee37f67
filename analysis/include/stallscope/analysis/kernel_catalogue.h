#pragma once
// What a GPU kernel's name says about it: family, precision and Tensor-Core (Matrix-Core)
// use, from the rules in analysis/data/kernel_catalogue.txt (data, not code: the file is
// compiled in, and the same parser reads any other catalogue text for tests).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::analysis {

enum class KernelFamily : uint8_t {
    Other,
    Gemm,
    GroupedGemm,
    Conv,
    Attention,
    Comm,
    Elementwise,
    Reduction,
    Copy,
    Memset,
    Optimizer,
    Norm, // layer, RMS, batch and group normalisation
    Count
};
enum class Precision : uint8_t { Unknown, FP64, FP32, TF32, BF16, FP16, FP8, FP4, INT8, Count };
enum class TensorCoreUse : uint8_t { Unknown, Yes, No };

struct KernelClass {
    KernelFamily family = KernelFamily::Other;
    Precision precision = Precision::Unknown;
    TensorCoreUse tensorCore = TensorCoreUse::Unknown;
    bool tensorCoreNamed =
        false; // tensorCore comes from a rule (an instruction in the name), not the precision
    // A vendor library's kernel (cuBLAS, cuDNN, CUTLASS as the libraries ship it, Tensile,
    // MIOpen, Composable Kernel, Inductor's templates): the library picks it by the data type,
    // so a lower precision picks a Tensor/Matrix-Core kernel. A kernel of one's own is not.
    bool library = false;

    /// Matrix multiplies: GEMM, grouped GEMM, convolution (attention is counted apart).
    [[nodiscard]] bool matmul() const {
        return family == KernelFamily::Gemm || family == KernelFamily::GroupedGemm ||
               family == KernelFamily::Conv;
    }
};

std::string_view kernelFamilyName(KernelFamily f); // "grouped_gemm"
std::string_view precisionName(Precision p);       // "fp8"
/// True for the types Tensor/Matrix Cores multiply (fp16, bf16, tf32, fp8, fp4, int8).
bool tensorCorePrecision(Precision p);

class KernelCatalogue {
public:
    struct Rule {
        enum class Field : uint8_t { Family, Precision, TensorCore, Library } field;
        enum class Match : uint8_t { Prefix, Contains, IContains } match;
        uint8_t value; // a KernelFamily, Precision or TensorCoreUse (library: Yes/No)
        std::string pattern;
        int line;
    };
    /// Parses catalogue text; nullopt with `error` ("line N: ...") on a malformed rule.
    static std::optional<KernelCatalogue> parse(std::string_view text, std::string& error);
    /// The built-in catalogue (analysis/data/kernel_catalogue.txt).
    static const KernelCatalogue& builtIn();

    [[nodiscard]] KernelClass classify(std::string_view kernelName) const;
    [[nodiscard]] const std::vector<Rule>& rules() const { return m_rules; }

private:
    std::vector<Rule> m_rules;
};

/// KernelCatalogue::builtIn().classify(name).
KernelClass classifyKernel(std::string_view kernelName);

/// The precision of a matrix multiply from its operator's "Input type" argument (JSON
/// array of dtype names, recorded with record_shapes=True): the first floating type of
/// its inputs; Unknown when there is none.
Precision precisionFromInputTypes(std::string_view inputTypesJson);

} // namespace stallscope::analysis
