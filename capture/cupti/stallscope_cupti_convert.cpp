// The converter's frame: the two passes, the batches, the name caches. The per-kind
// conversions are in stallscope_cupti_convert_records.cpp.
#include "stallscope_cupti_convert.h"

#include "stallscope_cupti_names.h"

namespace stallscope::capture::cupti {

namespace {

template <typename T> const T& as(const CUpti_Activity* r) {
    return *reinterpret_cast<const T*>(r);
}

} // namespace

ActivityConverter::ActivityConverter(ConvertOptions options, DropLedger& drops)
    : m_options(options), m_drops(drops), m_external(options.maxExternalIds),
      m_markers(options.maxOpenMarkers) {
    if (m_options.maxActivitiesPerBatch == 0) m_options.maxActivitiesPerBatch = 1;
}

void ActivityConverter::convert(std::span<const CUpti_Activity* const> records) {
    for (const CUpti_Activity* r : records)
        if (r != nullptr) note(r);
    for (const CUpti_Activity* r : records)
        if (r != nullptr) convertOne(r);
}

void ActivityConverter::note(const CUpti_Activity* r) {
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& e = as<CUpti_ActivityExternalCorrelation>(r);
        m_external.add(e.correlationId, e.externalKind, e.externalId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
        const auto& c = as<CUpti_ActivityContext3>(r);
        m_contexts.add(c.contextId, c.deviceId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto& k = as<CUpti_ActivityKernel10>(r);
        m_contexts.add(k.contextId, k.deviceId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto& m = as<CUpti_ActivityMemcpy6>(r);
        m_contexts.add(m.contextId, m.deviceId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto& m = as<CUpti_ActivityMemset4>(r);
        m_contexts.add(m.contextId, m.deviceId);
        break;
    }
    default:
        break;
    }
}

void ActivityConverter::convertOne(const CUpti_Activity* r) {
    ++m_counters.records;
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        kernel(as<CUpti_ActivityKernel10>(r));
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        memcpy(as<CUpti_ActivityMemcpy6>(r));
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        peerCopy(as<CUpti_ActivityMemcpyPtoP4>(r));
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        memset(as<CUpti_ActivityMemset4>(r));
        break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        api(as<CUpti_ActivityAPI>(r), true);
        break;
    case CUPTI_ACTIVITY_KIND_DRIVER:
        api(as<CUpti_ActivityAPI>(r), false);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        sync(as<CUpti_ActivitySynchronization2>(r));
        break;
    case CUPTI_ACTIVITY_KIND_MARKER:
        marker(as<CUpti_ActivityMarker2>(r));
        break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
        overhead(as<CUpti_ActivityOverhead3>(r));
        break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
        device(as<CUpti_ActivityDevice5>(r));
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_CONTEXT:
        break; // bookkeeping, done in note()
    default:
        ++m_counters.otherKinds;
        break;
    }
}

bool ActivityConverter::timed(uint64_t start, uint64_t end) {
    if (start != 0 || end != 0) return true;
    m_drops.add(DropLedger::Cause::NoTimestamp, 1);
    return false;
}

pb::Activity* ActivityConverter::add(pb::Activity::Kind kind, uint64_t start, uint64_t end,
                                     uint32_t nameId, std::string_view category) {
    return addMapped(kind, m_clock.toRealtime(start), m_clock.toRealtime(end), nameId, category);
}

pb::Activity* ActivityConverter::addMapped(pb::Activity::Kind kind, int64_t start, int64_t end,
                                           uint32_t nameId, std::string_view category) {
    if (end < start) end = start;
    if (m_range && !m_range->overlaps(start, end)) {
        ++m_counters.outsideRange;
        return nullptr;
    }
    if (static_cast<size_t>(m_batch.activities_size()) >= m_options.maxActivitiesPerBatch)
        sealBatch();
    pb::Activity* a = m_batch.add_activities();
    a->set_kind(kind);
    a->set_start_ns(start);
    a->set_end_ns(end);
    a->set_name_id(nameId);
    a->set_category_id(m_strings.id(category));
    ++m_counters.activities;
    return a;
}

void ActivityConverter::setCorrelation(pb::Activity& a, uint32_t correlationId) {
    a.set_correlation(correlationId);
    if (const uint64_t e = m_external.find(correlationId)) a.set_external_id(e);
}

int64_t ActivityConverter::osThread(uint32_t cuptiThreadId) const {
    auto it = m_threads.find(cuptiThreadId);
    return it == m_threads.end() ? static_cast<int64_t>(cuptiThreadId) : it->second;
}

uint32_t ActivityConverter::kernelNameId(const char* mangled) {
    const std::string key = mangled != nullptr ? mangled : "";
    auto it = m_kernelNames.find(key);
    if (it != m_kernelNames.end()) return it->second;
    const uint32_t id = m_strings.id(demangleKernelName(mangled));
    m_kernelNames.emplace(key, id);
    return id;
}

uint32_t ActivityConverter::copyNameId(uint32_t copyKind, uint32_t src, uint32_t dst) {
    const uint32_t key = (copyKind & 0xFF) | (src & 0xFF) << 8 | (dst & 0xFF) << 16;
    auto it = m_copyNames.find(key);
    if (it != m_copyNames.end()) return it->second;
    const uint32_t id = m_strings.id(memcpyName(copyKind, src, dst));
    m_copyNames.emplace(key, id);
    return id;
}

ActivityConverter::ApiName ActivityConverter::apiName(uint32_t cbid, bool runtime) {
    auto& cache = runtime ? m_runtimeNames : m_driverNames;
    auto it = cache.find(cbid);
    if (it != cache.end()) return it->second;
    ApiName n{0, runtime ? keepRuntimeApi(cbid) : keepDriverApi(cbid)};
    // Names of records that are left out never cross the socket.
    if (n.keep || m_options.allApi)
        n.nameId = m_strings.id(runtime ? runtimeApiName(cbid) : driverApiName(cbid));
    cache.emplace(cbid, n);
    return n;
}

void ActivityConverter::sealBatch() {
    // Strings wait for a batch with activities (they only matter to those).
    if (m_batch.activities_size() == 0) return;
    m_strings.takeNew(m_batch);
    m_done.push_back(std::move(m_batch));
    m_batch = pb::Batch();
}

std::vector<pb::Batch> ActivityConverter::takeBatches() {
    sealBatch();
    std::vector<pb::Batch> out;
    out.swap(m_done);
    return out;
}

std::vector<pb::Device> ActivityConverter::takeDevices() {
    std::vector<pb::Device> out;
    out.swap(m_devices);
    return out;
}

} // namespace stallscope::capture::cupti
