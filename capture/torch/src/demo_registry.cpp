// The demo list and `record --demo NAME`: records a demo into a CaptureSession and writes
// its trace. No LibTorch header here (runDemo is in demo_workloads.cpp).
#include "stallscope/torch/demos.h"
#include "stallscope/torch/torch_recorder.h"

#include "stallscope/capture/session.h"

#include <cstdio>
#include <cstdlib>
#include <ostream>

namespace stallscope::torchrec {

const std::vector<DemoInfo>& demoNames() {
    static const std::string kLoading = "single-process vs prefetching data loading";
    static const std::string kLogging = "per-step vs every-N-steps loss.item() and logging";
    static const std::string kBatch = "small vs large batches";
    static const std::string kCopies = "pageable vs pinned + non_blocking host-to-device copies";
    static const std::string kPrecision = "FP32 vs autocast (Tensor Cores)";
    // name, topic, description, paired with, fixed variant, needs a GPU
    static const std::vector<DemoInfo> kDemos{
        {"dataloader", kLoading,
         "each batch is read (emulated 6 ms storage latency), decoded, augmented and collated inside the "
         "training step (num_workers=0)",
         "dataloader-fixed", false, false},
        {"dataloader-fixed", kLoading,
         "the same batches prepared ahead by 4 worker threads (prefetch queue): the step only dequeues",
         "dataloader", true, false},
        {"item-sync", kLogging,
         "loss.item() and a log write (emulated 2 ms tracker round trip) every step; on a GPU each .item() "
         "waits for the queue to drain",
         "item-sync-fixed", false, false},
        {"item-sync-fixed", kLogging, "the loss is accumulated as a tensor, read and logged every 10 steps",
         "item-sync", true, false},
        {"small-batch", kBatch, "4 samples per step: per-operator overhead dominates, low samples/s",
         "large-batch", false, false},
        {"large-batch", kBatch, "128 samples per step: the same operators do 32 times the work", "small-batch",
         true, false},
        {"pageable-copies", kCopies, "batches copied to the GPU from pageable memory, blocking (.to(cuda))",
         "pinned-copies", false, true},
        {"pinned-copies", kCopies, "batches pinned by the loader workers, copied with non_blocking=true",
         "pageable-copies", true, true},
        {"fp32", kPrecision, "FP32 training: matrix multiplies and convolutions without Tensor Cores",
         "autocast", false, true},
        {"autocast", kPrecision, "the same model under autocast (FP16 matmuls and convolutions)", "fp32", true,
         true},
    };
    return kDemos;
}

const DemoInfo* findDemo(const std::string& name) {
    for (const DemoInfo& d : demoNames())
        if (d.name == name) return &d;
    return nullptr;
}

std::string demoListText() {
    std::string out = "Demo workloads (LibTorch; each reproduces a bottleneck, then its fix):\n";
    for (const DemoInfo& d : demoNames()) {
        char name[24];
        std::snprintf(name, sizeof name, "  %-18s", d.name.c_str());
        out += name + d.description + (d.needsGpu ? " [needs a GPU]" : "") + "\n";
    }
    out += "Run a pair and compare: stallscope-cli record --demo dataloader -o bad.json; "
           "stallscope-cli record --demo dataloader-fixed -o good.json\n";
    return out;
}

namespace {

void printResult(const DemoResult& r, const std::string& name, std::ostream& out) {
    char line[160];
    std::snprintf(line, sizeof line, "demo %s: %d steps in %.2f s, %lld samples (%.0f samples/s), %llu records",
                  name.c_str(), r.steps, r.seconds, static_cast<long long>(r.samples),
                  r.seconds > 0 ? double(r.samples) / r.seconds : 0.0, static_cast<unsigned long long>(r.records));
    out << line;
    if (r.dropped) out << ", " << r.dropped << " dropped";
    out << "\n" << r.note << "\n";
}

/// Under `stallscope-cli record -- ...` the demo's recorder joins that recording (with
/// the CUPTI source of the same process) instead of writing a file of its own.
int recordIntoParent(const std::string& name, std::ostream& out, std::ostream& err, const DemoOptions& options) {
    const char* socketPath = std::getenv(capture::kSocketEnv);
    capture::SocketWriter socket;
    std::string error;
    if (!socket.connect(socketPath, error)) {
        err << "record --demo: cannot join the recording at " << socketPath << ": " << error << "\n";
        return 1;
    }
    const DemoResult r = runDemo(name, socket, options);
    socket.close();
    if (!r.ok) {
        err << "record --demo " << name << ": " << r.error << "\n";
        return 1;
    }
    printResult(r, name, out);
    out << "sent to the enclosing recording (" << capture::kSocketEnv << "), which writes the trace\n";
    return 0;
}

} // namespace

int runDemoRecording(const std::string& name, const std::filesystem::path& output, std::ostream& out,
                     std::ostream& err, const DemoOptions& options) {
    if (!findDemo(name)) {
        err << "record --demo: unknown demo `" << name << "`\n" << demoListText();
        return 1;
    }
    if (const char* s = std::getenv(capture::kSocketEnv); s && *s) return recordIntoParent(name, out, err, options);
    if (output.empty()) {
        err << "record --demo: an output file is needed (-o run.json or run.json.gz)\n";
        return 1;
    }
    capture::CaptureSession session(output);
    if (const base::Status opened = session.open(); !opened) {
        err << "record --demo: " << opened.error().message << "\n";
        return 1;
    }
    out << "recording demo " << name << " (" << TorchRecorder::libtorchDescription() << ")\n";
    const DemoResult r = runDemo(name, session, options);
    if (!r.ok) {
        err << "record --demo " << name << ": " << r.error << "\n";
        return 1;
    }
    const auto finished = session.finish(output);
    if (!finished) {
        err << "record --demo: could not write " << output.string() << ": "
            << finished.error().message << "\n";
        return 1;
    }
    printResult(r, name, out);
    out << "wrote " << output.string() << "\n";
    return 0;
}

} // namespace stallscope::torchrec
