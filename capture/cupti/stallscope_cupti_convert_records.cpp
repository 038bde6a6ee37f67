// One function per CUPTI record kind (see the mapping in stallscope_cupti_names.h).
#include "stallscope_cupti_convert.h"

#include "stallscope_cupti_names.h"

namespace stallscope::capture::cupti {

namespace {

// CUPTI marks "no stream/context" with all bits set; rows use -1.
int32_t row(uint32_t id) {
    return id == 0xFFFFFFFFu ? -1 : static_cast<int32_t>(id);
}

pb::Activity::CopyKind copyKind(uint32_t k) {
    return pb::Activity::CopyKind_IsValid(static_cast<int>(k)) ? pb::Activity::CopyKind(k)
                                                               : pb::Activity::COPY_UNKNOWN;
}

pb::Activity::MemoryKind memoryKind(uint32_t k) {
    return pb::Activity::MemoryKind_IsValid(static_cast<int>(k)) ? pb::Activity::MemoryKind(k)
                                                                 : pb::Activity::MEMORY_UNKNOWN;
}

void gpuRow(pb::Activity& a, int64_t pid, uint32_t device, uint32_t context, uint32_t stream) {
    a.set_pid(pid);
    a.set_device(row(device));
    a.set_context(row(context));
    a.set_stream(row(stream));
}

} // namespace

// The CUPTI enums and the protocol's enums share their numbers.
static_assert(int{pb::Activity::HTOD} == int{CUPTI_ACTIVITY_MEMCPY_KIND_HTOD});
static_assert(int{pb::Activity::PTOP} == int{CUPTI_ACTIVITY_MEMCPY_KIND_PTOP});
static_assert(int{pb::Activity::PAGEABLE} == int{CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE});
static_assert(int{pb::Activity::PINNED} == int{CUPTI_ACTIVITY_MEMORY_KIND_PINNED});
static_assert(int{pb::Activity::MANAGED_STATIC} == int{CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC});

void ActivityConverter::kernel(const CUpti_ActivityKernel10& k) {
    if (!timed(k.start, k.end)) return;
    pb::Activity* a =
        add(pb::Activity::KERNEL, k.start, k.end, kernelNameId(k.name), kCategoryKernel);
    if (a == nullptr) return;
    gpuRow(*a, m_options.pid, k.deviceId, k.contextId, k.streamId);
    setCorrelation(*a, k.correlationId);
    a->set_grid_x(k.gridX);
    a->set_grid_y(k.gridY);
    a->set_grid_z(k.gridZ);
    a->set_block_x(k.blockX);
    a->set_block_y(k.blockY);
    a->set_block_z(k.blockZ);
    a->set_registers_per_thread(k.registersPerThread);
    a->set_static_shared_memory(k.staticSharedMemory);
    a->set_dynamic_shared_memory(k.dynamicSharedMemory);
}

void ActivityConverter::memcpy(const CUpti_ActivityMemcpy6& m) {
    if (!timed(m.start, m.end)) return;
    pb::Activity* a = add(pb::Activity::MEMCPY, m.start, m.end,
                          copyNameId(m.copyKind, m.srcKind, m.dstKind), kCategoryMemcpy);
    if (a == nullptr) return;
    gpuRow(*a, m_options.pid, m.deviceId, m.contextId, m.streamId);
    // correlationId is the driver call's; a copy issued through the runtime also names the
    // runtime call, which is the one the program made (and the one kept).
    setCorrelation(*a, m.runtimeCorrelationId != 0 ? m.runtimeCorrelationId : m.correlationId);
    a->set_bytes(m.bytes);
    a->set_copy_kind(copyKind(m.copyKind));
    a->set_src_kind(memoryKind(m.srcKind));
    a->set_dst_kind(memoryKind(m.dstKind));
}

void ActivityConverter::peerCopy(const CUpti_ActivityMemcpyPtoP4& m) {
    if (!timed(m.start, m.end)) return;
    pb::Activity* a = add(pb::Activity::MEMCPY, m.start, m.end,
                          copyNameId(m.copyKind, m.srcKind, m.dstKind), kCategoryMemcpy);
    if (a == nullptr) return;
    gpuRow(*a, m_options.pid, m.deviceId, m.contextId, m.streamId);
    setCorrelation(*a, m.correlationId);
    a->set_bytes(m.bytes);
    a->set_copy_kind(copyKind(m.copyKind));
    a->set_src_kind(memoryKind(m.srcKind));
    a->set_dst_kind(memoryKind(m.dstKind));
    a->set_dst_device(row(m.dstDeviceId));
}

void ActivityConverter::memset(const CUpti_ActivityMemset4& m) {
    if (!timed(m.start, m.end)) return;
    pb::Activity* a = add(pb::Activity::MEMSET, m.start, m.end,
                          m_strings.id(memsetName(m.memoryKind)), kCategoryMemset);
    if (a == nullptr) return;
    gpuRow(*a, m_options.pid, m.deviceId, m.contextId, m.streamId);
    setCorrelation(*a, m.correlationId);
    a->set_bytes(m.bytes);
    a->set_dst_kind(memoryKind(m.memoryKind));
}

void ActivityConverter::api(const CUpti_ActivityAPI& r, bool runtime) {
    const ApiName name = apiName(r.cbid, runtime);
    if (!name.keep && !m_options.allApi) {
        ++m_counters.apiFiltered;
        return;
    }
    const int64_t tid = osThread(r.threadId);
    if (tid == m_ignoredTid) {
        ++m_counters.ownThread;
        return;
    }
    if (!timed(r.start, r.end)) return;
    pb::Activity* a = add(runtime ? pb::Activity::RUNTIME : pb::Activity::DRIVER, r.start, r.end,
                          name.nameId, runtime ? kCategoryRuntime : kCategoryDriver);
    if (a == nullptr) return;
    a->set_pid(r.processId);
    a->set_tid(tid);
    setCorrelation(*a, r.correlationId);
}

void ActivityConverter::sync(const CUpti_ActivitySynchronization2& s) {
    if (!timed(s.start, s.end)) return;
    pb::Activity* a = add(pb::Activity::SYNCHRONIZATION, s.start, s.end,
                          m_strings.id(syncTypeName(s.type)), kCategorySync);
    if (a == nullptr) return;
    a->set_pid(m_options.pid);
    a->set_context(row(s.contextId));
    a->set_device(m_contexts.device(s.contextId));
    a->set_stream(row(s.streamId));
    setCorrelation(*a, s.correlationId);
}

void ActivityConverter::marker(const CUpti_ActivityMarker2& m) {
    const bool onThread = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
                          m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS;
    const int64_t pid = onThread ? m.objectId.pt.processId : m_options.pid;
    const int64_t tid =
        m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? osThread(m.objectId.pt.threadId) : 0;
    const bool instant = (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) != 0;
    const bool start = (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
    const bool end = (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0;
    if (!instant && !start && !end) {
        ++m_counters.otherKinds; // synchronisation markers
        return;
    }
    if (!timed(m.timestamp, m.timestamp)) return;
    pb::Activity* a = nullptr;
    if (instant || start) {
        std::string name = MarkerPairer::displayName(m.name, m.domain);
        if (start) {
            OpenMarker open{std::move(name), m_clock.toRealtime(m.timestamp), pid, tid};
            m_drops.add(DropLedger::Cause::MarkerOverflow, m_markers.start(m.id, std::move(open)));
            return;
        }
        a = add(pb::Activity::NVTX_MARK, m.timestamp, m.timestamp, m_strings.id(name),
                kCategoryNvtxMark);
        if (a == nullptr) return;
        a->set_pid(pid);
        a->set_tid(tid);
        return;
    }
    std::optional<OpenMarker> open = m_markers.end(m.id);
    if (!open) {
        m_drops.add(DropLedger::Cause::MarkerWithoutStart, 1);
        return;
    }
    a = addMapped(pb::Activity::NVTX_RANGE, open->startNs, m_clock.toRealtime(m.timestamp),
                  m_strings.id(open->name), kCategoryNvtx);
    if (a == nullptr) return;
    a->set_pid(open->pid);
    a->set_tid(open->tid);
}

void ActivityConverter::overhead(const CUpti_ActivityOverhead3& o) {
    if (!timed(o.start, o.end)) return;
    pb::Activity* a = add(pb::Activity::OVERHEAD, o.start, o.end,
                          m_strings.id(overheadKindName(o.overheadKind)), kCategoryOverhead);
    if (a == nullptr) return;
    switch (o.objectKind) {
    case CUPTI_ACTIVITY_OBJECT_THREAD:
        a->set_tid(osThread(o.objectId.pt.threadId));
        [[fallthrough]];
    case CUPTI_ACTIVITY_OBJECT_PROCESS:
        a->set_pid(o.objectId.pt.processId);
        break;
    case CUPTI_ACTIVITY_OBJECT_STREAM:
        a->set_stream(row(o.objectId.dcs.streamId));
        [[fallthrough]];
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
        a->set_context(row(o.objectId.dcs.contextId));
        [[fallthrough]];
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
        a->set_device(row(o.objectId.dcs.deviceId));
        a->set_pid(m_options.pid);
        break;
    default:
        a->set_pid(m_options.pid);
        break;
    }
    if (o.correlationId != 0) setCorrelation(*a, o.correlationId);
}

void ActivityConverter::device(const CUpti_ActivityDevice5& d) {
    if (!d.isCudaVisible) return; // hidden by CUDA_VISIBLE_DEVICES: runs none of our work
    pb::Device out;
    out.set_id(static_cast<int32_t>(d.id));
    out.set_name(d.name != nullptr ? d.name : "");
    out.set_compute_major(static_cast<int32_t>(d.computeCapabilityMajor));
    out.set_compute_minor(static_cast<int32_t>(d.computeCapabilityMinor));
    out.set_total_memory(static_cast<int64_t>(d.globalMemorySize));
    out.set_num_sms(static_cast<int32_t>(d.numMultiprocessors));
    out.set_max_threads_per_sm(
        static_cast<int32_t>(d.maxWarpsPerMultiprocessor * d.numThreadsPerWarp));
    out.set_max_registers_per_sm(static_cast<int32_t>(d.maxRegistersPerMultiprocessor));
    out.set_shared_memory_per_sm(static_cast<int64_t>(d.maxSharedMemoryPerMultiprocessor));
    out.set_warp_size(static_cast<int32_t>(d.numThreadsPerWarp));
    for (pb::Device& known : m_devices)
        if (known.id() == out.id()) {
            known = std::move(out);
            return;
        }
    m_devices.push_back(std::move(out));
}

} // namespace stallscope::capture::cupti
