// A synthetic training trace built in memory, shared by the benchmarks (Qt-free: model only).
//
// ProfilerStep > op > child op > launch call on the main thread, one kernel per launch on a
// stream, a DataLoader thread: about `events` slices, 4 per op group, 500 groups per step.
#pragma once

#include "stallscope/model/trace_builder.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace stallscope::bench {

struct SyntheticTrace {
    std::shared_ptr<const model::Trace> trace;
    int64_t stepNs = 0; ///< the length of one ProfilerStep
};

/// About `events` events: 4 per op group, 500 groups per step (deterministic: fixed seed).
inline SyntheticTrace makeSyntheticTrace(size_t events) {
    model::TraceBuilder b;
    const auto proc = b.process(model::RowKey{100, {}});
    const auto main = b.track(proc, model::RowKey{1, {}});
    const auto loader = b.track(proc, model::RowKey{2, {}});
    const auto gpu = b.process(model::RowKey{0, {}});
    const auto stream = b.track(gpu, model::RowKey{7, {}});
    const auto cpuOp = b.intern("cpu_op"), ann = b.intern("user_annotation"),
               rt = b.intern("cuda_runtime"), kcat = b.intern("kernel");
    const auto launch = b.intern("cudaLaunchKernel");
    std::vector<model::StringId> ops, children, kernels;
    for (int i = 0; i < 40; ++i) {
        ops.push_back(b.intern("aten::op_" + std::to_string(i)));
        children.push_back(b.intern("aten::_child_" + std::to_string(i)));
        kernels.push_back(b.intern("void kernel_" + std::to_string(i) +
                                   "<float, 128>(float const*, float*, int)"));
    }
    std::mt19937_64 rng(42);
    const size_t groupsPerStep = 500;
    const size_t steps = std::max<size_t>(1, events / (groupsPerStep * 4));
    int64_t t = 1'000'000'000;
    uint32_t corr = 1;
    auto add = [&](int64_t s, int64_t d, model::TrackId tr, model::StringId name,
                   model::StringId cat, model::EventKind kind,
                   uint32_t c = model::SliceTable::kNoCorrelation) {
        model::SliceRow r;
        r.start = s;
        r.dur = d;
        r.track = tr;
        r.name = name;
        r.category = cat;
        r.kind = kind;
        r.correlation = c;
        b.appendSlice(r);
    };
    SyntheticTrace out;
    for (size_t st = 0; st < steps; ++st) {
        const int64_t stepStart = t;
        int64_t gpuT = t + 30'000;
        for (size_t g = 0; g < groupsPerStep; ++g) {
            const size_t k = rng() % 40;
            const int64_t opDur = 8'000 + int64_t(rng() % 30'000);
            add(t + 1'000, opDur, main, ops[k], cpuOp, model::EventKind::CpuOp);
            add(t + 2'000, opDur - 2'000, main, children[k], cpuOp, model::EventKind::CpuOp);
            add(t + 3'000, 4'000, main, launch, rt, model::EventKind::Runtime, corr);
            const int64_t kDur = 2'000 + int64_t(rng() % 40'000);
            gpuT = std::max(gpuT, t + 10'000) + 500;
            add(gpuT, kDur, stream, kernels[k], kcat, model::EventKind::Kernel, corr);
            gpuT += kDur;
            ++corr;
            t += opDur + 2'000;
        }
        const int64_t dl = 3'000'000;
        add(t, dl, loader,
            b.intern("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"), ann,
            model::EventKind::UserAnnotation);
        t += dl;
        add(stepStart, t - stepStart, main, b.intern("ProfilerStep#" + std::to_string(st)), ann,
            model::EventKind::UserAnnotation);
        out.stepNs = t - stepStart;
        t = std::max(t, gpuT) + 10'000;
    }
    out.trace = b.finish();
    return out;
}

} // namespace stallscope::bench
