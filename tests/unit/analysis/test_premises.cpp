// Issue 25: each finding, and each sentence in it, only when its premise holds in the trace.
// One tiny trace per premise, with its near miss: the sentence appears when the trace shows
// the premise and not when it does not.
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"

#include <QTest>

#include <algorithm>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {

constexpr int64_t us = 1000;

const Finding* find(const AnalysisResult& r, FindingKind k) {
    for (const auto& f : r.findings)
        if (f.kind == k) return &f;
    return nullptr;
}

AnalysisResult run(const TraceText& t, int cc = 8) {
    auto trace = t.load(cc);
    if (!trace) return {};
    return analyze(*trace);
}

bool has(const std::string& text, const char* words) {
    return text.find(words) != std::string::npos;
}

/// Steps of `hostUs` host work (what `host` adds at the step's start) then a kernel.
TraceText steps(int n, int64_t hostUs, int64_t busyUs,
                const std::function<void(TraceText&, int64_t)>& host) {
    TraceText t;
    for (int s = 0; s < n; ++s) {
        const int64_t b = s * (hostUs + busyUs + 20);
        t.step(s, b, hostUs + busyUs + 20);
        host(t, b);
        t.launch("k_compute", b + hostUs, 5, b + hostUs + 10, busyUs);
    }
    return t;
}

} // namespace

class TestPremises : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // A transformer's own modules in a step's leading gap are not input preparation: no
    // "loading and preparing data" without input-pipeline evidence (a GH200 inference trace
    // with no DataLoader was told "the training thread was loading data").
    void dataLoadingNeedsAnInputPipeline() {
        const auto model = run(steps(4, 400, 600, [](TraceText& t, int64_t b) {
            t.python("models/llama.py(80): TransformerBlock.forward", b, 380);
            t.python("diffusers/attention_processor.py(1200): AttnProcessor2_0.__call__", b + 10,
                     100);
        }));
        QVERIFY(!find(model, FindingKind::DataLoading));
        const auto tokenizer = run(steps(4, 400, 600, [](TraceText& t, int64_t b) {
            t.python("transformers/tokenization_utils_base.py(2800): __call__", b, 380);
        }));
        const Finding* f = find(tokenizer, FindingKind::DataLoading);
        QVERIFY(f);
        // No DataLoader in the trace: no DataLoader snippet with num_workers as if one existed.
        QVERIFY2(has(f->fix, "into DataLoader workers") || has(f->fix, "DataLoader workers"),
                 f->fix.c_str());
        QVERIFY(has(f->explanation, "outside any DataLoader"));
        QVERIFY(!has(f->explanation, "training thread")); // no backward pass in the trace
    }

    // Training words only with a backward pass.
    void trainingWordsNeedABackwardPass() {
        auto sync = [](TraceText& t, int64_t b) { t.runtime("cudaStreamSynchronize", b, 390, 0); };
        TraceText inference = steps(4, 400, 600, sync);
        const AnalysisResult a = run(inference);
        const Finding* hs = find(a, FindingKind::HostSync);
        QVERIFY(hs);
        QVERIFY2(has(hs->title, "The loop waits"), hs->title.c_str());
        QVERIFY(!has(hs->snippet, "train_step") && !has(hs->explanation, "loss.item()"));
        TraceText training = steps(4, 400, 600, sync);
        training.cpu("autograd::engine::evaluate_function: AddmmBackward0", 5, 1);
        const AnalysisResult b = run(training);
        const Finding* ht = find(b, FindingKind::HostSync);
        QVERIFY(ht && has(ht->title, "The training loop waits"));
    }

    // "No GPU work" tells apart a model on the CPU from a capture that lost the GPU side.
    void noGpuWorkOrNoGpuRecords() {
        TraceText launched;
        launched.step(1, 0, 1000);
        for (int i = 0; i < 5; ++i) launched.runtime("cudaLaunchKernel", 100 + i * 100, 10, 10 + i);
        const AnalysisResult r = run(launched);
        QVERIFY(!find(r, FindingKind::GpuNotUsed));
        const Finding* nr = find(r, FindingKind::GpuNotRecorded);
        QVERIFY(nr);
        QVERIFY(has(nr->explanation, "5 launch calls"));
        QVERIFY(!has(nr->fix, "model.to") && has(nr->fix, "ProfilerActivity.CUDA"));
        TraceText cpu;
        cpu.step(1, 0, 1000);
        cpu.cpu("aten::mm", 100, 500);
        const AnalysisResult c = run(cpu);
        QVERIFY(find(c, FindingKind::GpuNotUsed));
        QVERIFY(!find(c, FindingKind::GpuNotRecorded));
    }

    // A kernel of one's own is not taken for FP32 by its name; a library kernel is, and its
    // fix fits the GPU: TF32 only from Ampere on; Volta gets float16 autocast.
    void precisionClaimsNeedEvidenceAndFitTheGpu() {
        auto matmuls = [](const char* name) {
            TraceText t;
            t.step(1, 0, 2000);
            for (int i = 0; i < 4; ++i) t.launch(name, i * 500, 5, i * 500 + 10, 450);
            return t;
        };
        QVERIFY(!find(run(matmuls("matmul_k(float*, float*, float*, int)"), 8),
                      FindingKind::NoTensorCores));
        const AnalysisResult volta = run(matmuls("volta_sgemm_128x64_nn"), 7);
        const Finding* v = find(volta, FindingKind::NoTensorCores);
        QVERIFY(v);
        QVERIFY2(!has(v->fix, "TF32") || has(v->fix, "need"), v->fix.c_str());
        QVERIFY(!has(v->snippet, "set_float32_matmul_precision") && !has(v->snippet, "bfloat16"));
        QVERIFY(has(v->snippet, "float16"));
        QVERIFY(!has(v->snippet, "GradScaler")); // no backward pass: inference
        QVERIFY(has(v->explanation, "no TF32"));
        QVERIFY(v->severity != FindingSeverity::High); // names alone
        const AnalysisResult ampere = run(matmuls("ampere_sgemm_128x64_nn"), 8);
        const Finding* a = find(ampere, FindingKind::NoTensorCores);
        QVERIFY(a && has(a->snippet, "set_float32_matmul_precision"));
        // Names alone: the operators carry no input types, and the text says so only then.
        QVERIFY(has(a->explanation, "carry no input types"));
    }

    // The optimizer fix names the optimizer the trace runs.
    void optimizerFixFitsTheOptimizer() {
        const auto r = run(steps(4, 400, 600, [](TraceText& t, int64_t b) {
            t.annotation("Optimizer.step#SGD.step", b, 390);
            t.cpu("aten::add_", b + 10, 370);
        }));
        const Finding* f = find(r, FindingKind::CpuDispatch);
        QVERIFY(f);
        QVERIFY2(has(f->fix, "make SGD fused"), f->fix.c_str());
        QVERIFY(!has(f->snippet, "AdamW"));
    }

    // Without steps the texts speak of the window.
    void withoutStepsTheWindow() {
        TraceText t;
        for (int i = 0; i < 100; ++i) {
            const int c = t.nextCorrelation();
            t.runtime("cudaLaunchKernel", i * 40, 30, c);
            t.kernel("vectorized_elementwise_kernel", i * 40 + 32, 6, c);
        }
        const AnalysisResult r = run(t);
        const Finding* f = find(r, FindingKind::CpuDispatch);
        QVERIFY(f);
        QVERIFY2(!has(f->explanation, "step time") && !has(f->explanation, "of 1 steps"),
                 f->explanation.c_str());
        QVERIFY(has(f->explanation, "of the window"));
        QCOMPARE(shareBase(r), std::string_view("the window"));
    }

    // A library's own autotune cache lookup is not torch.compile compiling.
    void libraryAutotuneIsNotCompilation() {
        const auto r = run(steps(4, 400, 600, [](TraceText& t, int64_t b) {
            t.python("flashinfer/autotuner.py(400): choose_one", b, 390);
        }));
        QVERIFY(!find(r, FindingKind::Compilation));
        QVERIFY(!r.warmup);
    }

    // Compiled frames repeating without ProfilerStep are graph breaks too.
    void graphBreaksWithoutSteps() {
        TraceText t;
        for (int it = 0; it < 3; ++it)
            for (int frame = 0; frame < 4; ++frame) {
                const int64_t b = it * 1000 + frame * 200;
                t.cpu("Torch-Compiled Region: " + std::to_string(frame) + "/0", b, 150);
                t.launch("triton_poi_fused_" + std::to_string(frame), b + 10, 5, b + 30, 100);
            }
        const AnalysisResult r = run(t);
        const Finding* f = find(r, FindingKind::GraphBreaks);
        QVERIFY(f);
        QVERIFY2(has(f->title, "4 graphs per iteration"), f->title.c_str());
    }

    // The list is in the order it says: no medium before a high; a names-only finding is
    // never high.
    void orderedAsSaid() {
        const auto r = run(steps(4, 400, 600, [](TraceText& t, int64_t b) {
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 390);
        }));
        bool silencing = true;
        FindingSeverity last = FindingSeverity::High;
        for (const Finding& f : r.findings) {
            if (silencing && f.silencesTiming) continue;
            silencing = false;
            QVERIFY(f.severity >= last);
            last = f.severity;
            QVERIFY(!(f.severity == FindingSeverity::High && f.confidence <= 0.5));
        }
    }

    // A collective's exposed time is not called the network's: one rank cannot tell.
    void collectivesDoNotBlameTheNetwork() {
        TraceText t;
        for (int s = 0; s < 3; ++s) {
            const int64_t b = s * 1000;
            t.step(s, b, 1000);
            t.launch("k_compute", b, 5, b + 10, 300);
            t.launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL", b + 20, 5, b + 320, 600);
        }
        const AnalysisResult r = run(t);
        const Finding* f = find(r, FindingKind::CommExposed);
        QVERIFY(f);
        QVERIFY(!has(f->explanation, "network") && !has(f->title, "network"));
        QVERIFY(has(f->explanation, "last rank"));
        QVERIFY(!has(f->snippet, "DistributedDataParallel")); // no backward pass
    }

    // Frees every step: allocator churn, with the fixes the evidence supports.
    void allocatorChurn() {
        const auto r = run(steps(4, 400, 600, [](TraceText& t, int64_t b) {
            t.python("torch/cuda/memory.py(192): empty_cache", b, 390);
            t.runtime("hipFree", b + 10, 370, 0);
        }));
        const Finding* f = find(r, FindingKind::AllocatorChurn);
        QVERIFY(f);
        QVERIFY(!find(r, FindingKind::CpuDispatch) ||
                find(r, FindingKind::CpuDispatch)->savingNs < f->savingNs);
        QVERIFY2(has(f->fix, "1. Remove torch.cuda.empty_cache()"), f->fix.c_str());
        QVERIFY(has(f->fix, "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True")); // hip names
        QVERIFY(has(f->explanation, "4 of 4 steps"));
        QCOMPARE(f->replayFix, Fix::KeepAllocations);
        QVERIFY(f->savingNs > 3 * 300 * us);
        const auto cuda = run(steps(
            4, 400, 600, [](TraceText& t, int64_t b) { t.runtime("cudaFree", b + 10, 370, 0); }));
        const Finding* g = find(cuda, FindingKind::AllocatorChurn);
        QVERIFY(g && has(g->fix, "PYTORCH_CUDA_ALLOC_CONF") && !has(g->fix, "empty_cache"));
    }

    // Warm-up: leading steps of one-off work are context; the findings use the steady steps,
    // and the steps keep their warm-up figures, marked.
    void warmupIsContext() {
        TraceText t;
        for (int s = 0; s < 5; ++s) {
            const int64_t b = s * 10'000;
            t.step(s, b, 10'000);
            if (s < 2) {
                t.runtime("cudaStreamCreateWithFlags", b, 3000, 0);
                t.launch(s == 0 ? "k_first" : "k_second", b + 3000, 5000, b + 8010, 1000);
            }
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b + 9100,
                         800);
            t.launch("k_compute", b + 9910, 5, b + 9920, 80);
        }
        const AnalysisResult r = run(t);
        QVERIFY(r.warmup);
        QCOMPARE(r.warmup->steps, (std::vector<int64_t>{0, 1}));
        QVERIFY(!r.warmup->wholeWindow);
        QCOMPARE(r.window.startNs, 20'000 * us);
        QVERIFY2(has(r.window.description, "after 2 warm-up steps"), r.window.description.c_str());
        const Finding* w = find(r, FindingKind::Warmup);
        QVERIFY(w);
        QVERIFY(has(w->explanation, "`cudaStreamCreateWithFlags` ×2"));
        QVERIFY(has(w->explanation, "first launches"));
        QCOMPARE(r.stepTimes.count, size_t(3));
        QCOMPARE(r.steps.size(), size_t(5));
        QVERIFY(r.steps[0].warmup && r.steps[1].warmup && !r.steps[2].warmup);
        const DeviceMetrics& d = r.devices.at(0);
        QCOMPARE(d.steps.size(), size_t(5));
        QVERIFY(d.steps[0].warmup && d.steps[0].endNs > d.steps[0].startNs);
        // The steady steps' data loading is the finding; no set-up cost in it.
        QVERIFY(find(r, FindingKind::DataLoading));
        QCOMPARE(d.idle.causes[size_t(IdleCause::Setup)].ns, int64_t(0));
        // The same trace with warm-up kept in the window.
        AnalysisOptions keep;
        keep.excludeWarmup = false;
        const AnalysisResult all = analyze(*t.load(), keep);
        QVERIFY(!all.warmup);
        QVERIFY(all.devices.at(0).idle.causes[size_t(IdleCause::Setup)].ns > 0);
    }
};

QTEST_GUILESS_MAIN(TestPremises)
#include "test_premises.moc"
