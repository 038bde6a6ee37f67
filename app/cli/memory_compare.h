#pragma once
// `stallscope-cli memory --compare BEFORE AFTER`: two memory recordings of one change (fp32 vs
// bf16, AMP off vs on), device by device: the peaks, what was reserved and held when an
// allocator snapshot was taken, what was live at the peak by frame, operator or category, and
// the largest blocks live at the peak, before -> after.
#include "stallscope/analysis/memory.h"

#include <ostream>
#include <string>

namespace stallscope::cli {

struct MemorySide {
    std::string path;
    const model::Trace* trace = nullptr;
    const analysis::MemoryAnalysis* memory = nullptr;
};

void writeMemoryComparison(std::ostream& out, const MemorySide& before, const MemorySide& after,
                           bool json, size_t top);

} // namespace stallscope::cli
