#pragma once
// CPU operators grouped as the TensorBoard plugin's Operator view groups them: by name, by
// name and input shapes ("Input Dims", recorded with record_shapes=True), or by name and
// call stack (the "Call stack" argument, else the python_function frames around the
// operator, recorded with with_stack=True). Read on demand: shapes and stacks come from
// the events' arguments, which the model keeps raw.
#include "stallscope/analysis/analysis.h"

#include <atomic>
#include <string>
#include <vector>

namespace stallscope::analysis {

// InputShapesAndTypes (for comparing runs): the shapes, a newline, then "Input type".
enum class OperatorGrouping : uint8_t { Name, InputShapes, CallStack, InputShapesAndTypes };

struct OperatorGroup {
    OperatorStat stat;  // name, calls, host self/total, device self/total, first call
    std::string detail; // the shapes ("[[32, 3, 224, 224], [64, 3, 7, 7]]") or the stack,
                        // innermost frame first, one per line; empty when the trace has none
};

struct OperatorGroups {
    std::vector<OperatorGroup> rows; // by self time, descending
    uint64_t callsWithDetail = 0;    // calls whose shapes or stack the trace has
    uint64_t calls = 0;
    bool cancelled = false;
};

/// The window's operators of `r` (its window and devices) grouped by `g`. With Name the
/// rows equal r.stats.operators. `cancel` is polled between threads.
OperatorGroups groupOperators(const model::Trace& t, const AnalysisResult& r, OperatorGrouping g,
                              const std::atomic<bool>* cancel = nullptr);

} // namespace stallscope::analysis
