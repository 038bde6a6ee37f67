// The findings about a busy GPU's own work that read operator shapes: gemm_padding (16-bit
// matrix multiplies with sizes off the Tensor-Core tile, far below their roofline) and
// unfused_attention (matmul, softmax, matmul instead of a fused kernel). Each on a tiny trace
// whose numbers are worked out by hand, with the neighbours that must not fire.
#include "diff_pair_traces.h"
#include "test_support.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::analysis;
using test::shapedOp;
using test::TraceText;

namespace {

const std::string bf16x3 = R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])";

/// Two 2 ms steps, each an aten::linear of x [4096, K] and W [N, K] in `types` on one GEMM
/// kernel of `kernelUs`.
TraceText linearSteps(int64_t n, int64_t k, const std::string& types, int64_t kernelUs) {
    TraceText t;
    const std::string dims = "[[4096, " + std::to_string(k) + "], [" + std::to_string(n) + ", " +
                             std::to_string(k) + "], [" + std::to_string(n) + "]]";
    for (int s = 0; s < 2; ++s) {
        const int64_t at = s * 2000;
        t.step(s + 1, at, 2000);
        shapedOp(t, "aten::linear", at + 10, 100, dims, types);
        t.launch("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", at + 20, 10, at + 50, kernelUs);
    }
    return t;
}

const Finding* findingOf(const AnalysisResult& r, FindingKind k) {
    for (const Finding& f : r.findings)
        if (f.kind == k) return &f;
    return nullptr;
}

bool says(const std::string& text, const char* what) {
    return text.find(what) != std::string::npos;
}

/// One step holding attention as `parent` (empty: none) around bmm, softmax, bmm on
/// q, k, v [16, 8, 128, 64] (the batch and heads flattened to 128, as MHA does), each on a
/// kernel; `valuesDims` is the second product's inputs.
TraceText attentionStep(const std::string& parent,
                        const std::string& valuesDims = "[[128, 128, 128], [128, 128, 64]]") {
    TraceText t;
    t.step(1, 0, 1000);
    if (!parent.empty()) t.cpu(parent, 5, 400);
    const std::string f2 = R"(["float", "float"])";
    shapedOp(t, "aten::bmm", 10, 50, "[[128, 128, 64], [128, 64, 128]]", f2);
    t.launch("ampere_sgemm_128x64_nn", 20, 10, 100, 30);
    shapedOp(t, "aten::_softmax", 100, 40, "[[16, 8, 128, 128], [], []]",
             R"(["float", "Scalar", "Scalar"])");
    t.launch("void (anonymous namespace)::softmax_warp_forward<float, float, float, 7>", 110, 10,
             140, 20);
    shapedOp(t, "aten::bmm", 200, 50, valuesDims, f2);
    t.launch("ampere_sgemm_128x64_nn", 210, 10, 240, 30);
    return t;
}

} // namespace

class TestBusyFindings : public QObject {
    Q_OBJECT
private slots:
    void unalignedBf16GemmFarBelowItsRoofline() {
        // x [4096, 4100] x W [1000, 4100]^T: 2*4096*4100*1000 = 33.59 GFLOP a call, on a 1 ms
        // GEMM: 33.6 TFLOP/s, under half of the A100's bf16 peak (312; the intensity, ~670
        // FLOP/B, is past the ridge). K = 4100 is not a multiple of 8.
        const AnalysisResult r =
            analyze(*linearSteps(1000, 4100, bf16x3, 1000).loadOn("NVIDIA A100-SXM4-80GB", 8, 108));
        const Finding* f = findingOf(r, FindingKind::GemmPadding);
        QVERIFY(f);
        QVERIFY2(says(f->explanation, "`aten::linear`"), f->explanation.c_str());
        QVERIFY2(says(f->explanation, "(K = 4100, 33.6 TFLOP/s)"), f->explanation.c_str());
        QVERIFY2(says(f->explanation, "1 matrix-multiply shape in 16-bit types has a size that is "
                                      "not a multiple of 8"),
                 f->explanation.c_str());
        QVERIFY2(says(f->explanation, "2.0 ms (100% of GPU busy time)"), f->explanation.c_str());
        QCOMPARE(f->evidence.size(), size_t(1));
        QCOMPARE(f->savingNs, int64_t(0)); // nothing replayed
        QVERIFY(says(savingText(*f, "step time"), "not replayed"));
        QVERIFY(f->severity != FindingSeverity::High);
        for (const Claim& c : f->claims)
            QVERIFY2(c.measure == "unaligned_gemms" || c.measure == "constant" ||
                         c.measure == "ratio",
                     c.measure.c_str());
    }

    void alignedFloatOrFastGemmsAreLeftAlone() {
        const auto a100 = [](const TraceText& t) {
            return analyze(*t.loadOn("NVIDIA A100-SXM4-80GB", 8, 108));
        };
        // Aligned sizes.
        QVERIFY(!findingOf(a100(linearSteps(1024, 4096, bf16x3, 1000)), FindingKind::GemmPadding));
        // FP32: the tile advice is about 16-bit types.
        QVERIFY(!findingOf(a100(linearSteps(1000, 4100, R"(["float", "float", "float"])", 1000)),
                           FindingKind::GemmPadding));
        // Unaligned but near the peak: 33.59 GFLOP in 150 us = 224 TFLOP/s > 156.
        QVERIFY(!findingOf(a100(linearSteps(1000, 4100, bf16x3, 150)), FindingKind::GemmPadding));
        // A GPU without peaks: fires, and says that part is not checked.
        const AnalysisResult r = analyze(*linearSteps(1000, 4100, bf16x3, 150).load());
        const Finding* f = findingOf(r, FindingKind::GemmPadding);
        QVERIFY(f);
        QVERIFY2(says(f->explanation, "peaks are not known"), f->explanation.c_str());
    }

    void attentionAsThreeOperatorsInsideMultiheadAttention() {
        const AnalysisResult r =
            analyze(*attentionStep("aten::_native_multi_head_attention").load());
        const Finding* f = findingOf(r, FindingKind::UnfusedAttention);
        QVERIFY(f);
        // The scores [16, 8, 128, 128] in float: 2,097,152 * 4 bytes.
        QVERIFY2(says(f->explanation, "(`[16, 8, 128, 128]`, 8.4 MB)"), f->explanation.c_str());
        QVERIFY2(says(f->explanation, "`aten::bmm` for the scores, `aten::_softmax`"),
                 f->explanation.c_str());
        QVERIFY2(says(f->explanation, "Their 3 kernels ran 80 us"), f->explanation.c_str());
        QVERIFY2(says(f->fix, "need_weights=False"), f->fix.c_str());
        QCOMPARE(f->evidence.size(), size_t(1));
        QVERIFY(says(savingText(*f, "step time"), "not replayed"));
    }

    void attentionOfOnesOwnGetsScaledDotProductAttention() {
        const AnalysisResult r = analyze(*attentionStep("").load());
        const Finding* f = findingOf(r, FindingKind::UnfusedAttention);
        QVERIFY(f);
        QVERIFY2(says(f->fix, "scaled_dot_product_attention(q, k, v"), f->fix.c_str());
        QVERIFY(!says(f->fix, "need_weights"));
        // SDPA's math path: the fix is about why no fused kernel fit.
        const AnalysisResult m =
            analyze(*attentionStep("aten::_scaled_dot_product_attention_math").load());
        QVERIFY(findingOf(m, FindingKind::UnfusedAttention));
        QVERIFY(says(findingOf(m, FindingKind::UnfusedAttention)->fix, "sdpa_kernel"));
    }

    void aSoftmaxBetweenProductsOfOtherShapesIsNotAttention() {
        // The second product takes [128, 128, 64], not the softmax's [.., 128, 128].
        const AnalysisResult r =
            analyze(*attentionStep("", "[[128, 128, 64], [128, 64, 128]]").load());
        QVERIFY(!findingOf(r, FindingKind::UnfusedAttention));
        // A 2-D softmax (a classifier's) between two matrix multiplies.
        TraceText t;
        t.step(1, 0, 1000);
        const std::string f2 = R"(["float", "float"])";
        shapedOp(t, "aten::mm", 10, 50, "[[128, 64], [64, 128]]", f2);
        t.launch("ampere_sgemm_128x64_nn", 20, 10, 100, 30);
        shapedOp(t, "aten::_softmax", 100, 40, "[[128, 128], [], []]",
                 R"(["float", "Scalar", "Scalar"])");
        t.launch("void (anonymous namespace)::softmax_warp_forward<float, float, float, 7>", 110,
                 10, 140, 20);
        shapedOp(t, "aten::mm", 200, 50, "[[128, 128], [128, 64]]", f2);
        t.launch("ampere_sgemm_128x64_nn", 210, 10, 240, 30);
        QVERIFY(!findingOf(analyze(*t.load()), FindingKind::UnfusedAttention));
    }
};

QTEST_GUILESS_MAIN(TestBusyFindings)
#include "test_busy_findings.moc"
