#pragma once
// TensorBoard folders of several captures per worker, as torch.profiler's
// tensorboard_trace_handler writes them ({worker}.{epoch_ms}.pt.trace.json, one file per
// capture): warm-up captures dominated by one-off work with the GPU idle, and steady ones
// with the GPU busy most of each step. The workspace, CLI and GUI tests of capture series.
#include "test_support.h"
#include "trace_text.h"

#include <filesystem>
#include <string>

namespace stallscope::test {

/// A warm-up capture starting at t0 (us): two steps whose GPU waits on set-up — a stream
/// created (4 ms), the first launch of a GEMM (4 ms) and of a softmax (3 ms) — with 0.4 ms
/// of kernels in 14 ms: about 3 % busy, every step warm-up.
inline std::string warmUpCapture(int64_t t0) {
    TraceText t;
    t.step(1, t0, 9'000);
    t.runtime("cudaStreamCreateWithFlags", t0 + 100, 4'000, 0);
    t.launch("k_gemm", t0 + 4'200, 4'000, t0 + 8'210, 200);
    t.launch("k_relu", t0 + 8'300, 10, t0 + 8'420, 100);
    t.step(2, t0 + 9'000, 5'000);
    t.launch("k_softmax", t0 + 9'050, 3'000, t0 + 12'060, 100);
    t.launch("k_relu", t0 + 12'200, 10, t0 + 12'220, 50);
    return t.json();
}

/// A steady capture starting at t0 (us): six 2 ms steps, each a GEMM (1.1 ms) and a ReLU
/// (0.7 ms) launched in 10 us: the GPU busy 90 % of every step.
inline std::string steadyCapture(int64_t t0) {
    TraceText t;
    for (int i = 0; i < 6; ++i) {
        const int64_t s = t0 + i * 2'000;
        t.step(10 + i, s, 2'000);
        t.launch("k_gemm", s + 20, 10, s + 40, 1'100);
        t.launch("k_relu", s + 40, 10, s + 1'140, 700);
    }
    return t.json();
}

/// A capture starting at t0 (us) with one warm-up step of `warmUs` (half of it creating a
/// stream, a third of it the first launch of a GEMM) before steady 2 ms steps, two of them
/// after a long warm-up (> 5 ms), six after a short one: the analysis sets the warm-up apart
/// and analyses the steady steps. 9 ms of warm-up in 13 ms is most of the capture; 3 ms in
/// 15 ms is not.
inline std::string warmUpThenSteadyCapture(int64_t t0, int64_t warmUs) {
    TraceText t;
    t.step(1, t0, warmUs);
    t.runtime("cudaStreamCreateWithFlags", t0 + 100, warmUs / 2, 0);
    t.launch("k_gemm", t0 + warmUs / 2 + 200, warmUs / 3, t0 + warmUs / 2 + 210 + warmUs / 3, 100);
    const int n = warmUs > 5'000 ? 2 : 6;
    for (int i = 0; i < n; ++i) {
        const int64_t s = t0 + warmUs + i * 2'000;
        t.step(10 + i, s, 2'000);
        t.launch("k_gemm", s + 20, 10, s + 40, 1'100);
        t.launch("k_relu", s + 40, 10, s + 1'140, 700);
    }
    return t.json();
}

/// With distributedInfo: the rank as torch.distributed recorded it.
inline std::string withRank(std::string json, int rank, int worldSize) {
    const std::string head = "{\"schemaVersion\": 1,";
    return head +
           " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) +
           ", \"world_size\": " + std::to_string(worldSize) + "}," + json.substr(head.size());
}

/// Writes one worker's captures into `dir`: `kinds` has a letter per capture, in time order:
/// 'W' warm-up (warmUpCapture), 'S' steady (steadyCapture), 'P' most of it warm-up and 'p' a
/// short warm-up before steady steps (warmUpThenSteadyCapture); capture i is `{worker}.{(i + 1) *
/// 1000}.pt.trace.json`, 10 s after the one before. rank >= 0 adds distributedInfo.
inline void writeCaptures(const std::filesystem::path& dir, const std::string& worker,
                          const std::string& kinds, int rank = -1, int worldSize = 1) {
    for (size_t i = 0; i < kinds.size(); ++i) {
        const int64_t t0 = 5'000'000'000 + int64_t(i) * 10'000'000;
        std::string json = kinds[i] == 'W'   ? warmUpCapture(t0)
                           : kinds[i] == 'P' ? warmUpThenSteadyCapture(t0, 9'000)
                           : kinds[i] == 'p' ? warmUpThenSteadyCapture(t0, 3'000)
                                             : steadyCapture(t0);
        if (rank >= 0) json = withRank(std::move(json), rank, worldSize);
        writeFile(dir / (worker + "." + std::to_string((i + 1) * 1000) + ".pt.trace.json"), json);
    }
}

} // namespace stallscope::test
