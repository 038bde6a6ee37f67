#pragma once
// Names and categories for CUPTI activity records, and which API records are kept.
//
// How CUPTI records become pb::Activity messages (stallscope_cupti_convert.cpp). Names and
// categories are the ones torch.profiler (Kineto) writes, so a live capture reads like a
// Kineto trace; the recorder may rebuild names from the typed fields, which are always set.
//
// clang-format off
//   CUPTI kind (struct)          Activity.kind    category           name
//   CONCURRENT_KERNEL (Kernel10) KERNEL           kernel             demangled kernel name
//   MEMCPY (Memcpy6)             MEMCPY           gpu_memcpy         Memcpy HtoD (Pinned -> Device)
//   MEMCPY2 (MemcpyPtoP4)        MEMCPY           gpu_memcpy         Memcpy PtoP (Device -> Device)
//   MEMSET (Memset4)             MEMSET           gpu_memset         Memset (Device)
//   RUNTIME (API)                RUNTIME          cuda_runtime       cudaLaunchKernel (cbid name)
//   DRIVER (API)                 DRIVER           cuda_driver        cuLaunchKernel (cbid name)
//   SYNCHRONIZATION (Synch..2)   SYNCHRONIZATION  cuda_sync          Stream Sync, Event Sync,
//                                                         Context Sync, Stream Wait Event
//   MARKER (Marker2) START+END   NVTX_RANGE       user_annotation    the NVTX message
//   MARKER INSTANTANEOUS         NVTX_MARK        cpu_instant_event  the NVTX message
//   OVERHEAD (Overhead3)         OVERHEAD         overhead           Buffer Flush, Resource, ...
//   EXTERNAL_CORRELATION         (none)           sets external_id on every activity with that
//                                                 correlation id (the API call and its GPU work)
//   DEVICE (Device5)             pb::Device       name, compute capability, memory, SMs, ...
//   CONTEXT (Context3)           (none)           context -> device, for synchronisation rows
// clang-format on
//
// Fields: GPU work carries device, context, stream (the row), correlation (= the launching
// API record's correlation: memcpy uses runtimeCorrelationId when CUPTI sets it), pid (the
// target). Kernels: grid/block, registers_per_thread, static/dynamic shared memory. Copies:
// copy_kind, src_kind, dst_kind (pageable/pinned/device/...), bytes, dst_device (peer
// copies). Memsets: bytes, dst_kind = the memory kind set. API records and NVTX: pid and tid
// (the OS thread id, see stallscope_cupti_links.h). Synchronisation: context, the device of
// that context, stream (-1 for context/event synchronisation), correlation. Overheads: the
// object they belong to (thread: pid/tid; device/context/stream: those fields).
// Stream and context ids CUPTI marks as invalid (0xFFFFFFFF) become -1.
//
// NVTX names: the message, prefixed "domain: " outside the default domain.
// Strings: string id 0 is always "" (StringTable), so category_id/name_id 0 mean "none".
//
// API records kept (Kineto's choice; STALLSCOPE_CAPTURE_ALL_API=1 keeps every record):
// every runtime call except cudaGetDevice, cudaSetDevice, cudaGetLastError, cudaEventCreate,
// cudaEventCreateWithFlags and cudaEventDestroy; driver calls only when they launch or move
// work or map memory (cuLaunch*, cuMemcpy*, cuMemset*, cuGraphLaunch*, cu*Synchronize,
// cuStreamWaitEvent, cuMemCreate/Map/Unmap/Release, cuMem*ShareableHandle), as called directly
// by the program (Triton, NCCL) rather than through the runtime.
// CUDA 13 routes <<<>>> launches through "__cudaLaunchKernel"; it is named cudaLaunchKernel.
#include <cstdint>
#include <string>
#include <string_view>

namespace stallscope::capture::cupti {

inline constexpr std::string_view kCategoryKernel = "kernel";
inline constexpr std::string_view kCategoryMemcpy = "gpu_memcpy";
inline constexpr std::string_view kCategoryMemset = "gpu_memset";
inline constexpr std::string_view kCategoryRuntime = "cuda_runtime";
inline constexpr std::string_view kCategoryDriver = "cuda_driver";
inline constexpr std::string_view kCategorySync = "cuda_sync";
inline constexpr std::string_view kCategoryNvtx = "user_annotation";
inline constexpr std::string_view kCategoryNvtxMark = "cpu_instant_event";
inline constexpr std::string_view kCategoryOverhead = "overhead";

/// "HtoD", "DtoH", ..., "PtoP"; "<unknown>" otherwise (CUpti_ActivityMemcpyKind).
std::string_view memcpyKindName(uint32_t copyKind);
/// "Pageable", "Pinned", "Device", ...; "Unknown" (CUpti_ActivityMemoryKind).
std::string_view memoryKindName(uint32_t memoryKind);
/// "Memcpy HtoD (Pageable -> Device)".
std::string memcpyName(uint32_t copyKind, uint32_t srcKind, uint32_t dstKind);
/// "Memset (Device)".
std::string memsetName(uint32_t memoryKind);
/// "Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event", "Unknown Sync".
std::string_view syncTypeName(uint32_t syncType);
/// "Buffer Flush", "Instrumentation", ... (CUpti_ActivityOverheadKind).
std::string_view overheadKindName(uint32_t overheadKind);

/// The enum name CUPTI's headers give a callback id ("cudaLaunchKernel_v7000"), empty when
/// the id is unknown to the headers this was built with.
std::string_view runtimeCbidEnumName(uint32_t cbid);
std::string_view driverCbidEnumName(uint32_t cbid);
/// The function's name: the version suffix removed ("cudaLaunchKernel_v7000" ->
/// "cudaLaunchKernel"), CUDA 13's "__cudaLaunchKernel" named as the call the program wrote.
std::string apiDisplayName(std::string_view enumName);
/// The display name of a runtime/driver callback id; "cudaRuntimeApi#<cbid>" when unknown.
std::string runtimeApiName(uint32_t cbid);
std::string driverApiName(uint32_t cbid);

/// Whether a runtime/driver API record is kept (see the list above).
bool keepRuntimeApi(uint32_t cbid);
bool keepDriverApi(uint32_t cbid);

/// Demangles a kernel's name (Itanium ABI); the input unchanged when it is not mangled.
std::string demangleKernelName(const char* mangled);

} // namespace stallscope::capture::cupti
