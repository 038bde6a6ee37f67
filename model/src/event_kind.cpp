#include "stallscope/model/event_kind.h"

#include <array>

namespace stallscope::model {

EventKind kindFromCategory(std::string_view cat, bool hasCategory) {
    // The legacy autograd profiler writes CPU operators without a category.
    if (!hasCategory) return EventKind::CpuOp;
    struct Entry {
        std::string_view cat;
        EventKind kind;
    };
    static constexpr std::array<Entry, 25> kTable{{
        {"cpu_op", EventKind::CpuOp},
        {"Operator", EventKind::CpuOp},
        {"user_annotation", EventKind::UserAnnotation},
        {"python_function", EventKind::PythonFunction},
        {"cuda_runtime", EventKind::Runtime},
        {"Runtime", EventKind::Runtime},
        {"cuda_driver", EventKind::Driver},
        {"Driver", EventKind::Driver},
        {"kernel", EventKind::Kernel},
        {"Kernel", EventKind::Kernel},
        {"gpu_memcpy", EventKind::Memcpy},
        {"Memcpy", EventKind::Memcpy},
        {"gpu_memset", EventKind::Memset},
        {"Memset", EventKind::Memset},
        {"gpu_user_annotation", EventKind::GpuUserAnnotation},
        {"cuda_sync", EventKind::CudaSync},
        {"cuda_event", EventKind::CudaEvent},
        {"overhead", EventKind::Overhead},
        {"Overhead", EventKind::Overhead},
        {"cuda_profiler_range", EventKind::ProfilerRange},
        {"Trace", EventKind::TraceSpan},
        {"collective_comm", EventKind::Communication},
        {"cpu_instant_event", EventKind::Instant},
        {"Python", EventKind::PythonFunction},
        {"python_function", EventKind::PythonFunction},
    }};
    for (const auto& e : kTable)
        if (e.cat == cat) return e.kind;
    return EventKind::Other;
}

std::string_view kindName(EventKind k) {
    static constexpr std::array<std::string_view, static_cast<size_t>(EventKind::Count)> kNames{
        "other",   "cpu_op",  "user_annotation", "python_function",     "runtime",
        "driver",  "kernel",  "memcpy",          "memset",              "gpu_user_annotation",
        "cuda_sync", "cuda_event", "overhead",   "profiler_range",      "trace_span",
        "communication", "instant"};
    const auto i = static_cast<size_t>(k);
    return i < kNames.size() ? kNames[i] : "other";
}

} // namespace stallscope::model
