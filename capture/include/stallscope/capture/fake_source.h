#pragma once
// A capture source that plays a scripted PyTorch training loop as protocol envelopes, for
// tests, `stallscope-cli record --fake-source` and the GUI's demo. Each step:
//
//   ProfilerStep#N
//   ├─ enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__   CPU only: the GPU idles
//   ├─ aten::to -> aten::copy_ -> cudaMemcpyAsync                     pageable HtoD copy: the
//   │                                                                 call blocks for the copy
//   ├─ forward: aten::conv2d/... -> cudaLaunchKernel -> kernels        (queued: the GPU is busy)
//   ├─ backward on the autograd thread: ...Backward0 -> launches -> kernels
//   ├─ Optimizer.step#SGD.step -> cudaLaunchKernel -> multi_tensor_apply_kernel
//   └─ aten::item -> aten::_local_scalar_dense -> cudaMemcpyAsync (DtoH, pageable) +
//      cudaStreamSynchronize                                          `.item()`: waits for the GPU
//
// Launches and their GPU work share a correlation id; CPU ops carry External ids and
// sequence numbers; the device is a fake A100-like GPU (so occupancy figures exist).
// Timestamps are CLOCK_REALTIME ns from `startNs` (default: now).
#include "stallscope/capture/protocol.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace stallscope::capture {

struct FakeSourceOptions {
    int steps = 4;
    int layers = 8;                 // forward kernels per step (backward: two per layer)
    int batchSize = 32;             // images of 3x224x224 float32: the HtoD copy's bytes
    int recordsPerBatch = 200;      // activities per protocol Batch
    double dataLoadingMs = 12;      // per step, before any GPU work
    double kernelUs = 150;          // mean kernel duration
    int64_t startNs = 0;            // 0: now (CLOCK_REALTIME)
    int64_t pid = 0;                // 0: this process
    int64_t tid = 0;                // main thread; 0: pid. The autograd thread is tid + 1.
    int32_t device = 0;
    int32_t stream = 7;
    bool realTime = false;          // send each batch when its last record would exist
    bool waitForStart = false;      // sockets: record only after Control START (and stop at STOP)
    uint64_t droppedPerBatch = 0;   // reported as dropped records in every batch

    // Faults (batch indices from 0; -1: none). Byte-level faults need a socket; into an
    // in-process sink they become an envelope without a body (a counted bad message).
    int corruptAfterBatch = -1;     // a framed message whose bytes are not an Envelope
    int cutAfterBatch = -1;         // a framed message holding only half of a Batch
    int unknownStringInBatch = -1;  // one activity names a string id never sent
    int skipBatch = -1;             // this batch is not sent (a sequence gap)
    int dieInBatch = -1;            // half of this batch's bytes, then the connection closes
};

struct FakeSourceResult {
    bool ok = false;               // played to the end (or to the requested death)
    std::string error;
    uint64_t batchesSent = 0;      // complete Batch envelopes delivered
    uint64_t recordsSent = 0;      // activities in them (the unknown-string one included)
    uint64_t recordsLost = 0;      // in the skipped batch and the one cut by dieInBatch
    uint64_t kernels = 0, copies = 0, steps = 0;  // in the batches sent
    int64_t firstNs = 0, lastNs = 0;               // span of what was generated
};

class FakeSource {
public:
    explicit FakeSource(FakeSourceOptions options = {});

    /// Plays into any sink (a CaptureSession in-process, or a connected SocketWriter).
    FakeSourceResult play(EnvelopeSink& sink, const std::atomic<bool>* cancel = nullptr);
    /// Plays into a connected socket: byte-level faults and Control START/STOP work here.
    FakeSourceResult play(SocketWriter& socket, const std::atomic<bool>* cancel = nullptr);
    /// Connects to a recorder's socket (kSocketEnv's value) and plays.
    FakeSourceResult playTo(const std::string& socketPath, const std::atomic<bool>* cancel = nullptr);

    [[nodiscard]] const FakeSourceOptions& options() const { return m_options; }

private:
    FakeSourceResult run(EnvelopeSink& sink, SocketWriter* socket, const std::atomic<bool>* cancel);

    FakeSourceOptions m_options;
};

} // namespace stallscope::capture
