#pragma once
// The FLOPs and bytes of one PyTorch operator call from the shapes and types the profiler
// records (record_shapes=True): the formulas of analysis/data/operator_flops.txt (data, not
// code: the operator names and their argument positions; the arithmetic of each formula is
// here and in docs/analysis.md "Operator FLOPs and bytes"). The tensor-math formulas are
// torch.utils.flop_counter.FlopCounterMode's; model FLOPs (MFU) count those only.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace stallscope::analysis {

enum class FlopFormula : uint8_t {
    Mm,
    Bmm,
    Matmul,
    Linear,
    Conv,
    ConvBackward,
    ConvBackwardInput,
    Sdpa,
    SdpaBackward,
    Norm,
    Softmax,
    Elementwise,
    Reduction,
    Embedding,
    Count
};

std::string_view flopFormulaName(FlopFormula f); // "conv_backward"
/// Matrix multiplies, convolutions and attention: what FlopCounterMode counts (model FLOPs).
bool tensorMath(FlopFormula f);

/// One operator call's recorded inputs: "Input Dims", "Input type" and "Concrete Inputs"
/// (empty when the trace has none), in the operator's argument order.
struct OperatorInputs {
    std::vector<std::vector<int64_t>> dims;
    std::vector<std::string> types;
    std::vector<std::string> concrete;
    // A convolution's output spatial sizes known from elsewhere (the grad_output of its
    // backward with the same input and weight shapes): used when its stride, padding or
    // dilation are not recorded.
    std::vector<int64_t> outSpatial;
};

struct OperatorCost {
    bool sized = false;          // the shapes fit the formula; flops and bytes are set
    double flops = 0;            // per call
    std::optional<double> bytes; // per call; nullopt without the inputs' types
    bool exact = true;           // false when an assumption stood in for a missing value
    std::string why;             // when not sized: what did not fit
    // Matrix multiplies (mm, bmm, matmul, linear): one product's rows, columns and inner size
    // (0 for other formulas) and its first matrix's element type as recorded ("" without
    // types): what Tensor Cores need aligned.
    int64_t m = 0, n = 0, k = 0;
    std::string matrixType;
};

/// Bytes of one element of a tensor's "Input type" as the profiler writes it (caffe2's
/// TypeMeta names: "float" 4, "c10::BFloat16" 2, "long int" 8); 0 for the names of
/// arguments that are not tensors ("Scalar", "Int", "Bool", "GenericList", ""). Case
/// matters: "Int" is a Python int, "int" an int32 tensor.
int tensorTypeBytes(std::string_view type);

class FlopModel {
public:
    enum Param : uint8_t {
        A,
        B,
        X,
        W,
        Gout,
        Q,
        K,
        V,
        Idx,
        Stride,
        Padding,
        Dilation,
        Transposed,
        Groups,
        Mask,
        Causal,
        ParamCount
    };
    struct Rule {
        std::string op;
        FlopFormula formula = FlopFormula::Count;
        std::array<int8_t, ParamCount> at{}; // argument positions; -1 when not given
        double per = 1;                      // FLOPs an element (memory-bound formulas)
        bool transposed = false;             // conv_transpose*: transposed always
        bool bshd = false;                   // attention inputs laid out (batch, seq, head, dim)
        int line = 0;
    };
    /// Parses table text; nullopt with `error` ("line N: ...") on a malformed rule.
    static std::optional<FlopModel> parse(std::string_view text, std::string& error);
    /// The built-in table (analysis/data/operator_flops.txt).
    static const FlopModel& builtIn();

    [[nodiscard]] const Rule* find(std::string_view op) const;
    [[nodiscard]] const std::vector<Rule>& rules() const { return m_rules; }
    [[nodiscard]] static OperatorCost cost(const Rule& rule, const OperatorInputs& in);

private:
    std::vector<Rule> m_rules;
    std::unordered_map<std::string, size_t> m_byName;
};

} // namespace stallscope::analysis
