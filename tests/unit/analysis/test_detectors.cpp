// Every detector: a trace that must trigger it and a near miss that must not.
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/detector_catalogue.h"
#include "stallscope/analysis/finding_kind.h"

#include <QTest>

#include <filesystem>
#include <functional>
#include <set>

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

AnalysisResult run(const TraceText& t, int cc = 8, int64_t mem = 40'000'000'000) {
    auto trace = t.load(cc, mem);
    if (!trace) return {};
    return analyze(*trace);
}

/// Steps whose GPU phase is `busyUs` of kernels after `hostUs` of `hostWork`.
TraceText stepsWith(const std::function<void(TraceText&, int64_t)>& hostWork, int64_t hostUs, int64_t busyUs,
                    int steps = 4) {
    TraceText t;
    for (int s = 0; s < steps; ++s) {
        const int64_t b = s * (hostUs + busyUs + 20);
        t.step(s, b, hostUs + busyUs + 20);
        hostWork(t, b);
        t.launch("k_compute", b + hostUs, 5, b + hostUs + 10, busyUs);
    }
    return t;
}

} // namespace

class TestDetectors : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The detector table: one row per finding kind, names unique and round-tripping, and
    // docs/analysis.md's findings table lists exactly these kinds.
    void catalogueCoversEveryKindAndTheDocs() {
        const auto& cat = analysis::detectorCatalogue();
        QCOMPARE(cat.size(), size_t(analysis::FindingKind::Count));
        std::set<std::string_view> names;
        for (const auto& e : cat) {
            QVERIFY(names.insert(e.name).second);
            QCOMPARE(analysis::findingKindName(e.kind), e.name);
            analysis::FindingKind back{};
            QVERIFY(analysis::findingKindFromName(e.name, back));
            QCOMPARE(int(back), int(e.kind));
            QVERIFY(!e.firesWhen.empty() && !e.saving.empty());
        }
        analysis::FindingKind unknown{};
        QVERIFY(!analysis::findingKindFromName("no_such_kind", unknown));
        const std::string docs =
            test::readFile(std::filesystem::path(qgetenv("STALLSCOPE_SOURCE_DIR").toStdString()) /
                           "docs" / "analysis.md");
        QVERIFY(!docs.empty());
        std::set<std::string_view> documented;
        const size_t table = docs.find("| kind | fires when");
        QVERIFY(table != std::string::npos);
        for (size_t at = docs.find("\n| `", table);
             at != std::string::npos && docs.compare(at, 4, "\n| `") == 0;
             at = docs.find('\n', at + 1)) {
            const size_t b = at + 4, e = docs.find('`', b);
            QVERIFY(e != std::string::npos);
            const std::string name(std::string_view(docs).substr(b, e - b));
            QVERIFY2(names.count(name), qPrintable("docs/analysis.md lists an unknown kind " +
                                                   QString::fromStdString(name)));
            documented.insert(*names.find(name));
        }
        QCOMPARE(documented.size(), names.size());
    }

    // A graph capture: launches between Begin/EndCapture record, they do not run. One
    // context finding first, and no timing finding (the idle GPU says nothing).
    void graphCaptureSaysSoAndNothingElse() {
        TraceText t;
        t.runtime("hipStreamBeginCapture", 0, 5, t.nextCorrelation());
        for (int i = 0; i < 50; ++i)
            t.runtime("hipLaunchKernel", 10 + i * 20, 8, t.nextCorrelation());
        t.runtime("hipStreamEndCapture", 1100, 5, t.nextCorrelation());
        t.launch("k_real", 2000, 5, 2010, 3); // one launch that runs
        t.launch("k_real", 3000, 5, 3010, 3);
        const AnalysisResult r = run(t);
        QVERIFY(!r.findings.empty());
        QCOMPARE(r.findings.front().kind, FindingKind::GraphCapture);
        QCOMPARE(r.findings.size(), size_t(1));
        QVERIFY(r.findings.front().explanation.find("50 of the 52") != std::string::npos);
        QVERIFY(!r.findings.front().ranges.empty());
        // A training trace that captures a little at the start keeps its findings.
        TraceText u = stepsWith(
            [](TraceText& x, int64_t b) {
                x.cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 900);
            },
            1000, 200, 6);
        u.runtime("cudaStreamBeginCapture", 0, 1, u.nextCorrelation());
        u.runtime("cudaLaunchKernel", 2, 1, u.nextCorrelation());
        u.runtime("cudaStreamEndCapture", 4, 1, u.nextCorrelation());
        const AnalysisResult v = run(u);
        QVERIFY(!find(v, FindingKind::GraphCapture));
        QVERIFY(find(v, FindingKind::DataLoading));
    }

    // A synchronous device-to-host copy waits for the GPU like a synchronize: host_sync,
    // naming the call, its operator and the Python frame outside torch it came from.
    void syncCopyOutIsAHostSync() {
        TraceText t;
        for (int s = 0; s < 3; ++s) {
            const int64_t b = s * 3000;
            t.step(s, b, 2900);
            t.python("app/serve.py(40): decode_step", b + 10, 2800);
            t.python("torch/utils/_device.py(99): __torch_function__", b + 20, 2700);
            t.cpu("aten::copy_", b + 30, 2600);
            const int corr = t.nextCorrelation();
            t.runtime("cudaMemcpy", b + 40, 2500, corr);
            t.memcpy("Memcpy DtoH (Device -> Pageable)", b + 2500, 20, corr, 4096);
            t.launch("k_decode", b + 2600, 5, b + 2610, 200);
        }
        const AnalysisResult r = run(t);
        const Finding* f = find(r, FindingKind::HostSync);
        QVERIFY(f);
        QCOMPARE(r.findings.front().kind, FindingKind::HostSync);
        // The copy itself starts 2.46 ms into the call for reasons the trace does not show;
        // the replay keeps that, so removing the wait saves the host side only.
        QVERIFY2(f->savingShare > 0.5, qPrintable(QString::number(f->savingShare)));
        QVERIFY2(
            f->explanation.find(
                "`cudaMemcpy` under `aten::copy_`, called from `app/serve.py(40): decode_step`") !=
                std::string::npos,
            f->explanation.c_str());
        QVERIFY(!find(r, FindingKind::BlockingH2dCopy));
        QVERIFY(!find(r, FindingKind::LowUtilization));
    }

    // torch.compile compiling inside the window: said first; at >= 50 % of the window no
    // timing findings (the window is the compiler's); below, the others stay.
    void compilationInTheWindow() {
        auto trace = [](int64_t compileUs) {
            TraceText t;
            for (int s = 0; s < 4; ++s) {
                const int64_t b = s * 10000;
                t.step(s, b, 9000);
                if (s == 0)
                    t.annotation("_compile.compile_inner (dynamo_timed)", b + 10, compileUs);
                t.cpu("Torch-Compiled Region: 0/0", b + 10 + (s == 0 ? compileUs : 0), 300);
                t.launch("triton_poi_fused_add_0", b + 20 + (s == 0 ? compileUs : 0), 5,
                         b + 40 + (s == 0 ? compileUs : 0), 200);
            }
            return t;
        };
        // Compiling in the first step is warm-up: the warm-up finding names the compile phase
        // and the findings use the steady steps after it, which compile nothing.
        const AnalysisResult heavy = run(trace(8500));
        QVERIFY(!heavy.findings.empty());
        QCOMPARE(heavy.findings.front().kind, FindingKind::Warmup);
        QVERIFY2(heavy.findings.front().explanation.find("_compile.compile_inner (dynamo_timed)") !=
                     std::string::npos,
                 heavy.findings.front().explanation.c_str());
        QVERIFY(!find(heavy, FindingKind::Compilation));
        QVERIFY(heavy.warmup && heavy.warmup->steps == std::vector<int64_t>{0});
        QCOMPARE(heavy.window.startNs, 10000 * us);
        // Compiling again in a later step (a recompilation after a guard failed) is in the
        // steady window: the compilation finding says so.
        auto later = [](int64_t compileUs) {
            TraceText t;
            for (int s = 0; s < 4; ++s) {
                const int64_t b = s * 10000;
                t.step(s, b, 9000);
                const int64_t c = s == 2 ? compileUs : 0;
                if (s == 2)
                    t.annotation("_compile.compile_inner (dynamo_timed)", b + 10, compileUs);
                t.cpu(s == 2 ? "Torch-Compiled Region: 0/1" : "Torch-Compiled Region: 0/0",
                      b + 10 + c, 300);
                t.launch("triton_poi_fused_add_0", b + 20 + c, 5, b + 40 + c, 200);
            }
            return t;
        };
        const AnalysisResult recompiling = run(later(8500));
        const Finding* rc0 = find(recompiling, FindingKind::Compilation);
        QVERIFY(rc0);
        QCOMPARE(rc0->severity, FindingSeverity::High); // 8.5 of ~37 ms
        QVERIFY(!rc0->silencesTiming);
        QVERIFY(!recompiling.warmup);
        const AnalysisResult light = run(later(3000));
        const Finding* f = find(light, FindingKind::Compilation);
        QVERIFY(f);
        QVERIFY(f->explanation.find("include it") != std::string::npos);
        QVERIFY(light.findings.size() > 1);
        // A window that is mostly compiling: no timing findings.
        TraceText t;
        t.step(0, 0, 100000);
        t.annotation("OutputGraph.call_user_compiler (dynamo_timed)", 10, 90000);
        t.launch("k", 95000, 5, 95010, 100);
        const AnalysisResult mostly = run(t);
        QCOMPARE(mostly.findings.size(),
                 size_t(1)); // the warm-up, the whole window: no compilation twice
        QCOMPARE(mostly.findings.front().kind, FindingKind::Warmup);
        QVERIFY(mostly.findings.front().silencesTiming);
        // A recompilation is named even when compiling is short.
        TraceText r;
        for (int s = 0; s < 3; ++s) {
            r.step(s, s * 1000, 900);
            r.cpu(s == 2 ? "Torch-Compiled Region: 0/1" : "Torch-Compiled Region: 0/0",
                  s * 1000 + 10, 100);
            r.launch("k", s * 1000 + 20, 5, s * 1000 + 40, 500);
        }
        const AnalysisResult recompiled = run(r);
        const Finding* rc = find(recompiled, FindingKind::Compilation);
        QVERIFY(rc);
        QVERIFY2(rc->explanation.find("frame 0 ×1") != std::string::npos, rc->explanation.c_str());
        // No compile phase in the window: the recompiling happened before it.
        QVERIFY(rc->explanation.find("before it") != std::string::npos);
        QCOMPARE(rc->severity, FindingSeverity::Low);
    }

    void graphBreaksPerStep() {
        TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 1000;
            t.step(s, b, 900);
            for (int frame = 0; frame < 3; ++frame) {
                t.cpu("Torch-Compiled Region: " + std::to_string(frame) + "/0",
                      b + 10 + frame * 200, 150);
                t.launch("triton_poi_fused_" + std::to_string(frame), b + 20 + frame * 200, 5,
                         b + 40 + frame * 200, 100);
            }
        }
        const AnalysisResult r = run(t);
        const Finding* f = find(r, FindingKind::GraphBreaks);
        QVERIFY(f);
        QVERIFY2(f->title.find("3 graphs per step") != std::string::npos, f->title.c_str());
        QVERIFY(f->fix.find("torch._dynamo.explain") != std::string::npos);
        // One compiled frame per step: no word about breaks.
        TraceText one;
        for (int s = 0; s < 4; ++s) {
            one.step(s, s * 1000, 900);
            one.cpu("Torch-Compiled Region: 0/0", s * 1000 + 10, 150);
            one.launch("k", s * 1000 + 20, 5, s * 1000 + 40, 100);
        }
        QVERIFY(!find(run(one), FindingKind::GraphBreaks));
    }

    void dataLoading() {
        auto loader = [](TraceText& t, int64_t b) {
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 400);
        };
        const auto hit = run(stepsWith(loader, 400, 600));
        const Finding* f = find(hit, FindingKind::DataLoading);
        QVERIFY(f);
        QCOMPARE(f->savingNs, 4 * 400 * us);
        QCOMPARE(hit.findings.front().kind, FindingKind::DataLoading);  // the largest saving comes first
        QVERIFY(f->explanation.find("num_workers=0") != std::string::npos);
        QVERIFY(!f->evidence.empty() && !f->ranges.empty() && !f->snippet.empty());
        QCOMPARE(f->severity, FindingSeverity::High);
        // Near miss: 4% of step time is under the 5% threshold.
        auto little = [](TraceText& t, int64_t b) {
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 40);
        };
        QVERIFY(!find(run(stepsWith(little, 40, 940)), FindingKind::DataLoading));
    }

    void blockingH2dCopy() {
        auto pageable = [](TraceText& t, int64_t b) {
            const int c = t.nextCorrelation();
            t.runtime("cudaMemcpyAsync", b, 200, c);
            t.memcpy("Memcpy HtoD (Pageable -> Device)", b + 150, 50, c, 8 << 20);
        };
        const AnalysisResult result = run(stepsWith(pageable, 220, 800));  // keep it: find() points into it
        const Finding* f = find(result, FindingKind::BlockingH2dCopy);
        QVERIFY(f);
        QVERIFY(f->savingNs >= 4 * 50 * us);
        auto pinned = [](TraceText& t, int64_t b) {
            const int c = t.nextCorrelation();
            t.runtime("cudaMemcpyAsync", b, 10, c);
            t.memcpy("Memcpy HtoD (Pinned -> Device)", b + 20, 50, c, 8 << 20);
        };
        QVERIFY(!find(run(stepsWith(pinned, 220, 800)), FindingKind::BlockingH2dCopy));
    }

    void hostSync() {
        // Each step waits for the GPU, then does 300 us of host work the GPU then waits for.
        TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 1000;
            t.step(s, b, 1000);
            t.cpu("aten::mul", b, 300);
            t.launch("k", b + 300, 5, b + 310, 600);
            t.cpu("aten::item", b + 320, 600);
            t.cpu("aten::_local_scalar_dense", b + 320, 600);
        }
        const AnalysisResult result = run(t);  // keep it: find() points into it
        const Finding* f = find(result, FindingKind::HostSync);
        QVERIFY(f);
        QVERIFY(f->title.find("1 time") != std::string::npos);
        QVERIFY(f->savingNs > 0);
        // Near miss: the sync returns at once and the next kernel follows immediately.
        TraceText n;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 1000;
            n.step(s, b, 1000);
            n.launch("k", b, 5, b + 10, 985);
            n.cpu("aten::item", b + 996, 1);
        }
        QVERIFY(!find(run(n), FindingKind::HostSync));
    }

    // Serving loops have no ProfilerStep: their iterations, marked by user annotations that
    // launch most of the GPU work, are the steps (numbers and bracketed parts vary).
    void servingIterationsAreSteps() {
        TraceText t;
        for (int i = 0; i < 3; ++i) {
            const int64_t b = i * 1000;
            t.annotation("step[DECODE bs=" + std::to_string(8 + i) + "]", b, 900);
            t.cpu("aten::mm", b + 10, 50);
            t.launch("sm90_xmma_gemm_bf16bf16_bf16f32", b + 20, 10, b + 40, 700);
        }
        t.annotation("log_metrics", 3000, 50); // one annotation that launches nothing
        const AnalysisResult r = run(t);
        QCOMPARE(r.steps.size(), size_t(3));
        QCOMPARE(r.steps[1].label, std::string("step[DECODE bs=9]"));
        QCOMPARE(r.stepTimes.count, size_t(3));
        QVERIFY2(r.window.description.find("3 iterations `step[...]`") != std::string::npos,
                 r.window.description.c_str());
        // An annotation that launches a minority of the work is not a loop.
        TraceText n;
        n.annotation("warmup", 0, 100);
        n.launch("k", 10, 5, 20, 50);
        for (int i = 0; i < 3; ++i) n.launch("k", 200 + i * 100, 5, 210 + i * 100, 50);
        QVERIFY(run(n).steps.empty());
    }

    // The CPU-dispatch root cause, with its evidence: launch-bound steps...
    void cpuDispatchLaunchBound() {
        TraceText t;
        t.step(1, 0, 2000);
        for (int i = 0; i < 100; ++i) t.launch("tiny_elementwise", i * 20, 15, i * 20 + 16, 3);
        const AnalysisResult result = run(t);  // keep it: find() points into it
        const Finding* f = find(result, FindingKind::CpuDispatch);
        QVERIFY(f);
        QCOMPARE(f->replayFix, Fix::CudaGraphs);
        QVERIFY(f->title.find("launches set the pace") != std::string::npos);
        QVERIFY(f->explanation.find("1 of 1 steps are launch-bound") != std::string::npos);
        QVERIFY2(f->savingNs > 500 * us,
                 std::to_string(f->savingNs).c_str()); // CUDA Graphs: ~1 us per launch
        QVERIFY(f->fix.rfind("1. capture the step in CUDA Graphs", 0) == 0);
        // CPU work between the launches: moved "out of the step" where there are steps, off
        // the launching thread where there are none (an Nsight or rocprof export).
        for (const bool steps : {true, false}) {
            TraceText c;
            if (steps) c.step(1, 0, 4000);
            for (int i = 0; i < 40; ++i) {
                c.cpu("aten::cpu_work", i * 100, 80);
                c.launch("tiny_elementwise", i * 100 + 82, 10, i * 100 + 93, 5);
            }
            const AnalysisResult cr = run(c);
            const Finding* cf = find(cr, FindingKind::CpuDispatch);
            QVERIFY(cf);
            QVERIFY2(cf->fix.find(steps ? "move CPU work out of the step"
                                        : "move CPU work off the thread that launches the GPU "
                                          "work") != std::string::npos,
                     cf->fix.c_str());
            QVERIFY2(steps || cf->fix.find("the step") == std::string::npos, cf->fix.c_str());
        }
        // Near miss: long kernels, the CPU runs ahead (queue builds up).
        TraceText n;
        n.step(1, 0, 5520);
        for (int i = 0; i < 100; ++i) n.launch("big_kernel", i * 10, 5, 20 + i * 55, 55);
        QVERIFY(!find(run(n), FindingKind::CpuDispatch));
    }

    // ... kernels too small to fill the GPU (a small batch) ...
    void cpuDispatchSmallKernels() {
        auto make = [](double blocks, double occupancy) {
            TraceText t;
            t.step(1, 0, 4000);
            for (int i = 0; i < 100; ++i) {
                const int c = t.nextCorrelation();
                t.runtime("cudaLaunchKernel", i * 40, 30, c);
                t.kernel("volta_sgemm_32x32_sliced1x4_nn", i * 40 + 32, 6, c, 7, 0, blocks, occupancy);
            }
            return t;
        };
        const AnalysisResult small = run(make(0.1, 10));
        const Finding* f = find(small, FindingKind::CpuDispatch);
        QVERIFY(f);
        QVERIFY(f->explanation.find("Kernels are small") != std::string::npos);
        // No backward pass: inference, so more inputs per call, not a training batch size.
        QVERIFY(f->fix.find("batch more inputs") != std::string::npos);
        QVERIFY(f->fix.find("raise the batch size") == std::string::npos);
        TraceText training = make(0.1, 10);
        training.cpu("autograd::engine::evaluate_function: MmBackward0", 3990, 5);
        const AnalysisResult trained = run(training);
        const Finding* tf = find(trained, FindingKind::CpuDispatch);
        QVERIFY(tf && tf->fix.find("raise the batch size") != std::string::npos);
        const AnalysisResult big = run(make(4.0, 60));
        const Finding* g = find(big, FindingKind::CpuDispatch);
        QVERIFY(g);
        QVERIFY(g->explanation.find("Kernels are small") == std::string::npos);
        QVERIFY(g->fix.find("batch more inputs") == std::string::npos);
    }

    void noTensorCores() {
        // The step ends when the host has waited for the matmul (a synchronize): twice as
        // fast, the step is 400 us shorter.
        auto make = [](const char* name) {
            TraceText t;
            t.step(1, 0, 820);
            t.launch(name, 0, 5, 10, 800);
            t.runtime("cudaDeviceSynchronize", 6, 809, 900);
            return t;
        };
        const AnalysisResult result = run(make("volta_sgemm_128x64_nn"), 7);  // keep it: find() points into it
        const Finding* f = find(result, FindingKind::NoTensorCores);
        QVERIFY(f);
        QCOMPARE(f->savingNs, 400 * us);
        QVERIFY(!find(run(make("volta_h884gemm_128x64_nn"), 7), FindingKind::NoTensorCores));
        QVERIFY(!find(run(make("maxwell_sgemm_128x64_nn"), 6), FindingKind::NoTensorCores));  // no Tensor Cores
    }

    // ... and whether the model is light, from the matrix multiplies' input shapes: said
    // only when the FLOPs per step are small, and "cannot be told" without shapes.
    void cpuDispatchLightModel() {
        auto make = [](const char* dims) {
            TraceText t;
            t.step(1, 0, 3000);
            for (int i = 0; i < 20; ++i) {
                if (dims)
                    t.add(
                        R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 1, "ts": )" +
                        std::to_string(i * 150) + R"(, "dur": 140, "args": {"Input Dims": )" +
                        dims + "}}");
                else
                    t.cpu("aten::mm", i * 150, 140);
                t.launch("vectorized_elementwise_kernel", i * 150 + 100, 20, i * 150 + 125, 10);
            }
            return t;
        };
        const AnalysisResult light = run(make("[[32, 64], [64, 64]]"));
        const Finding* f = find(light, FindingKind::CpuDispatch);
        QVERIFY(f);
        QVERIFY(f->title.find("too light") != std::string::npos);
        QVERIFY(f->explanation.find("5.24 MFLOP per step") != std::string::npos); // 20 x 2*32*64*64
        const AnalysisResult heavy = run(make("[[8192, 8192], [8192, 8192]]"));
        const Finding* g = find(heavy, FindingKind::CpuDispatch);
        QVERIFY(g);
        QVERIFY(g->title.find("too light") == std::string::npos);
        QVERIFY(g->explanation.find("the model is not light") != std::string::npos);
        const AnalysisResult unknown = run(make(nullptr));
        const Finding* h = find(unknown, FindingKind::CpuDispatch);
        QVERIFY(h);
        QVERIFY(h->title.find("too light") == std::string::npos);
        QVERIFY(h->explanation.find("cannot be told") != std::string::npos);
    }

    void loggingCheckpoint() {
        auto save = [](TraceText& t, int64_t b) { t.python("torch/serialization.py(380): save", b, 200); };
        const AnalysisResult result = run(stepsWith(save, 200, 800));  // keep it: find() points into it
        const Finding* f = find(result, FindingKind::LoggingCheckpoint);
        QVERIFY(f);
        QCOMPARE(f->savingNs, 4 * 200 * us);
        // Near miss: the save runs while the GPU is busy.
        TraceText n;
        n.step(1, 0, 1000);
        n.launch("k", 0, 5, 10, 990);
        n.python("torch/serialization.py(380): save", 100, 500);
        QVERIFY(!find(run(n), FindingKind::LoggingCheckpoint));
    }

    void gpuNotUsed() {
        TraceText t;
        t.step(1, 0, 1000);
        t.cpu("aten::mm", 10, 900);
        const auto r = run(t, -1);
        const Finding* f = find(r, FindingKind::GpuNotUsed);
        QVERIFY(f);
        QCOMPARE(f->severity, FindingSeverity::High);
        QVERIFY(f->explanation.find("CPU-only") != std::string::npos);
        TraceText n;
        n.step(1, 0, 1000);
        n.launch("k", 10, 5, 20, 900);
        QVERIFY(!find(run(n), FindingKind::GpuNotUsed));
    }

    // CPU-only traces: the step thread's time is attributed instead of GPU idle.
    void cpuOnlyDataLoadingAndLogging() {
        TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 1000;
            t.step(s, b, 1000);
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 300);
            t.cpu("aten::conv2d", b + 300, 500);
            t.python("torch/utils/tensorboard/writer.py(400): add_scalar", b + 800, 100);
        }
        const AnalysisResult r = run(t, -1);
        QVERIFY(r.devices.empty());
        QVERIFY(r.hostOnly);
        QCOMPARE(r.hostOnly->windowNs, r.window.length());
        int64_t sum = 0;
        for (const auto& c : r.hostOnly->time.causes) sum += c.ns;
        QCOMPARE(sum, r.hostOnly->windowNs);  // every nanosecond charged once
        QCOMPARE(r.hostOnly->steps.size(), size_t(4));
        const Finding* dl = find(r, FindingKind::DataLoading);
        QVERIFY(dl);
        QCOMPARE(dl->device, -1);
        QCOMPARE(dl->id, std::string("data_loading"));
        QCOMPARE(dl->savingNs, 4 * 300 * us);
        QVERIFY(dl->explanation.find("no GPU work") != std::string::npos);
        QVERIFY(!dl->ranges.empty() && !dl->evidence.empty());
        const Finding* lg = find(r, FindingKind::LoggingCheckpoint);
        QVERIFY(lg);
        QCOMPARE(lg->savingNs, 4 * 100 * us);
        QCOMPARE(lg->device, -1);
        QVERIFY(find(r, FindingKind::GpuNotUsed));
        QVERIFY(!find(r, FindingKind::HostSync));  // .item() on the CPU waits for nothing
    }

    void cpuOnlyNearMisses() {
        // Loader 4 % and logging 2 % of step time: under the 5 % and 3 % thresholds. Input
        // preparation outside a DataLoader range is CPU work (no leading-gap rule on the CPU).
        TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 1000;
            t.step(s, b, 1000);
            t.annotation("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", b, 40);
            t.python("torchvision/transforms/transforms.py(95): __call__", b + 40, 300);
            t.cpu("aten::conv2d", b + 340, 640);
            t.python("torch/utils/tensorboard/writer.py(400): add_scalar", b + 980, 20);
        }
        const AnalysisResult r = run(t, -1);
        QVERIFY(r.hostOnly);
        QCOMPARE(r.hostOnly->time.causes[size_t(IdleCause::DataLoading)].ns, 4 * 40 * us);
        QVERIFY(!find(r, FindingKind::DataLoading));
        QVERIFY(!find(r, FindingKind::LoggingCheckpoint));
        // Without steps there is nothing to attribute to.
        TraceText n;
        n.cpu("aten::conv2d", 0, 500);
        QVERIFY(!run(n, -1).hostOnly);
    }

    void loggingBelowItsThreshold() {
        // 2 % of the window: logging every N steps, as the fix says; not a finding.
        auto log = [](TraceText& t, int64_t b) { t.python("logging/__init__.py(1500): info", b, 20); };
        QVERIFY(!find(run(stepsWith(log, 20, 960)), FindingKind::LoggingCheckpoint));
    }

    void commExposed() {
        auto make = [](bool overlap) {
            TraceText t;
            // The step ends when the host has waited for the compute (a synchronize).
            t.step(1, 0, overlap ? 320 : 710);
            t.launch("ncclKernel_AllReduce_RING_LL_Sum_float", 0, 5, 10, 300, 9);
            t.launch("compute", 6, 5, overlap ? 10 : 400, 300, 7);
            t.runtime("cudaDeviceSynchronize", 12, overlap ? 303 : 693, 900);
            return t;
        };
        const AnalysisResult result = run(make(false));  // keep it: find() points into it
        const Finding* f = find(result, FindingKind::CommExposed);
        QVERIFY(f);
        QCOMPARE(f->savingNs, 300 * us);
        QVERIFY(!find(run(make(true)), FindingKind::CommExposed));
    }

    void memoryPressure() {
        auto make = [](int64_t reserved) {
            TraceText t;
            t.step(1, 0, 1000);
            t.launch("k", 0, 5, 10, 900);
            t.memory(500, reserved);
            return t;
        };
        QVERIFY(find(run(make(38'000'000'000), 8, 40'000'000'000), FindingKind::MemoryPressure));
        QVERIFY(!find(run(make(20'000'000'000), 8, 40'000'000'000), FindingKind::MemoryPressure));
    }

    void cpuWorkAndLowUtilization() {
        auto cpuWork = [](TraceText& t, int64_t b) { t.cpu("aten::nonzero", b, 300); };
        const auto r = run(stepsWith(cpuWork, 300, 700));
        const Finding* f = find(r, FindingKind::CpuDispatch);
        QVERIFY(f);
        QCOMPARE(f->waitedFor.at(0).first, std::string("aten::nonzero"));
        auto little = [](TraceText& t, int64_t b) { t.cpu("aten::nonzero", b, 30); };
        QVERIFY(!find(run(stepsWith(little, 30, 970)), FindingKind::CpuDispatch));
        // Idle that no specific finding explains (work waiting on the GPU side) -> low_utilization.
        TraceText u;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 1000;
            u.step(s, b, 1000);
            u.launch("k_a", b, 5, b + 10, 90, 7);
            u.launch("k_waits", b + 20, 5, b + 700, 290, 8);
        }
        const auto lu = run(u);
        const Finding* low = find(lu, FindingKind::LowUtilization);
        QVERIFY(low);
        QVERIFY(low->explanation.find("gpu_dependency") != std::string::npos);
        QVERIFY(low->fix.find("launching thread") != std::string::npos);
        QVERIFY(low->fix.find("GPU side") != std::string::npos);
        QVERIFY(!find(run(stepsWith(little, 30, 970)), FindingKind::LowUtilization));
        // Kernels with no launch call in the trace (a rocprofv3 file without --hip-trace): no
        // launching thread to look at and no GPU-side wait; the fix says to record the host.
        TraceText bare;
        for (int s = 0; s < 4; ++s) {
            bare.step(s, s * 1000, 1000);
            bare.kernel("k_alone", s * 1000 + 700, 100, 0);
        }
        const auto bareResult = run(bare);
        const Finding* noHost = find(bareResult, FindingKind::LowUtilization);
        QVERIFY(noHost);
        QVERIFY2(noHost->fix.find("holds no launch call") != std::string::npos,
                 noHost->fix.c_str());
        QVERIFY(noHost->fix.find("launching thread") == std::string::npos);
        QVERIFY(noHost->fix.find("GPU side") == std::string::npos);
    }

    void findingsAreOrderedAndBounded() {
        auto loader = [](TraceText& t, int64_t b) {
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 400);
            t.python("torch/serialization.py(380): save", b + 400, 100);
        };
        const auto r = run(stepsWith(loader, 500, 500));
        QVERIFY(r.findings.size() >= 2);
        for (size_t i = 1; i < r.findings.size(); ++i) QVERIFY(r.findings[i - 1].savingNs >= r.findings[i].savingNs);
        for (const auto& f : r.findings) {
            QVERIFY(f.savingNs <= r.window.length());
            for (const auto& rg : f.ranges) QVERIFY(rg.start >= r.window.startNs && rg.end <= r.window.endNs);
        }
    }
};

QTEST_GUILESS_MAIN(TestDetectors)
#include "test_detectors.moc"
