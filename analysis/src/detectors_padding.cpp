// gemm_padding: matrix multiplies in 16- or 8-bit types whose sizes are not multiples of what
// Tensor Cores tile (8 elements of 16 bits, 16 of 8 bits: 16 bytes), running far below what
// the GPU's roofline allows at their arithmetic intensity. Evidence: the efficiency table's
// operator rows (their recorded shapes, the GEMM kernels their outermost calls launched).
// NVIDIA, "Matrix Multiplication Background User's Guide", "Tensor Core Requirements":
// https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/
// No saving is replayed: how much faster a padded shape runs is not in the trace.
#include "detector_registry.h"
#include "detectors.h"

#include "stallscope/analysis/efficiency.h"

#include <algorithm>
#include <cstdio>

namespace stallscope::analysis::detail {

using namespace model;

namespace {

/// The element count a Tensor Core tile needs a matrix size to be a multiple of: 8 for
/// 16-bit floats, 16 for 8-bit ones; 0 for other types (TF32 and FP32 are not advised here).
int alignmentOf(std::string_view type) {
    if (type == "c10::Half" || type == "Half" || type == "c10::BFloat16" || type == "BFloat16")
        return 8;
    if (type.find("Float8") != std::string_view::npos) return 16;
    return 0;
}

bool matrixFormula(FlopFormula f) {
    return f == FlopFormula::Mm || f == FlopFormula::Bmm || f == FlopFormula::Matmul ||
           f == FlopFormula::Linear;
}

/// Sizes below this are left alone: padding a handful of rows (a decode step's batch, a
/// GEMV) changes the problem instead of its tiling.
constexpr int64_t kMinPaddedSize = 64;

/// Which of M, N, K a row's shape leaves unaligned ('m', 'n', 'k'), the first one; 0: none.
char unalignedAxis(const OperatorCost& c, int align) {
    const std::pair<char, int64_t> axes[] = {{'k', c.k}, {'n', c.n}, {'m', c.m}};
    for (const auto& [axis, size] : axes)
        if (size >= kMinPaddedSize && size % align != 0) return axis;
    return 0;
}

int64_t axisSize(const OperatorCost& c, char axis) {
    return axis == 'm' ? c.m : axis == 'n' ? c.n : c.k;
}

struct Unaligned {
    const OperatorCostRow* row;
    char axis;
    int align;
    double tflops; // achieved over its GEMM kernels
};

std::string fmtRate(double tflops) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f TFLOP/s", tflops);
    return b;
}

} // namespace

void detectGemmPadding(const DetectorInput& in, Findings& out) {
    const Context& c = in.c;
    for (const DeviceEfficiency& de : in.result.efficiency.devices) {
        const DeviceMetrics* d = deviceMetrics(in.result, de.device);
        if (!d || d->busyNs <= 0) continue;
        std::vector<Unaligned> rows;
        int64_t ns = 0;
        for (const OperatorCostRow& row : in.result.efficiency.operators) {
            if (row.device != de.device || !matrixFormula(row.formula) || !row.cost.sized ||
                row.tensorNs <= 0 || row.outermostCalls == 0 || row.firstCall == UINT32_MAX)
                continue;
            const int align = alignmentOf(row.cost.matrixType);
            const char axis = align ? unalignedAxis(row.cost, align) : 0;
            if (!axis) continue;
            const double flops = row.cost.flops * double(row.outermostCalls);
            const double tflops = flops / double(row.tensorNs) / 1e3;
            // Far below the roofline: under half of what the GPU's peak for the type and its
            // memory bandwidth allow at this shape's intensity. Without peaks, every one counts.
            if (de.peak && row.cost.bytes && *row.cost.bytes > 0) {
                const Precision p = align == 16 ? Precision::FP8
                                    : row.cost.matrixType.find("BFloat16") != std::string::npos
                                        ? Precision::BF16
                                        : Precision::FP16;
                const double peak = de.peak->peakTflops(p);
                const double roof =
                    std::min(peak > 0 ? peak : 1e30,
                             row.cost.flops / *row.cost.bytes * de.peak->bandwidthTbps);
                if (tflops >= 0.5 * roof) continue;
            }
            rows.push_back({&row, axis, align, tflops});
            ns += row.tensorNs;
        }
        if (rows.empty() || double(ns) < c.options.thresholds.paddingMinShare * double(d->busyNs))
            continue;
        std::sort(rows.begin(), rows.end(), [](const Unaligned& a, const Unaligned& b) {
            return a.row->tensorNs > b.row->tensorNs;
        });
        Finding f = makeFinding(c, FindingKind::GemmPadding, de.device, ns);
        if (f.severity == FindingSeverity::High) f.severity = FindingSeverity::Medium;
        f.confidence = 0.4; // the speed-up of a padded shape is not measured
        const ClaimParams p = ClaimParams().device(de.device);
        std::vector<std::string> listed; // "name dims" of every row counted
        for (const Unaligned& u : rows) listed.push_back(u.row->name + " " + u.row->dims);
        const auto stat = [&](const char* st) {
            return ClaimParams(p).str("stat", st).strs("rows", listed);
        };
        std::string shapes;
        for (size_t i = 0; i < rows.size() && i < 3; ++i) {
            const Unaligned& u = rows[i];
            const OperatorCostRow& r = *u.row;
            f.evidence.push_back(SliceId(r.firstCall));
            const ClaimParams shape = ClaimParams(p).str("name", r.name).str("dims", r.dims);
            const char axis[2] = {char(u.axis - 'a' + 'A'), 0};
            shapes +=
                std::string(i ? "; " : "") +
                saidName(f, r.name, "unaligned_gemms", ClaimParams(shape).str("stat", "calls"),
                         double(r.outermostCalls)) +
                " on " +
                saidName(
                    f, r.dims, "unaligned_gemms",
                    ClaimParams(p).str("operator", r.name).str("name", r.dims).str("stat", "calls"),
                    double(r.outermostCalls)) +
                " (" + axis + " = " +
                said(f, std::to_string(axisSize(r.cost, u.axis)), "unaligned_gemms",
                     ClaimParams(shape).str("stat", "dim").str("axis", axis),
                     double(axisSize(r.cost, u.axis))) +
                ", " +
                said(f, fmtRate(u.tflops), "unaligned_gemms",
                     ClaimParams(shape).str("stat", "tflops"), u.tflops * 1e12) +
                ")";
        }
        const bool eight = rows.front().align == 8;
        f.title = "Matrix multiplies whose sizes Tensor Cores cannot tile evenly";
        f.explanation =
            said(f, std::to_string(rows.size()), "unaligned_gemms", stat("shapes"),
                 double(rows.size())) +
            (rows.size() == 1 ? " matrix-multiply shape in " : " matrix-multiply shapes in ") +
            saidConstant(f, eight ? "16-bit" : "8-bit", "a data type") +
            (rows.size() == 1 ? " types has a size" : " types have a size") +
            " that is not a multiple of " +
            saidConstant(f, eight ? "8" : "16", "elements a Tensor Core tile needs") +
            (rows.size() == 1 ? " and runs under " : " and run under ") +
            saidConstant(f, "50%", "how far below the roofline counts") +
            " of what the GPU allows at its arithmetic intensity" +
            (de.peak ? "" : " (the GPU's peaks are not known: that part is not checked)") + ": " +
            shapes + (rows.size() == 1 ? ". Its" : ". Their") + " GEMM kernels ran " +
            saidNs(f, ns, "unaligned_gemms", stat("ns")) + " (" +
            saidShare(f, double(ns) / double(d->busyNs), "unaligned_gemms", stat("ns"), "busy_ns",
                      p) +
            " of GPU busy time). Tensor Cores work on tiles; a size off the tile pads every tile "
            "at its edge with wasted work, and cuBLAS may pick a slower kernel. What padding saves "
            "is not replayed: it depends on the kernels the new shape gets.";
        f.fix = "Pad the sizes named to the next multiple of " +
                saidConstant(f, eight ? "8" : "16", "elements a Tensor Core tile needs") +
                " (or of " + saidConstant(f, "64", "the widest tile") +
                " for the best tiles): a vocabulary or embedding table padded with unused "
                "rows, hidden and feed-forward widths, the batch times sequence length.";
        f.snippet = "pad = lambda n, m=64: (n + m - 1) // m * m\n"
                    "lm_head = nn.Linear(hidden, pad(vocab_size))  # logits[..., :vocab_size]";
        out.push_back(std::move(f));
    }
}

extern const Detector kDetectorGemmPadding;
const Detector kDetectorGemmPadding{
    {FindingKind::GemmPadding, "gemm_padding", DetectorStage::Cause,
     "matrix multiplies in 16-bit (8-bit) types with M, N or K >= 64 not a multiple of 8 (16), "
     "under half their roofline (when the GPU's peaks are known), their GEMM kernels >= 5 % of "
     "busy time",
     "none (what a padded shape saves depends on the kernels it gets)", "paddingMinShare"},
    detectGemmPadding};

} // namespace stallscope::analysis::detail
