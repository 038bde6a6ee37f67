#pragma once
// Two small runs of one program for the compare tests (analysis/run_diff.h, the compare view):
// BEFORE has 2 steps, each an fp32 aten::mm on a 200 us volta_sgemm and an aten::add with a
// kernel of its own (30 us); AFTER has 4 steps, each the same mm on a 100 us ampere_sgemm and
// the mm again in bf16 (a 50 us ampere bf16 GEMM), and no aten::add.
#include "trace_text.h"

#include <string>

namespace stallscope::test {

/// An operator with "Input Dims" and "Input type" (record_shapes=True).
inline void shapedOp(TraceText& t, const std::string& name, int64_t ts, int64_t dur,
                     const std::string& dims, const std::string& types) {
    t.add(R"({"ph": "X", "cat": "cpu_op", "name": ")" + name +
          R"(", "pid": 100, "tid": 1, "ts": )" + std::to_string(ts) + R"(, "dur": )" +
          std::to_string(dur) + R"(, "args": {"Input Dims": )" + dims + R"(, "Input type": )" +
          types + "}}");
}

inline const std::string kDims = "[[64, 32], [32, 16]]";

/// BEFORE: 2 steps, each an fp32 mm (a 200 us volta_sgemm), an aten::add and a kernel of
/// one's own under aten::add.
inline TraceText beforeTrace() {
    TraceText t;
    for (int s = 0; s < 2; ++s) {
        const int64_t at = s * 1000;
        t.step(s + 1, at, 1000);
        shapedOp(t, "aten::mm", at + 10, 100, kDims, R"(["float", "float"])");
        t.launch("volta_sgemm_128x64_nn", at + 20, 10, at + 40, 200);
        t.cpu("aten::add", at + 300, 50);
        t.launch("my_own_kernel", at + 310, 10, at + 400, 30);
    }
    return t;
}

/// AFTER: 4 steps, each the fp32 mm on an ampere_sgemm (100 us) and the same mm in bf16 (an
/// ampere bf16 GEMM, 50 us); no aten::add.
inline TraceText afterTrace() {
    TraceText t;
    for (int s = 0; s < 4; ++s) {
        const int64_t at = s * 1000;
        t.step(s + 1, at, 1000);
        shapedOp(t, "aten::mm", at + 10, 100, kDims, R"(["float", "float"])");
        t.launch("ampere_sgemm_128x64_nn", at + 20, 10, at + 40, 100);
        shapedOp(t, "aten::mm", at + 200, 100, kDims, R"(["c10::BFloat16", "c10::BFloat16"])");
        t.launch("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", at + 210, 10, at + 240, 50);
    }
    return t;
}

} // namespace stallscope::test
