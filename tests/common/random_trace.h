#pragma once
// Seeded random Kineto traces for property tests: the shapes that break level-of-detail
// code (random nesting deeper than the lanes shown, equal timestamps, zero and 1 ns
// durations, children that outlive their parent, thousands of tracks, one lane with a
// million tiny slices, timestamps at both ends of int64, GPU work with launches). The
// same seed always gives the same text, so a failure names the seed that reproduces it.
#include <cstdint>
#include <random>
#include <string>

namespace stallscope::test {

enum class RandomShape { Nested, ManyTracks, TinyLane, Gpu, Extremes, Mixed };

inline const char* randomShapeName(RandomShape s) {
    switch (s) {
    case RandomShape::Nested: return "nested";
    case RandomShape::ManyTracks: return "many-tracks";
    case RandomShape::TinyLane: return "tiny-lane";
    case RandomShape::Gpu: return "gpu";
    case RandomShape::Extremes: return "extremes";
    case RandomShape::Mixed: return "mixed";
    }
    return "?";
}

class RandomTrace {
public:
    RandomTrace(uint64_t seed, RandomShape shape, size_t tinyLaneSlices = 1'000'000)
        : m_rng(seed), m_shape(shape), m_tiny(tinyLaneSlices) {}

    std::string json() {
        m_out = "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"Random GPU\", "
                "\"totalGlobalMem\": 80000000000, \"computeMajor\": 9, \"computeMinor\": 0, \"numSms\": 132}],\n"
                "\"traceEvents\": [\n";
        m_first = true;
        switch (m_shape) {
        case RandomShape::Nested: nested(1, 1, 0, 4000); break;
        case RandomShape::ManyTracks:
            for (int tid = 1; tid <= 3000; ++tid) nested(1 + tid % 7, tid, int64_t(uniform(0, 5000)) * 1000, 6);
            break;
        case RandomShape::TinyLane: tinyLane(); break;
        case RandomShape::Gpu: gpu(); break;
        case RandomShape::Extremes: extremes(); break;
        case RandomShape::Mixed:
            nested(1, 1, 0, 800);
            gpu();
            tinyLaneOf(50'000, 3);
            break;
        }
        m_out += "\n]}\n";
        return std::move(m_out);
    }

private:
    uint64_t uniform(uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(m_rng); }
    bool chance(double p) { return std::bernoulli_distribution(p)(m_rng); }

    /// ts and dur are ns, written as µs with three decimals (Kineto's ns resolution).
    static std::string us(int64_t ns) {
        const bool neg = ns < 0;
        const uint64_t a = neg ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
        std::string frac = std::to_string(a % 1000);
        frac.insert(0, 3 - frac.size(), '0');
        return (neg ? "-" : "") + std::to_string(a / 1000) + "." + frac;
    }
    void event(const std::string& e) {
        if (!m_first) m_out += ",\n";
        m_first = false;
        m_out += e;
    }
    void slice(const char* cat, const std::string& name, int pid, int tid, int64_t ts, int64_t dur,
               const std::string& args = {}) {
        event("{\"ph\": \"X\", \"cat\": \"" + std::string(cat) + "\", \"name\": \"" + name + "\", \"pid\": " +
              std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ", \"ts\": " + us(ts) + ", \"dur\": " +
              us(dur) + (args.empty() ? "" : ", \"args\": {" + args + "}") + "}");
    }
    std::string opName() { return "op_" + std::to_string(uniform(0, 40)); }

    /// A random call forest on one thread: children start at or after their parent (often
    /// at the same ns), some end after it, depths go past the 32 lanes shown.
    void nested(int pid, int tid, int64_t t0, int roots) {
        int64_t t = t0;
        for (int r = 0; r < roots; ++r) {
            const int64_t dur = chance(0.1) ? 0 : chance(0.2) ? 1 : int64_t(uniform(1, 200'000));
            subtree(pid, tid, t, dur, 0);
            t += chance(0.3) ? 0 : dur + int64_t(uniform(0, 5000));
        }
    }
    void subtree(int pid, int tid, int64_t ts, int64_t dur, int depth) {
        slice("cpu_op", opName(), pid, tid, ts, dur);
        if (depth > 40 || dur < 2) return;
        const int children = int(uniform(0, depth < 3 ? 4 : 2));
        int64_t at = ts;
        for (int c = 0; c < children; ++c) {
            const int64_t room = ts + dur - at;
            if (room <= 0) break;
            const int64_t cd = chance(0.05) ? room + int64_t(uniform(1, 1000))  // outlives its parent
                                            : int64_t(uniform(0, uint64_t(room)));
            subtree(pid, tid, chance(0.3) ? at : at + int64_t(uniform(0, uint64_t(room - std::min(room, cd)))), cd,
                    depth + 1);
            at += cd;
        }
    }
    void tinyLaneOf(size_t n, int tid) {
        int64_t t = 0;
        for (size_t i = 0; i < n; ++i) {
            const int64_t dur = int64_t(uniform(0, 3));
            slice("cpu_op", i % 3 ? "tiny" : "tiny_b", 2, tid, t, dur);
            t += chance(0.2) ? 0 : dur + int64_t(uniform(0, 2));  // equal starts and touching slices
        }
    }
    void tinyLane() {
        tinyLaneOf(m_tiny, 1);
        slice("cpu_op", "whole", 2, 2, 0, int64_t(m_tiny) * 3);
    }
    void gpu() {
        int64_t t = 0, gpuT = 0;
        for (int i = 0; i < 3000; ++i) {
            const int corr = ++m_corr;
            const int64_t launch = int64_t(uniform(1, 8000));
            slice("cuda_runtime", "cudaLaunchKernel", 1, 1, t, launch, "\"correlation\": " + std::to_string(corr));
            gpuT = std::max(gpuT, t + launch) + int64_t(uniform(0, 3000));
            const int64_t kd = chance(0.1) ? 0 : int64_t(uniform(1, 50'000));
            const int stream = 7 + int(uniform(0, 3));
            slice("kernel", "kernel_" + std::to_string(uniform(0, 30)), 0, stream, gpuT, kd,
                  "\"correlation\": " + std::to_string(corr) + ", \"stream\": " + std::to_string(stream) +
                      ", \"device\": 0");
            gpuT += chance(0.5) ? kd : 0;  // overlapping kernels on one stream
            t += launch + int64_t(uniform(0, 20'000));
        }
    }
    void extremes() {
        const int64_t lo = -9'223'372'036'854'000'000, hi = 9'223'372'036'854'000'000;
        slice("cpu_op", "at_the_start", 1, 1, lo, 1000);
        slice("cpu_op", "longest", 1, 2, lo, hi);  // ends near 0: start + dur stays in range
        slice("cpu_op", "near_zero", 1, 1, 0, 0);
        slice("cpu_op", "at_the_end", 1, 1, hi - 5000, 4000);
        for (int i = 0; i < 200; ++i) slice("cpu_op", opName(), 1, 3, int64_t(uniform(0, 1'000'000'000)), int64_t(uniform(0, 3)));
        slice("kernel", "far_kernel", 0, 7, hi - 2000, 1000, "\"stream\": 7, \"device\": 0");
    }

    std::mt19937_64 m_rng;
    RandomShape m_shape;
    size_t m_tiny;
    std::string m_out;
    bool m_first = true;
    int m_corr = 0;
};

} // namespace stallscope::test
