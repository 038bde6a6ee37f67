// Efficiency (analysis/efficiency.h): the operator cost table's formulas, one case per family
// with the arithmetic written out; the table and the GPU peak table parsed, with their errors;
// peaks spot-checked against the datasheets the table cites; and MFU, the family breakdown
// and the roofline position on tiny traces whose numbers are worked out by hand.
#include "diff_pair_traces.h"
#include "test_support.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/efficiency.h"
#include "stallscope/analysis/flop_model.h"
#include "stallscope/analysis/gpu_peaks.h"

#include <QTest>

#include <cmath>

using namespace stallscope;
using namespace stallscope::analysis;
using test::shapedOp;
using test::TraceText;

namespace {

OperatorCost costOf(const char* op, std::vector<std::vector<int64_t>> dims,
                    std::vector<std::string> types, std::vector<std::string> concrete = {}) {
    const FlopModel::Rule* rule = FlopModel::builtIn().find(op);
    if (!rule) return OperatorCost{false, 0, std::nullopt, true, std::string("no rule for ") + op};
    return FlopModel::cost(*rule,
                           OperatorInputs{std::move(dims), std::move(types), std::move(concrete)});
}

bool near(double a, double b) {
    return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b));
}

const std::vector<std::string> f2{"float", "float"};
const std::vector<std::string> bf3{"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"};

/// An A100 SXM4 80GB, as its deviceProperties say it.
std::shared_ptr<const model::Trace> onA100(const TraceText& t) {
    return t.loadOn("NVIDIA A100-SXM4-80GB", 8, 108);
}

} // namespace

class TestEfficiency : public QObject {
    Q_OBJECT
private slots:
    void matrixMultiplies() {
        // mm [64,128] x [128,256]: 2*64*128*256 = 4,194,304; bytes (64*128 + 128*256 + 64*256)*4.
        OperatorCost c = costOf("aten::mm", {{64, 128}, {128, 256}}, f2);
        QVERIFY(c.sized && c.exact);
        QCOMPARE(c.flops, 4194304.0);
        QCOMPARE(*c.bytes, double(64 * 128 + 128 * 256 + 64 * 256) * 4);
        // addmm(bias, a, b): the bias is read (bytes), not multiplied.
        c = costOf("aten::addmm", {{256}, {64, 128}, {128, 256}, {}, {}},
                   {"float", "float", "float", "Scalar", "Scalar"});
        QCOMPARE(c.flops, 4194304.0);
        QCOMPARE(*c.bytes, double(256 + 64 * 128 + 128 * 256 + 64 * 256) * 4);
        // bmm [8,32,64] x [8,64,16] = 2*8*32*64*16
        QCOMPARE(costOf("aten::bmm", {{8, 32, 64}, {8, 64, 16}}, f2).flops, 2.0 * 8 * 32 * 64 * 16);
        QCOMPARE(costOf("aten::baddbmm", {{8, 32, 16}, {8, 32, 64}, {8, 64, 16}}, bf3).flops,
                 2.0 * 8 * 32 * 64 * 16);
        // matmul broadcasts: [4,1,32,64] x [3,64,16] -> batch 4x3 = 12
        QCOMPARE(costOf("aten::matmul", {{4, 1, 32, 64}, {3, 64, 16}}, f2).flops,
                 2.0 * 12 * 32 * 64 * 16);
        QCOMPARE(costOf("aten::matmul", {{64}, {64}}, f2).flops, 128.0); // dot product
        QCOMPARE(costOf("aten::matmul", {{64}, {64, 10}}, f2).flops, 2.0 * 64 * 10);
        // linear [16,128,512] x W[2048,512]: 2*16*128*512*2048 (the H100 transformer's)
        c = costOf("aten::linear", {{16, 128, 512}, {2048, 512}, {2048}},
                   {"float", "float", "float"});
        QCOMPARE(c.flops, 4294967296.0);
        // Wrong ranks leave the call unsized, with the reason.
        c = costOf("aten::mm", {{64, 128, 2}, {128, 256}}, f2);
        QVERIFY(!c.sized);
        QVERIFY(!c.why.empty());
        QVERIFY(!costOf("aten::mm", {}, {}).sized); // no shapes recorded
        // No "Input type": FLOPs, but no bytes.
        c = costOf("aten::mm", {{2, 3}, {3, 4}}, {});
        QVERIFY(c.sized && !c.bytes);
    }

    void convolutions() {
        // ResNet-50's first layer: x [32,3,224,224], w [64,3,7,7], stride 2, padding 3 -> 112x112;
        // 2*32*112*112*64*3*7*7 = 7,552,892,928.
        const std::vector<std::string> types{"float",       "float",       "",   "GenericList",
                                             "GenericList", "GenericList", "Int"};
        OperatorCost c =
            costOf("aten::conv2d", {{32, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}}, types,
                   {"", "", "", "[2, 2]", "[3, 3]", "[1, 1]", "1"});
        QVERIFY(c.sized && c.exact);
        QCOMPARE(c.flops, 7552892928.0);
        QCOMPARE(*c.bytes, (32.0 * 3 * 224 * 224 + 64 * 3 * 7 * 7 + 32.0 * 64 * 112 * 112) * 4);
        // Without concrete inputs the output is taken as large as the input: an upper bound.
        c = costOf("aten::conv2d", {{32, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}}, types);
        QVERIFY(c.sized && !c.exact);
        QCOMPARE(c.flops, 2.0 * 32 * 224 * 224 * 64 * 3 * 7 * 7);
        // ... unless the backward of the same input and weight says the output's size.
        c = FlopModel::cost(
            *FlopModel::builtIn().find("aten::conv2d"),
            OperatorInputs{
                {{32, 3, 224, 224}, {64, 3, 7, 7}, {}, {}, {}, {}, {}}, types, {}, {112, 112}});
        QVERIFY(c.sized && c.exact);
        QCOMPARE(c.flops, 7552892928.0);
        // A single int applies to every spatial dimension; 'same' keeps the size.
        QCOMPARE(costOf("aten::conv2d", {{1, 8, 10, 10}, {4, 8, 3, 3}, {}, {}, {}, {}, {}}, types,
                        {"", "", "", "1", "'same'", "1", "1"})
                     .flops,
                 2.0 * 100 * 4 * 8 * 9);
        // Groups: the weight already holds C_in/groups.
        QCOMPARE(costOf("aten::conv2d", {{1, 32, 8, 8}, {32, 1, 3, 3}, {}, {}, {}, {}, {}}, types,
                        {"", "", "", "1", "1", "1", "32"})
                     .flops,
                 2.0 * 64 * 32 * 1 * 9);
        // Transposed: the input's spatial size counts (FlopCounterMode's conv_flop_count).
        QCOMPARE(costOf("aten::conv_transpose2d", {{2, 16, 8, 8}, {16, 8, 4, 4}, {}, {}, {}}, types,
                        {"", "", "", "2", "1"})
                     .flops,
                 2.0 * 2 * 64 * 16 * 8 * 16);
        // convolution_backward: each gradient of the mask costs the forward's, sized by
        // grad_output: 2 * (2*32*56*56*64*64*3*3).
        const double fwd = 2.0 * 32 * 56 * 56 * 64 * 64 * 9;
        std::vector<std::vector<int64_t>> bw{
            {32, 64, 56, 56}, {32, 64, 56, 56}, {64, 64, 3, 3}, {}, {}, {}, {}, {}, {}, {}, {}};
        std::vector<std::string> bwTypes{"float",       "float",       "float",       "GenericList",
                                         "GenericList", "GenericList", "GenericList", "Bool",
                                         "GenericList", "Int",         "GenericList"};
        c = costOf("aten::convolution_backward", bw, bwTypes);
        QVERIFY(c.sized && c.exact);
        QCOMPARE(c.flops, 2 * fwd);
        c = costOf("aten::convolution_backward", bw, bwTypes,
                   {"", "", "", "[64]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
                    "[False, True, True]"});
        QCOMPARE(c.flops, fwd); // the first layer: no input gradient
        QCOMPARE(costOf("aten::cudnn_convolution_backward_input",
                        {{}, {32, 64, 56, 56}, {64, 64, 3, 3}}, {"", "float", "float"})
                     .flops,
                 fwd);
    }

    void attention() {
        // q,k,v [2,8,1024,64] (batch, heads, sequence, head dim): 2*2*8*1024*1024*(64+64).
        const double full = 2.0 * 2 * 8 * 1024 * 1024 * 128;
        std::vector<std::vector<int64_t>> qkv{
            {2, 8, 1024, 64}, {2, 8, 1024, 64}, {2, 8, 1024, 64}, {}, {}, {}, {}};
        std::vector<std::string> t{
            "c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "Double", "Bool", ""};
        OperatorCost c = costOf("aten::scaled_dot_product_attention", qkv, t,
                                {"", "", "", "", "0.", "False", ""});
        QVERIFY(c.sized && c.exact);
        QCOMPARE(c.flops, full);
        QCOMPARE(*c.bytes, (3.0 * 2 * 8 * 1024 * 64 + 2.0 * 8 * 1024 * 64) * 2);
        QCOMPARE(
            costOf("aten::scaled_dot_product_attention", qkv, t, {"", "", "", "", "0.", "True", ""})
                .flops,
            full / 2);
        // Causality not recorded: counted in full (as FlopCounterMode does), not exact.
        c = costOf("aten::scaled_dot_product_attention", qkv, t);
        QVERIFY(c.sized && !c.exact);
        QCOMPARE(c.flops, full);
        // _flash_attention_forward lays inputs out (batch, seq, heads, dim).
        QCOMPARE(costOf("aten::_flash_attention_forward",
                        {{2, 1024, 8, 64}, {2, 1024, 8, 64}, {2, 1024, 8, 64}}, bf3)
                     .flops,
                 full);
        // Backward: FlopCounterMode's five matrix multiplies, 2*b*h*s*s*(3*64 + 2*64) = 2.5x.
        std::vector<std::vector<int64_t>> bw{
            {2, 8, 1024, 64}, {2, 8, 1024, 64}, {2, 8, 1024, 64}, {2, 8, 1024, 64}};
        QCOMPARE(costOf("aten::_scaled_dot_product_flash_attention_backward", bw, bf3).flops,
                 2.5 * full);
        QVERIFY(!costOf("aten::scaled_dot_product_attention",
                        {{8, 1024, 64}, {8, 1024, 64}, {8, 1024, 64}}, bf3)
                     .sized);
    }

    void memoryBound() {
        // layer norm: 5 FLOPs an element; bytes: the input, the weights, the output.
        OperatorCost c = costOf("aten::layer_norm", {{16, 128, 512}, {}, {512}, {512}, {}, {}},
                                {"float", "GenericList", "float", "float", "Double", "Bool"});
        QCOMPARE(c.flops, 5.0 * 16 * 128 * 512);
        QCOMPARE(*c.bytes, (2.0 * 16 * 128 * 512 + 2 * 512) * 4);
        QCOMPARE(costOf("aten::rms_norm", {{4, 4096}}, {"c10::BFloat16"}).flops, 4.0 * 4 * 4096);
        QCOMPARE(
            costOf("aten::_softmax", {{8, 1024, 1024}, {}, {}}, {"float", "Int", "Bool"}).flops,
            5.0 * 8 * 1024 * 1024);
        // Elementwise broadcasts its tensor inputs; a Scalar is not a tensor.
        c = costOf("aten::add", {{4, 1, 8}, {3, 1}, {}}, {"float", "float", "Scalar"});
        QCOMPARE(c.flops, 4.0 * 3 * 8);
        QCOMPARE(*c.bytes, (32.0 + 3 + 96) * 4);
        QCOMPARE(costOf("aten::mul", {{11192, 8192}, {}}, {"float", "Scalar"}).flops,
                 11192.0 * 8192);
        QCOMPARE(
            costOf("aten::sum", {{1024, 1024}, {}, {}, {}}, {"float", "GenericList", "Bool", ""})
                .flops,
            1024.0 * 1024);
        // Embedding: no FLOPs; the rows gathered are read and written.
        c = costOf("aten::embedding", {{50000, 768}, {8, 512}, {}, {}, {}},
                   {"float", "long int", "Int", "Bool", "Bool"});
        QCOMPARE(c.flops, 0.0);
        QCOMPARE(*c.bytes, 8.0 * 512 * 8 + 2.0 * 8 * 512 * 768 * 4);
        QCOMPARE(tensorTypeBytes("c10::BFloat16"), 2);
        QCOMPARE(tensorTypeBytes("Int"), 0); // a Python int, not an int32 tensor
        QCOMPARE(tensorTypeBytes("int"), 4);
    }

    void tableParser() {
        QVERIFY(FlopModel::builtIn().rules().size() >= 80);
        QVERIFY(FlopModel::builtIn().find("aten::mm"));
        QVERIFY(!FlopModel::builtIn().find("aten::view"));
        std::string error;
        QVERIFY(FlopModel::parse("aten::mm mm a=0 b=1\n# c\n\naten::x norm x=0 per=3\n", error));
        const char* bad[][2] = {{"aten::mm bogus a=0", "unknown formula"},
                                {"aten::mm mm a=zero", "a position"},
                                {"aten::mm mm q", "PARAM=VALUE"},
                                {"aten::mm mm z=1", "unknown parameter"},
                                {"aten::mm mm a=0\naten::mm mm a=0", "twice"},
                                {"aten::x sdpa layout=sbhd", "layout"}};
        for (const auto& b : bad) {
            error.clear();
            QVERIFY2(!FlopModel::parse(b[0], error), b[0]);
            QVERIFY2(error.find(b[1]) != std::string::npos, error.c_str());
            QVERIFY2(error.rfind("line ", 0) == 0, error.c_str());
        }
    }

    void peaksFromDatasheets() {
        const GpuPeakTable& t = GpuPeakTable::builtIn();
        QVERIFY(t.gpus().size() >= 25);
        for (const GpuPeaks& g : t.gpus()) {
            QVERIFY2(g.source.rfind("https://", 0) == 0, g.key.c_str());
            QVERIFY2(g.bandwidthTbps > 0 && g.memGb > 0, g.key.c_str());
        }
        auto gpu = [&](const char* name, int major, int sms) -> const GpuPeaks* {
            model::DeviceProperties d;
            d.name = name;
            d.computeMajor = major;
            d.numSms = sms;
            return t.match(d);
        };
        struct Spot {
            const char* name;
            int major, sms;
            const char* key;
            Precision p;
            double tflops, tbps;
        };
        // Values from the datasheets each line cites (dense, without sparsity).
        const Spot spots[] = {
            {"Tesla V100-SXM2-32GB", 7, 80, "v100-sxm2-32gb", Precision::FP16, 125, 0.9},
            {"Tesla V100-DGXS-32GB", 7, 80, "v100-sxm2-32gb", Precision::FP32, 15.7, 0.9},
            {"NVIDIA A100-SXM4-80GB", 8, 108, "a100-sxm4-80gb", Precision::BF16, 312, 2.039},
            {"NVIDIA A100-PG509-200", 8, 108, "a100-sxm4-40gb", Precision::TF32, 156, 1.555},
            {"NVIDIA H100 80GB HBM3", 9, 132, "h100-sxm", Precision::BF16, 989.4, 3.35},
            {"NVIDIA H100 80GB HBM3", 9, 132, "h100-sxm", Precision::FP8, 1978.9, 3.35},
            {"NVIDIA H200", 9, 132, "h200-sxm", Precision::BF16, 989.4, 4.8},
            {"AMD Instinct MI300X", 9, 304, "mi300x", Precision::BF16, 1307.4, 5.3},
            {"NVIDIA GeForce RTX 3090", 8, 82, "rtx-3090", Precision::FP32, 35.6, 0.936},
        };
        for (const Spot& s : spots) {
            const GpuPeaks* g = gpu(s.name, s.major, s.sms);
            QVERIFY2(g, s.name);
            QCOMPARE(QString::fromStdString(g->key), QString(s.key));
            QCOMPARE(g->peakTflops(s.p), s.tflops);
            QCOMPARE(g->bandwidthTbps, s.tbps);
        }
        QVERIFY(gpu("Tesla V100-SXM2-32GB", 7, 80)->peakTflops(Precision::BF16) ==
                0); // Volta has none
        // One name, two GPUs: the multiprocessor count tells an MI250X's GCD from an MI250's.
        QCOMPARE(QString::fromStdString(gpu("AMD Instinct MI250X / MI250", 9, 110)->key),
                 QString("mi250x-gcd"));
        QCOMPARE(QString::fromStdString(gpu("AMD Instinct MI250X / MI250", 9, 104)->key),
                 QString("mi250-gcd"));
        // Unknown stays unknown.
        QVERIFY(!gpu("NVIDIA GeForce RTX 3090 Ti", 8, 84));
        QVERIFY(!gpu("AMD Radeon Graphics", 9, 104));
        QVERIFY(!gpu("", 8, 108));
        QVERIFY(!gpu("NVIDIA A100-SXM4-80GB", 9, 108)); // the compute capability disagrees
        std::string error;
        QVERIFY(!GpuPeakTable::parse("gpu x | y | bw_tbps=1 | fp32=1", error));
        QVERIFY2(error.find("source") != std::string::npos, error.c_str());
        QVERIFY(!GpuPeakTable::parse("gpu x | y | bw_tbps=1 fp99=3 | source=https://a", error));
        QVERIFY2(error.find("fp99") != std::string::npos, error.c_str());
    }

    void mfuOnATinyTrace() {
        // Two 1000 us steps on an A100 SXM4 80GB, each: aten::linear (around aten::addmm) of
        // [1024,1024] x W[1024,1024]^T in bf16 on a 100 us bf16 GEMM, and an aten::add of
        // [1024,1024] on a 20 us elementwise kernel.
        TraceText t;
        const std::string d = "[[1024, 1024], [1024, 1024], [1024]]";
        const std::string ty = R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])";
        for (int s = 0; s < 2; ++s) {
            const int64_t at = s * 1000;
            t.step(s + 1, at, 1000);
            shapedOp(t, "aten::linear", at + 10, 200, d, ty);
            shapedOp(t, "aten::addmm", at + 20, 150, "[[1024], [1024, 1024], [1024, 1024], [], []]",
                     R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])");
            t.launch("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", at + 30, 10, at + 50, 100);
            shapedOp(t, "aten::add", at + 300, 50, "[[1024, 1024], [1024, 1024], []]",
                     R"(["c10::BFloat16", "c10::BFloat16", "Scalar"])");
            t.launch("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor>",
                     at + 310, 10, at + 400, 20);
        }
        const auto trace = onA100(t);
        QVERIFY(trace);
        AnalysisOptions o;
        o.window.kind = WindowKind::All;
        const AnalysisResult r = analyze(*trace, o);
        const Efficiency& e = r.efficiency;
        QVERIFY(e.shapes);
        const double gemm = 2.0 * 1024 * 1024 * 1024; // per linear; its addmm is inside it
        QCOMPARE(e.modelFlops, 2 * gemm);
        QCOMPARE(e.devices.size(), size_t(1));
        const DeviceEfficiency& dev = e.devices[0];
        QVERIFY(dev.peak);
        QCOMPARE(QString::fromStdString(dev.peak->key), QString("a100-sxm4-80gb"));
        QCOMPARE(int(dev.dtype), int(Precision::BF16));
        QCOMPARE(dev.peakTflops, 312.0);
        QVERIFY(near(dev.mfu, 2 * gemm / (double(dev.windowNs) * 1e-9) / 312e12));
        QVERIFY(near(dev.achievedTflops, gemm / 100e-6 / 1e12)); // 21.47 TFLOP/s
        QCOMPARE(dev.steps.size(), size_t(2));
        for (const StepEfficiency& st : dev.steps) {
            QCOMPARE(st.modelFlops, gemm);
            QCOMPARE(st.durationNs, int64_t(1000'000));
            QVERIFY(near(st.mfu, gemm / 1e-3 / 312e12)); // 0.69 %
        }
        const FamilyEfficiency* g = nullptr;
        const FamilyEfficiency* el = nullptr;
        for (const FamilyEfficiency& f : dev.families) {
            if (f.family == "gemm") g = &f;
            if (f.family == "elementwise") el = &f;
        }
        QVERIFY(g && el);
        QCOMPARE(g->busyNs, int64_t(200'000));
        QVERIFY(near(g->flops, 2 * gemm));
        // linear's bytes: x, W, bias and the output, 2 bytes each.
        const double linearBytes = (3.0 * 1024 * 1024 + 1024) * 2;
        QVERIFY(near(g->bytes, 2 * linearBytes));
        QVERIFY(near(g->intensity, gemm / linearBytes)); // ~341 FLOP/B: above the ridge
        QCOMPARE(QString::fromStdString(g->bound), QString("compute")); // ridge 312/2.039 = 153
        QVERIFY(near(el->flops, 2.0 * 1024 * 1024));
        QCOMPARE(QString::fromStdString(el->bound), QString("memory"));
        // The operator rows: linear outermost, addmm inside it.
        bool sawAddmm = false;
        for (const OperatorCostRow& row : e.operators)
            if (row.name == "aten::addmm") {
                sawAddmm = true;
                QCOMPARE(row.calls, uint64_t(2));
                QCOMPARE(row.outermostCalls, uint64_t(0));
            }
        QVERIFY(sawAddmm);
    }

    void convolutionOutputsFromTheirBackward() {
        // A 2021-style forward without strides, and its backward: grad_output [32,64,112,112]
        // gives the forward's output, so its FLOPs are exact (2*32*112*112*64*3*7*7).
        const auto withBackwards = [](std::vector<std::string> gradOutputs) {
            TraceText t;
            t.step(1, 0, 1000);
            shapedOp(t, "aten::conv2d", 10, 50,
                     "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []]",
                     R"(["float", "float", "", "", "", "", ""])");
            t.launch("volta_scudnn_128x64_relu_interior_nn_v1", 20, 10, 100, 100);
            int64_t at = 300;
            for (const std::string& g : gradOutputs) {
                shapedOp(t, "aten::convolution_backward", at, 50,
                         "[" + g +
                             ", [32, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], [], []]",
                         R"(["float", "float", "float", "", "", "", "", "", "", "", ""])");
                t.launch("volta_scudnn_128x64_stridedB_interior_nn_v1", at + 10, 10, at + 100, 100);
                at += 250;
            }
            const AnalysisResult r = analyze(*t.load(7));
            for (const OperatorCostRow& row : r.efficiency.operators)
                if (row.name == "aten::conv2d") return row.cost;
            return OperatorCost{};
        };
        OperatorCost c = withBackwards({"[32, 64, 112, 112]"});
        QVERIFY(c.sized && c.exact);
        QCOMPARE(c.flops, 7552892928.0);
        // Backwards that disagree say nothing: the stride-1 upper bound stays.
        c = withBackwards({"[32, 64, 112, 112]", "[32, 64, 56, 56]"});
        QVERIFY(c.sized && !c.exact);
        QCOMPARE(c.flops, 2.0 * 32 * 224 * 224 * 64 * 3 * 7 * 7);
    }

    void withoutShapesOrPeaks() {
        // No shapes: no FLOPs, a note says why.
        TraceText t;
        t.step(1, 0, 1000);
        t.cpu("aten::mm", 10, 100);
        t.launch("ampere_sgemm_128x64_nn", 20, 10, 40, 200);
        const AnalysisResult r = analyze(*onA100(t));
        QVERIFY(!r.efficiency.shapes);
        QCOMPARE(r.efficiency.modelFlops, 0.0);
        QVERIFY(!r.efficiency.notes.empty());
        QVERIFY(r.efficiency.devices.at(0).mfu < 0);
        // Shapes but a GPU the table does not know: FLOPs, no MFU, and why.
        TraceText u;
        u.step(1, 0, 1000);
        shapedOp(u, "aten::mm", 10, 100, test::kDims, R"(["float", "float"])");
        u.launch("ampere_sgemm_128x64_nn", 20, 10, 40, 200);
        const AnalysisResult q = analyze(*u.load());
        QCOMPARE(q.efficiency.modelFlops, 2.0 * 64 * 32 * 16);
        QVERIFY(q.efficiency.devices.at(0).mfu < 0);
        QVERIFY(q.efficiency.devices.at(0).why.find("Test GPU") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestEfficiency)
#include "test_efficiency.moc"
