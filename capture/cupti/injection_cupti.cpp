// Everything that talks to CUPTI: subscription, callbacks, buffers, the activity kinds.
#include "injection_state.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>

namespace stallscope::capture::cupti {

namespace {

// Recorded while the recording gates are open (formats.md, "CUPTI activity records").
constexpr std::array kRecordingKinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMCPY2,
                                        CUPTI_ACTIVITY_KIND_MEMSET,
                                        CUPTI_ACTIVITY_KIND_RUNTIME,
                                        CUPTI_ACTIVITY_KIND_DRIVER,
                                        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
                                        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                        CUPTI_ACTIVITY_KIND_MARKER,
                                        CUPTI_ACTIVITY_KIND_OVERHEAD};
// Always on: device properties and context -> device (a handful of records per process).
constexpr std::array kDescriptionKinds = {CUPTI_ACTIVITY_KIND_DEVICE, CUPTI_ACTIVITY_KIND_CONTEXT};
// Driver calls that register the calling thread (programs that skip the runtime: Triton).
constexpr std::array kDriverLaunchCbids = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
                                           CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
                                           CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};

std::atomic<uint64_t> g_reportedKindFailures{0}; // one message per kind

void reportKindFailure(CUpti_ActivityKind kind, const char* call, CUptiResult r) {
    const uint64_t bit = uint64_t{1} << (static_cast<unsigned>(kind) & 63u);
    if (g_reportedKindFailures.fetch_or(bit) & bit) return;
    say(describe(call, r) + " for activity kind " + std::to_string(kind) +
        "; those records are not captured");
}

void registerThread(Injection& inj) {
    thread_local bool registered = false;
    if (registered) return;
    registered = true;
    char name[32] = {};
    pthread_getname_np(pthread_self(), name, sizeof name);
    inj.threads.add(cuptiThreadKey(static_cast<unsigned long>(pthread_self())),
                    static_cast<int64_t>(syscall(SYS_gettid)), name);
}

void onProfilerApi(Injection& inj, CUpti_CallbackId cbid, const CUpti_CallbackData& info) {
    // As NVIDIA's injection sample: start once cuProfilerStart has returned, stop before
    // cuProfilerStop runs. The stamps are exact (records are filtered by them); switching
    // CUPTI's collection follows here, or from the flush thread if that is busy with it.
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && info.callbackSite == CUPTI_API_EXIT)
        inj.range.profilerStart(realtimeNs());
    else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && info.callbackSite == CUPTI_API_ENTER)
        inj.range.profilerStop(realtimeNs());
    else
        return;
    reconcileCollection(inj, true);
    wakeFlushThread(inj);
}

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
    Injection* inj = injection();
    if (inj == nullptr || data == nullptr) return;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        registerThread(*inj);
        const auto& info = *static_cast<const CUpti_CallbackData*>(data);
        if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
            info.callbackSite == CUPTI_API_ENTER) {
            cuptiActivityFlushAll(0); // the reset destroys the context and its records
            wakeFlushThread(*inj);
        }
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        registerThread(*inj);
        onProfilerApi(*inj, cbid, *static_cast<const CUpti_CallbackData*>(data));
    } else if (domain == CUPTI_CB_DOMAIN_STATE && cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        const auto& state = *static_cast<const CUpti_StateData*>(data);
        inj->cuptiDead.store(true);
        say(describe("CUPTI fatal error", state.notification.result) +
            (state.notification.message ? std::string(": ") + state.notification.message : "") +
            "; capture ends, the program continues");
        wakeFlushThread(*inj);
    }
}

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* maxRecords) {
    *buffer = nullptr;
    *size = 0;
    *maxRecords = 0;
    Injection* inj = injection();
    if (inj == nullptr) return;
    if (uint8_t* b = inj->pool.acquire()) {
        *buffer = b;
        *size = inj->pool.bufferBytes();
    }
}

void CUPTIAPI onBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validBytes) {
    Injection* inj = injection();
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && inj)
        inj->drops.add(DropLedger::Cause::CuptiBufferFull, dropped);
    if (inj == nullptr || buffer == nullptr) return;
    if (validBytes == 0) {
        inj->pool.release(buffer);
        return;
    }
    std::lock_guard lock(inj->completedMutex);
    inj->completed.push_back(CompletedBuffer{buffer, validBytes});
}

// Callbacks that help but are not essential: a failure is reported and capture goes on.
void enableCallbacks(Injection& inj) {
    const auto enable = [&](CUpti_CallbackDomain d, CUpti_CallbackId id, const char* what) {
        const CUptiResult r = cuptiEnableCallback(1, inj.subscriber, d, id);
        if (r != CUPTI_SUCCESS) say(describe("cuptiEnableCallback", r) + " (" + what + ")");
    };
    enable(CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR, "CUPTI error reports");
    const CUptiResult r = cuptiEnableDomain(1, inj.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    if (r != CUPTI_SUCCESS)
        say(describe("cuptiEnableDomain", r) + " (thread ids are CUPTI's, not the OS's)");
    for (CUpti_CallbackId id : kDriverLaunchCbids)
        enable(CUPTI_CB_DOMAIN_DRIVER_API, id, "threads");
    if (inj.config.profilerRange) {
        enable(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart,
               "profiler range");
        enable(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop,
               "profiler range");
    }
}

} // namespace

bool calibrateClock(ClockMap& clock) {
    std::array<ClockSample, 7> samples{};
    for (ClockSample& s : samples) {
        s.realtimeBefore = realtimeNs();
        if (cuptiGetTimestamp(&s.cupti) != CUPTI_SUCCESS) s.cupti = 0;
        s.realtimeAfter = realtimeNs();
    }
    return clock.calibrate(samples);
}

bool setUpCupti(Injection& inj, std::string& error) {
    char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "Stallscope";
    params.oldSubscriberName = other;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    CUptiResult r = cuptiSubscribe_v2(&inj.subscriber, &onCallback, &inj, &params);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        // Typically torch.profiler (Kineto) started before us, or the program runs under
        // Nsight Systems / Compute or DCGM profiling. Stallscope leaves that client alone.
        error =
            "another CUPTI client already holds CUPTI in this process (" +
            (other[0] != '\0' ? "\"" + std::string(other) + "\""
                              : std::string("torch.profiler's Kineto, Nsight Systems, DCGM, ...")) +
            ") and CUPTI allows only one; Stallscope leaves it alone. If it is torch.profiler, "
            "run the program with KINETO_USE_DAEMON=1 and record it with `stallscope-cli record "
            "--attach` (Kineto's own trace of operators and kernels), or open the trace its "
            "profiler writes";
        return false;
    }
    if (r != CUPTI_SUCCESS) {
        error = "CUPTI could not start (" + describe("cuptiSubscribe_v2", r) +
                "): is the NVIDIA driver loaded and a GPU visible?";
        return false;
    }
    r = cuptiActivityRegisterCallbacks(&onBufferRequested, &onBufferCompleted);
    if (r != CUPTI_SUCCESS) {
        error = "CUPTI refused the activity buffers (" +
                describe("cuptiActivityRegisterCallbacks", r) + ")";
        cuptiUnsubscribe(inj.subscriber);
        return false;
    }
    enableCallbacks(inj);
    ClockMap clock;
    calibrateClock(clock);
    inj.converter.setClock(clock);
    inj.clockNote = clock.note();
    for (CUpti_ActivityKind kind : kDescriptionKinds)
        if ((r = cuptiActivityEnable(kind)) != CUPTI_SUCCESS)
            reportKindFailure(kind, "cuptiActivityEnable", r);
    reconcileCollection(inj);
    return true;
}

bool reconcileCollection(Injection& inj, bool fromCallback) {
    std::unique_lock lock(inj.collectionMutex, std::defer_lock);
    if (!fromCallback)
        lock.lock();
    else if (!lock.try_lock_for(std::chrono::milliseconds(20)))
        return false;
    const bool want = inj.range.recording() && !inj.cuptiDead.load() && !inj.recorderGone.load();
    if (want == inj.collecting) return true;
    for (CUpti_ActivityKind kind : kRecordingKinds) {
        const CUptiResult r = want ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
        if (r != CUPTI_SUCCESS)
            reportKindFailure(kind, want ? "cuptiActivityEnable" : "cuptiActivityDisable", r);
    }
    inj.collecting = want;
    return true;
}

void collectRecords(const CompletedBuffer& buffer, std::vector<const CUpti_Activity*>& out) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer.data, buffer.validBytes, &record) == CUPTI_SUCCESS)
        out.push_back(record);
}

void releaseRecordMemory(const std::vector<const CUpti_Activity*>& records) {
    // CUpti_ActivityDevice5::name and CUpti_ActivityOverhead3::overheadData: "Client is
    // responsible for freeing this memory using the free function" (cupti_activity.h).
    for (const CUpti_Activity* r : records) {
        if (r->kind == CUPTI_ACTIVITY_KIND_DEVICE) {
            const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(r);
            std::free(const_cast<char*>(d->name));
        } else if (r->kind == CUPTI_ACTIVITY_KIND_OVERHEAD) {
            std::free(reinterpret_cast<const CUpti_ActivityOverhead3*>(r)->overheadData);
        }
    }
}

} // namespace stallscope::capture::cupti
