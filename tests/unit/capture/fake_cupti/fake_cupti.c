/* A stand-in for libcupti.so.13 (same soname and symbol version), for testing the injection
 * library's reaction to CUPTI's answers on a machine without a GPU. Found first through
 * LD_LIBRARY_PATH by a test's child process.
 *
 * FAKE_CUPTI_SUBSCRIBER=NAME: another client holds CUPTI (torch.profiler's Kineto, Nsight
 * Systems): cuptiSubscribe_v2 answers CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and names
 * NAME as the old subscriber, as CUPTI 12.6+ does. Unset: every call fails as CUPTI does without
 * a driver (CUPTI_ERROR_NOT_INITIALIZED). Each call is counted on stderr when FAKE_CUPTI_TRACE
 * is set. */
#include <cupti.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void trace(const char* name) {
    if (getenv("FAKE_CUPTI_TRACE")) fprintf(stderr, "fake cupti: %s\n", name);
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                              void* userdata, CUpti_SubscriberParams* params) {
    (void)callback;
    (void)userdata;
    trace("cuptiSubscribe_v2");
    const char* other = getenv("FAKE_CUPTI_SUBSCRIBER");
    if (subscriber) *subscriber = NULL;
    if (!other) return CUPTI_ERROR_NOT_INITIALIZED;
    if (params && params->oldSubscriberName && params->oldSubscriberSize > 0) {
        strncpy(params->oldSubscriberName, other, params->oldSubscriberSize - 1);
        params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
    (void)subscriber;
    trace("cuptiUnsubscribe");
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
    switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; break;
    }
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetErrorMessage(CUptiResult result, const char** str) {
    return cuptiGetResultString(result, str);
}

CUptiResult cuptiGetVersion(uint32_t* version) {
    *version = 999; /* the tests recognise the fake by this */
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    *timestamp = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    return CUPTI_SUCCESS;
}

/* Never reached by the cases above (they stop at cuptiSubscribe_v2), but linked. */
CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc a,
                                           CUpti_BuffersCallbackCompleteFunc b) {
    (void)a;
    (void)b;
    trace("cuptiActivityRegisterCallbacks");
    return CUPTI_ERROR_NOT_INITIALIZED;
}
CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
    (void)kind;
    return CUPTI_ERROR_NOT_INITIALIZED;
}
CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
    (void)kind;
    return CUPTI_ERROR_NOT_INITIALIZED;
}
CUptiResult cuptiActivityFlushAll(uint32_t flag) {
    (void)flag;
    return CUPTI_ERROR_NOT_INITIALIZED;
}
CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                       CUpti_Activity** record) {
    (void)buffer;
    (void)validBufferSizeBytes;
    (void)record;
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
}
CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                              size_t* dropped) {
    (void)context;
    (void)streamId;
    *dropped = 0;
    return CUPTI_SUCCESS;
}
CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
    (void)enable;
    (void)subscriber;
    (void)domain;
    (void)cbid;
    return CUPTI_ERROR_NOT_INITIALIZED;
}
CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain) {
    (void)enable;
    (void)subscriber;
    (void)domain;
    return CUPTI_ERROR_NOT_INITIALIZED;
}
