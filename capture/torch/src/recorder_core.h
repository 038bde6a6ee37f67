#pragma once
// What the RecordFunction callbacks (torch_hooks.cpp, the only part that sees LibTorch)
// and the recorder (torch_recorder.cpp, plain C++) share. RecordFunction callbacks are
// plain function pointers without user data, so the active recorder is process-global:
// the callbacks find it through ActiveGuard, which also lets stop() wait until no
// callback still uses it.
#include "thread_buffer.h"

#include "stallscope/capture/protocol.h"
#include "stallscope/torch/torch_recorder.h"

#include <cstdint>

namespace stallscope::torchrec::detail {

class RecorderCore;

/// Held by a callback while it touches the recorder: `core` is null when none is active.
struct ActiveGuard {
    ActiveGuard();
    ~ActiveGuard();
    ActiveGuard(const ActiveGuard&) = delete;
    ActiveGuard& operator=(const ActiveGuard&) = delete;
    RecorderCore* core = nullptr;
};

/// The calling thread's buffer for `core` (registered on first use).
ThreadBuffer* threadBuffer(RecorderCore& core);

using capture::realtimeNs;  // the capture protocol's clock
/// The OS thread id (gettid), cached per thread.
int64_t osThreadId();

// Implemented in torch_hooks.cpp.
/// Installs the global callbacks; returns the handle for removeHooks().
uint64_t installHooks(const RecorderOptions& options);
void removeHooks(uint64_t handle);
bool torchGpuAvailable();
std::string torchVersionText();

/// A USER_SCOPE RecordFunction range (opaque here; used by UserRange and step()).
struct UserScopeHandle;
UserScopeHandle* beginUserScope(const std::string& name);
void endUserScope(UserScopeHandle* handle);  // also deletes it

} // namespace stallscope::torchrec::detail
