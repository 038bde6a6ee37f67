#pragma once
// The in-process recorder for C++ programs that use LibTorch: the profiler that Debian's
// LibTorch (built without Kineto) does not have.
//
//   stallscope::capture::CaptureSession session("run.json");       // or a SocketWriter
//   session.open();
//   stallscope::TorchRecorder recorder;
//   recorder.start(session);                                      // a base::Status
//   for (int64_t step = 0; step < steps; ++step) {
//       recorder.step(step);                                      // ProfilerStep#<step>
//       { stallscope::torchrec::UserRange r("enumerate(DataLoader)#MyLoader.__next__"); ... }
//       ...                                                       // operators are recorded
//   }
//   recorder.stop();
//   session.finish("run.json");                                   // a Kineto-style trace
//
// What it records (global at::RecordFunction callbacks): every operator (cpu_op: name,
// start/end in CLOCK_REALTIME ns, OS thread id, autograd sequence number, input shapes,
// the RecordFunction handle as external id), autograd backward nodes, and user scopes
// (record_function / RECORD_USER_SCOPE / UserRange below: user_annotation), as capture
// envelopes: Hello{source "libtorch"}, ThreadName, Batch. Each thread appends to a bounded
// buffer of its own; a background thread turns them into Batches every flush interval.
// A full buffer drops records and counts them (Batch.dropped_records).
//
// GPU rows: LibTorch's RecordFunction sees operators, not kernels. On a machine with a GPU
// (gpuAvailable()), kernels, copies and runtime calls come from CUPTI: run the program
// under `stallscope-cli record -- ./program`, which loads the CUPTI injection library into
// it through CUDA_INJECTION64_PATH and passes its socket in STALLSCOPE_CAPTURE_SOCKET; the
// recorder started with startFromEnvironment() connects to the same socket, so operators
// and GPU work land in one session on one clock (both use CLOCK_REALTIME ns). Without a
// GPU the trace has CPU rows only, which is what Debian's CPU-only LibTorch produces.
//
// No LibTorch header is included here (they clash with Qt's keyword macros and are slow to
// compile): the CLI, the GUI and the tests include this header freely.
#include "stallscope/capture/protocol.h"

#include "stallscope/base/result.h"

#include <cstdint>
#include <memory>
#include <string>

namespace stallscope::torchrec {

struct RecorderOptions {
    int flushIntervalMs = 100;            // how often buffered records become a Batch
    size_t threadBufferRecords = 1 << 16; // per thread; beyond it records are dropped (counted)
    bool recordShapes = true;             // input shapes (needs the inputs: some overhead)
    bool recordBackward = true; // autograd backward nodes (RecordScope::BACKWARD_FUNCTION)
};

struct RecorderStats {
    uint64_t records = 0;    // operators and ranges sent
    uint64_t dropped = 0;    // lost to full buffers
    uint64_t batches = 0;    // Batch envelopes sent
    uint64_t threads = 0;    // threads that recorded anything
    bool sinkFailed = false; // the sink refused an envelope (peer gone)
};

class TorchRecorder {
public:
    explicit TorchRecorder(RecorderOptions options = {});
    ~TorchRecorder(); // stops
    TorchRecorder(const TorchRecorder&) = delete;
    TorchRecorder& operator=(const TorchRecorder&) = delete;

    /// Sends Hello and installs the callbacks. One recorder can be active per process
    /// (RecordFunction callbacks are global); an error (StartFailed) otherwise, or when this
    /// one is already recording. `sink` must outlive stop().
    base::Status start(capture::EnvelopeSink& sink);
    /// Connects to the recorder named by STALLSCOPE_CAPTURE_SOCKET (set by
    /// `stallscope-cli record -- ./program`) and starts recording into it; an error
    /// (StartFailed) when the variable is not set, the socket cannot be reached, or start()
    /// fails.
    base::Status startFromEnvironment();
    /// Ends an open step, removes the callbacks, waits for callbacks in flight, sends the
    /// rest and Bye{STOPPED}. Idempotent.
    void stop();
    /// Sends what is buffered now (the background thread does it every flush interval).
    void flush();

    /// Closes the step opened by the previous call (if any) and opens "ProfilerStep#<n>",
    /// a user range like torch.profiler's prof.step(). Call from the training thread.
    void step(int64_t n);
    /// Closes the open step range, if any.
    void endStep();

    [[nodiscard]] bool recording() const;
    [[nodiscard]] RecorderStats stats() const;

    /// torch::cuda::is_available(): false with Debian's CPU-only LibTorch.
    static bool gpuAvailable();
    /// "LibTorch 1.13.1, CPU only (no CUDA)".
    static std::string libtorchDescription();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// A user range (RecordScope::USER_SCOPE, like Python's record_function): seen by this
/// recorder and by any other RecordFunction observer. Name it as torch.profiler would
/// ("enumerate(DataLoader)#...", "Optimizer.step#SGD.step") and the analysis classifies
/// it the same way. Ends at destruction or end(), on the thread that opened it.
class UserRange {
public:
    explicit UserRange(const std::string& name);
    ~UserRange();
    UserRange(const UserRange&) = delete;
    UserRange& operator=(const UserRange&) = delete;
    void end();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace stallscope::torchrec

namespace stallscope {
using torchrec::TorchRecorder; // the name issue 6 gives it
}
