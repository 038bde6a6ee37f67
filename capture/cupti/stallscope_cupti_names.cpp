#include "stallscope_cupti_names.h"

#include <cupti.h>

#include <cxxabi.h>

#include <array>
#include <cstdlib>
#include <memory>

namespace stallscope::capture::cupti {

namespace {

struct CbidName {
    uint32_t cbid;
    const char* name;
};

// Generated at configure time from the toolkit's cupti_runtime_cbid.h / cupti_driver_cbid.h
// (see CMakeLists.txt): kRuntimeCbidNames[] and kDriverCbidNames[].
#include "stallscope_cupti_cbid_names.inc"

template <size_t N> std::string_view lookup(const CbidName (&table)[N], uint32_t cbid) {
    for (const CbidName& e : table)
        if (e.cbid == cbid) return e.name;
    return {};
}

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

} // namespace

std::string_view memcpyKindName(uint32_t copyKind) {
    static constexpr std::array<std::string_view, 11> kNames = {"<unknown>", "HtoD", "DtoH", "HtoA",
                                                                "AtoH",      "AtoA", "AtoD", "DtoA",
                                                                "DtoD",      "HtoH", "PtoP"};
    return copyKind < kNames.size() && copyKind != 0 ? kNames[copyKind] : kNames[0];
}

std::string_view memoryKindName(uint32_t memoryKind) {
    static constexpr std::array<std::string_view, 8> kNames = {
        "Unknown", "Pageable", "Pinned",        "Device",
        "Array",   "Managed",  "Device Static", "Managed Static"};
    return memoryKind < kNames.size() ? kNames[memoryKind] : kNames[0];
}

std::string memcpyName(uint32_t copyKind, uint32_t srcKind, uint32_t dstKind) {
    std::string s = "Memcpy ";
    s += memcpyKindName(copyKind);
    s += " (";
    s += memoryKindName(srcKind);
    s += " -> ";
    s += memoryKindName(dstKind);
    s += ')';
    return s;
}

std::string memsetName(uint32_t memoryKind) {
    return "Memset (" + std::string(memoryKindName(memoryKind)) + ")";
}

std::string_view syncTypeName(uint32_t syncType) {
    switch (syncType) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
        return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
        return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
        return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
        return "Context Sync";
    default:
        return "Unknown Sync";
    }
}

std::string_view overheadKindName(uint32_t overheadKind) {
    switch (overheadKind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
        return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
        return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
        return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
        return "Resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
        return "Module Loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
        return "Lazy Function Loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
        return "Command Buffer Full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
        return "Activity Buffer Request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
        return "UVM Activity Init";
    default:
        return "Unknown";
    }
}

std::string_view runtimeCbidEnumName(uint32_t cbid) {
    return lookup(kRuntimeCbidNames, cbid);
}
std::string_view driverCbidEnumName(uint32_t cbid) {
    return lookup(kDriverCbidNames, cbid);
}

std::string apiDisplayName(std::string_view enumName) {
    // Strip a trailing "_v<digits>" (the API version the callback id was introduced with).
    const size_t v = enumName.rfind("_v");
    if (v != std::string_view::npos && v + 2 < enumName.size() &&
        enumName.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
        enumName = enumName.substr(0, v);
    // CUDA 13: the <<<>>> launch and cudaLaunchKernel go through __cudaLaunchKernel.
    if (startsWith(enumName, "__cudaLaunchKernel")) enumName.remove_prefix(2);
    return std::string(enumName);
}

std::string runtimeApiName(uint32_t cbid) {
    const std::string_view e = runtimeCbidEnumName(cbid);
    return e.empty() ? "cudaRuntimeApi#" + std::to_string(cbid) : apiDisplayName(e);
}

std::string driverApiName(uint32_t cbid) {
    const std::string_view e = driverCbidEnumName(cbid);
    return e.empty() ? "cudaDriverApi#" + std::to_string(cbid) : apiDisplayName(e);
}

bool keepRuntimeApi(uint32_t cbid) {
    switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020:
    case CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020:
        return false;
    default:
        return true;
    }
}

bool keepDriverApi(uint32_t cbid) {
    const std::string name = driverApiName(cbid);
    const std::string_view n = name;
    static constexpr std::array<std::string_view, 6> kPrefixes = {
        "cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch", "cuStreamWaitEvent", "cuMemCreate"};
    for (std::string_view p : kPrefixes)
        if (startsWith(n, p)) return true;
    static constexpr std::array<std::string_view, 9> kExact = {"cuStreamSynchronize",
                                                               "cuCtxSynchronize",
                                                               "cuEventSynchronize",
                                                               "cuStreamSynchronize_ptsz",
                                                               "cuMemMap",
                                                               "cuMemUnmap",
                                                               "cuMemRelease",
                                                               "cuMemExportToShareableHandle",
                                                               "cuMemImportFromShareableHandle"};
    for (std::string_view e : kExact)
        if (n == e) return true;
    return false;
}

std::string demangleKernelName(const char* mangled) {
    if (mangled == nullptr) return "<unnamed kernel>";
    if (mangled[0] != '_' || mangled[1] != 'Z') return mangled;
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
    return status == 0 && out ? std::string(out.get()) : std::string(mangled);
}

} // namespace stallscope::capture::cupti
