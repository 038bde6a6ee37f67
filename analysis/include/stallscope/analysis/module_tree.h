#pragma once
// The nn.Module hierarchy (the TensorBoard plugin's Module view): the `nn.Module: <Name>_<k>`
// python_function ranges PyTorch records with with_stack=True (with_modules), merged by
// their path of module names, with host and device time.
#include "stallscope/analysis/analysis.h"

#include <string>
#include <vector>

namespace stallscope::analysis {

struct ModuleNode {
    std::string name;         // "Linear_0" ("nn.Module: " left out)
    int32_t parent = -1;      // -1 for a top-level module
    int32_t depth = 0;        // 0 for top-level modules
    uint64_t occurrences = 0; // ranges merged into the node
    uint64_t operators =
        0; // CPU operators inside it and not inside a child module (nested ones too)
    int64_t hostTotalNs = 0;       // the ranges' durations
    int64_t hostSelfNs = 0;        // minus the child modules' ranges
    int64_t deviceTotalNs = 0;     // GPU work launched inside, at any depth
    int64_t deviceSelfNs = 0;      // launched with no child module between
    std::vector<int32_t> children; // by host total, descending
    model::SliceId example;        // the first range
};

struct ModuleTree {
    std::vector<ModuleNode> nodes; // parents before their children
    std::vector<int32_t> roots;    // top-level modules, by host total descending
    int64_t deviceNs = 0;          // all GPU work of the window's devices in the window
    int64_t outsideNs = 0;         // of it, launched outside any module range
    bool backward = false;         // the window has backward-pass operators (names::isBackward)
    [[nodiscard]] bool empty() const { return nodes.empty(); }
};

/// The modules of `r`'s window (ranges starting in it) on every CPU thread; device time from
/// the GPU work of `r`'s devices starting in the window, charged along its launch call's
/// stack. Work launched outside module ranges (the backward pass runs on autograd threads)
/// is charged to none.
ModuleTree buildModuleTree(const model::Trace& t, const AnalysisResult& r);

} // namespace stallscope::analysis
