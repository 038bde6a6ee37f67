#pragma once
// What an event is, independent of the category spelling of the Kineto era that wrote it.
#include <cstdint>
#include <string_view>

namespace stallscope::model {

enum class EventKind : uint8_t {
    Other = 0,          // unknown category: kept and shown as a generic event
    CpuOp,              // cpu_op, Operator (2021), legacy autograd events (no cat)
    UserAnnotation,     // user_annotation (record_function, ProfilerStep#N, DataLoader, optimizer)
    PythonFunction,     // python_function
    Runtime,            // cuda_runtime, Runtime (2021), hip runtime
    Driver,             // cuda_driver
    Kernel,             // kernel, Kernel (2021)
    Memcpy,             // gpu_memcpy, Memcpy (2021)
    Memset,             // gpu_memset, Memset (2021)
    GpuUserAnnotation,  // gpu_user_annotation
    CudaSync,           // cuda_sync (Stream Sync, Event Sync, Context Sync, Stream Wait Event)
    CudaEvent,          // cuda_event
    Overhead,           // overhead
    ProfilerRange,      // cuda_profiler_range (CUPTI range profiler)
    TraceSpan,          // Trace (profiler spans)
    Communication,      // collective_comm
    Instant,            // instant events and cpu_instant_event
    Count
};

/// Kind from the category as written; `hasCategory` false for events without "cat".
EventKind kindFromCategory(std::string_view cat, bool hasCategory);

/// GPU work in the sense of ../shared/spec/analysis.md: kernels, copies and memsets.
constexpr bool isGpuWork(EventKind k) {
    return k == EventKind::Kernel || k == EventKind::Memcpy || k == EventKind::Memset;
}
/// Events that live on a GPU row (device pid, stream tid).
constexpr bool isGpuSide(EventKind k) {
    return isGpuWork(k) || k == EventKind::GpuUserAnnotation || k == EventKind::CudaSync ||
           k == EventKind::ProfilerRange;
}
/// Host calls that can launch GPU work (linked through args.correlation).
constexpr bool isLaunchSide(EventKind k) {
    return k == EventKind::Runtime || k == EventKind::Driver;
}

std::string_view kindName(EventKind k);

} // namespace stallscope::model
