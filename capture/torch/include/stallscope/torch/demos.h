#pragma once
// Built-in LibTorch workloads that reproduce the bottlenecks of ../shared/spec/product.md on
// purpose, each with its fixed variant, so users can see what each one looks like in a trace:
//
//   dataloader        / dataloader-fixed   batches prepared inside the step (single
//                                          process) / by a worker thread with a prefetch queue
//   item-sync         / item-sync-fixed    loss.item() + a log write every step / every N steps
//   small-batch       / large-batch        4 samples per step / 128 (same samples in all)
//   pageable-copies   / pinned-copies      .to(cuda) from pageable memory / pinned + non_blocking
//   fp32              / autocast           FP32 / autocast to FP16 (Tensor Cores)
//
// Each is a small CNN training loop (torch::nn::Conv2d/Linear, SGD) of ~30 steps, a few
// seconds at most on two cores. Without a GPU they run on the CPU and record CPU rows only;
// the copy and autocast pairs then say that they need a GPU (their CPU part is the same
// training loop in both variants). No LibTorch header is included here.
#include "stallscope/capture/protocol.h"

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace stallscope::torchrec {

struct DemoInfo {
    std::string name;         // "dataloader"
    std::string topic;        // what the pair compares: "single-process vs prefetching data loading"
    std::string description;  // one line
    std::string pairedWith;   // the other variant ("dataloader-fixed")
    bool fixedVariant = false;// true for the variant without the bottleneck
    bool needsGpu = false;    // nothing to show without a GPU (copies, autocast)
};

/// Every demo, bad variant before its fixed one.
const std::vector<DemoInfo>& demoNames();
/// The demo called `name`, or null.
const DemoInfo* findDemo(const std::string& name);

struct DemoOptions {
    int steps = 0;            // 0: the demo's default (~30)
    int warmupSteps = 2;      // run before recording starts (allocator, first-call costs)
    int threads = 1;          // LibTorch intra-op threads during the demo (restored after)
    std::ostream* log = nullptr;  // progress lines ("step 10/30 ...") when set
    bool record = true;       // false: the same steps without the recorder (an overhead baseline)
    bool recordShapes = true; // operators' input shapes (LibTorch boxes every op's inputs for them)
};

struct DemoResult {
    bool ok = false;
    std::string error;        // why it could not run
    std::string note;         // "needs a GPU: GPU rows are absent on this machine ..." etc.
    bool gpu = false;         // ran on a GPU
    int steps = 0;            // recorded steps
    int64_t samples = 0;      // training samples processed while recording
    double seconds = 0;       // recorded wall time
    uint64_t records = 0, dropped = 0;  // from the recorder
};

/// Runs demo `name` with a TorchRecorder writing into `sink` (which must be ready to
/// receive, e.g. an opened CaptureSession). The steps are ProfilerStep#0..N-1.
DemoResult runDemo(const std::string& name, capture::EnvelopeSink& sink, const DemoOptions& options = {});

/// `stallscope-cli record --demo NAME -o OUTPUT`: records demo `name` into a
/// CaptureSession and finishes it to `output` (.json or .json.gz). Prints what it did
/// (and the GPU note) to `out`, problems to `err`; returns 0 on success, 1 otherwise.
/// An unknown name lists the demos on `err`.
int runDemoRecording(const std::string& name, const std::filesystem::path& output, std::ostream& out,
                     std::ostream& err, const DemoOptions& options = {});

/// The demo list as `record --demo help` prints it (name, description, pairs).
std::string demoListText();

} // namespace stallscope::torchrec
