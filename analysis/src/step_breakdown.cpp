#include "stallscope/analysis/step_breakdown.h"

namespace stallscope::analysis {

const std::array<BreakdownCategory, kBreakdownCategories>& breakdownCategories() {
    static const std::array<BreakdownCategory, kBreakdownCategories> table{{
        {"kernel", "Kernel", "kern", true, &RoleBreakdown::kernel},
        {"memcpy", "Memcpy", "cpy", true, &RoleBreakdown::memcpy},
        {"memset", "Memset", "set", true, &RoleBreakdown::memset},
        {"communication", "Communication", "comm", true, &RoleBreakdown::communication},
        {"runtime", "Runtime", "rt", false, &RoleBreakdown::runtime},
        {"dataloader", "Data loading", "data", false, &RoleBreakdown::dataLoader},
        {"cpu_exec", "CPU", "cpu", false, &RoleBreakdown::cpuExec},
        {"other", "Other", "other", false, &RoleBreakdown::other},
    }};
    return table;
}

StepBreakdown stepBreakdown(const DeviceMetrics& d) {
    StepBreakdown b;
    b.device = d.device;
    const auto& cats = breakdownCategories();
    size_t steady = 0;
    auto inWindow = [](const StepMetrics& st) { return st.endNs > st.startNs; };
    for (const StepMetrics& st : d.steps) steady += !st.warmup && inWindow(st);
    for (const StepMetrics& st : d.steps) {
        if (!inWindow(st)) continue;
        StepBreakdownRow row;
        row.number = st.number;
        row.warmup = st.warmup;
        row.startNs = st.startNs;
        row.endNs = st.endNs;
        for (size_t k = 0; k < cats.size(); ++k) row.ns[k] = st.roles.*(cats[k].field);
        row.idleByCause = st.idleByCause;
        if (!st.warmup || steady == 0) {
            for (size_t k = 0; k < cats.size(); ++k) b.meanNs[k] += row.ns[k];
            b.meanStepNs += row.lengthNs();
            ++b.meanOver;
        }
        b.steps.push_back(row);
    }
    if (b.meanOver > 0) {
        const auto n = static_cast<int64_t>(b.meanOver);
        for (int64_t& v : b.meanNs) v /= n;
        b.meanStepNs /= n;
    }
    return b;
}

} // namespace stallscope::analysis
