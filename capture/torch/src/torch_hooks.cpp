// The recorder's LibTorch side: global RecordFunction callbacks that time every operator,
// backward node and user scope and hand a record to the calling thread's buffer, and the
// USER_SCOPE ranges behind UserRange and TorchRecorder::step(). Includes ATen's
// record_function.h only (not <torch/torch.h>) to keep its compile cost low.
#include "recorder_core.h"

#include <ATen/record_function.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <atomic>
#include <memory>
#include <unordered_set>

namespace stallscope::torchrec::detail {

namespace {

std::atomic<bool> g_recordShapes{true};
thread_local uint32_t t_depth = 0;

struct OpContext final : at::ObserverContext {
    OpRecord record;
};

void appendShape(std::string& out, const c10::IValue& v) {
    if (!v.isTensor()) {
        out += "[]";
        return;
    }
    const at::Tensor& t = v.toTensor();
    if (!t.defined() || t.is_nested()) {
        out += "[]";
        return;
    }
    out += '[';
    bool first = true;
    for (int64_t d : t.sizes()) {
        if (!first) out += ", ";
        out += std::to_string(d);
        first = false;
    }
    out += ']';
}

/// Kineto's "Input Dims": one list per input, sizes for tensors, [] for anything else.
std::string shapesOf(c10::ArrayRef<const c10::IValue> inputs) {
    std::string out = "[";
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (i) out += ", ";
        appendShape(out, inputs[i]);
    }
    out += ']';
    return out;
}

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction& fn) {
    ActiveGuard guard;
    if (!guard.core) return nullptr;
    auto ctx = std::make_unique<OpContext>();
    OpRecord& r = ctx->record;
    r.name = fn.name();
    r.userScope = fn.scope() == at::RecordScope::USER_SCOPE;
    r.sequenceNumber = fn.seqNr();
    r.externalId = fn.handle();
    r.depth = t_depth++;
    if (fn.needsInputs() && !r.userScope && g_recordShapes.load(std::memory_order_relaxed))
        r.shapes = shapesOf(fn.inputs());
    r.startNs = realtimeNs();  // last: the recorder's own work stays outside the range
    return ctx;
}

void onEnd(const at::RecordFunction& /*fn*/, at::ObserverContext* ctx) {
    const int64_t end = realtimeNs();
    if (!ctx) return;
    if (t_depth > 0) --t_depth;
    ActiveGuard guard;
    if (!guard.core) return;
    OpRecord& r = static_cast<OpContext*>(ctx)->record;
    r.endNs = end;
    threadBuffer(*guard.core)->push(r);
}

} // namespace

uint64_t installHooks(const RecorderOptions& options) {
    g_recordShapes.store(options.recordShapes, std::memory_order_relaxed);
    std::unordered_set<at::RecordScope, std::hash<at::RecordScope>> scopes{at::RecordScope::FUNCTION,
                                                                           at::RecordScope::USER_SCOPE};
    if (options.recordBackward) scopes.insert(at::RecordScope::BACKWARD_FUNCTION);
    return at::addGlobalCallback(at::RecordFunctionCallback(&onStart, &onEnd)
                                     .needsInputs(options.recordShapes)
                                     .needsIds(true)
                                     .scopes(scopes));
}

void removeHooks(uint64_t handle) {
    if (handle != at::INVALID_CALLBACK_HANDLE) at::removeCallback(handle);
}

bool torchGpuAvailable() { return torch::cuda::is_available(); }

std::string torchVersionText() {
    std::string s = "LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
                    std::to_string(TORCH_VERSION_PATCH);
    const size_t gpus = torch::cuda::device_count();
    s += gpus ? ", " + std::to_string(gpus) + " CUDA device(s)" : ", no CUDA device";
    return s;
}

struct UserScopeHandle {
    at::RecordFunction fn{at::RecordScope::USER_SCOPE};
};

UserScopeHandle* beginUserScope(const std::string& name) {
    auto* h = new UserScopeHandle;
    if (h->fn.isActive()) h->fn.before(name);
    return h;
}

void endUserScope(UserScopeHandle* handle) {
    if (!handle) return;
    handle->fn.end();
    delete handle;
}

} // namespace stallscope::torchrec::detail
