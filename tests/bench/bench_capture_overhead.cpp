// What recording costs a LibTorch training loop: the demo workloads' step time recorded by
// TorchRecorder into a CaptureSession (the same conversion and event log as
// `stallscope-cli record`, in-process, so its threads compete with the loop on the same
// cores) against the same steps without the recorder, alternating, best of --repeat each.
//
//   build/release/tests/bench/bench_capture_overhead [--repeat 5] [--steps 30]
//                                                    [--no-shapes] [DEMO...]
//
// Prints per demo: ms per step without and with recording, the overhead ratio, records per
// step. The target for GPU capture is <= 3 % (../shared/spec/performance.md); these figures are the
// CPU side (RecordFunction callbacks and the session), with no GPU here.
#include "stallscope/capture/session.h"
#include "stallscope/torch/demos.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

using namespace stallscope;

namespace {

struct Run {
    double secondsPerStep = 0;
    double recordsPerStep = 0;
};

/// Takes envelopes and drops them: what the callbacks and the recorder's own thread cost.
class NullSink final : public capture::EnvelopeSink {
public:
    bool send(const capture::pb::Envelope&) override { return true; }
};

bool g_shapes = true;

Run once(const std::string& demo, int steps, bool record, bool nullSink) {
    const auto log = std::filesystem::temp_directory_path() /
                     ("stallscope-overhead-" + std::to_string(getpid()) + ".json");
    capture::CaptureSession session(log);
    NullSink null;
    if (const base::Status opened = session.open(); !opened) {
        std::fprintf(stderr, "cannot open a session: %s\n", opened.error().message.c_str());
        std::exit(1);
    }
    torchrec::DemoOptions o;
    o.steps = steps;
    o.record = record;
    o.recordShapes = g_shapes;
    const torchrec::DemoResult r =
        nullSink ? torchrec::runDemo(demo, null, o) : torchrec::runDemo(demo, session, o);
    if (!r.ok) {
        std::fprintf(stderr, "%s: %s\n", demo.c_str(), r.error.c_str());
        std::exit(1);
    }
    (void)session.finish(log); // included: what the recorder does after the program ends
    std::filesystem::remove(log);
    return {r.seconds / r.steps, double(r.records) / r.steps};
}

} // namespace

int main(int argc, char** argv) {
    int repeat = 5, steps = 30;
    std::vector<std::string> demos;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
        else if (a == "--steps" && i + 1 < argc) steps = std::max(1, std::atoi(argv[++i]));
        else if (a == "--no-shapes") g_shapes = false;
        else demos.push_back(a);
    }
    if (demos.empty()) demos = {"large-batch", "small-batch", "dataloader-fixed"};
    std::printf("%-18s %12s %12s %9s %14s %9s %12s\n", "demo", "ms/step off", "ms/step on", "overhead",
                "records/step", "ns/record", "callbacks");
    for (const std::string& d : demos) {
        once(d, 3, false, false);  // warm caches and the allocator
        double off = 1e30, on = 1e30, onNull = 1e30, records = 0;
        for (int i = 0; i < repeat; ++i) {
            off = std::min(off, once(d, steps, false, false).secondsPerStep);
            const Run r = once(d, steps, true, false);
            on = std::min(on, r.secondsPerStep);
            onNull = std::min(onNull, once(d, steps, true, true).secondsPerStep);
            records = r.recordsPerStep;
        }
        // "callbacks": the overhead with a sink that drops everything (the RecordFunction
        // callbacks and the recorder's flush thread, without the session's conversion).
        std::printf("%-18s %12.2f %12.2f %8.1f%% %14.0f %9.0f %11.1f%%\n", d.c_str(), off * 1e3, on * 1e3,
                    (on / off - 1) * 100, records, (on - off) * 1e9 / std::max(1.0, records),
                    (onNull / off - 1) * 100);
    }
    return 0;
}
