// Writes seed inputs for fuzz_capture_protocol into a folder: framed envelope streams as
// the fake source plays them (a training loop with kernels, copies, syncs, CPU ops and
// thread names), its faults (a corrupt message, a cut batch, an unknown string id, a gap,
// a death mid-batch), and two sources in one input.
//   fuzz_make_capture_seeds OUT_DIR
#include "stallscope/capture/fake_source.h"
#include "stallscope/capture/protocol.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace stallscope::capture;

namespace {

/// Frames every envelope into a string, as a socket would carry them.
class FramingSink final : public EnvelopeSink {
public:
    bool send(const pb::Envelope& e) override {
        bytes += frame(e);
        return true;
    }
    std::string bytes;
};

std::string play(FakeSourceOptions o) {
    o.startNs = 1'700'000'000'000'000'000;
    o.pid = 4242;
    FramingSink sink;
    FakeSource(o).play(sink);
    return sink.bytes;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    auto write = [&](const std::string& name, const std::string& bytes) {
        std::ofstream(dir / name, std::ios::binary) << bytes;
    };
    FakeSourceOptions small;
    small.steps = 1;
    small.layers = 2;
    small.recordsPerBatch = 16;
    write("loop-1-step", play(small));
    FakeSourceOptions two = small;
    two.steps = 2;
    two.layers = 3;
    two.recordsPerBatch = 40;
    two.droppedPerBatch = 3;
    write("loop-2-steps-drops", play(two));
    FakeSourceOptions faults = small;
    faults.unknownStringInBatch = 0;
    faults.skipBatch = 1;
    write("loop-unknown-string-gap", play(faults));
    // Byte-level faults need a socket in the fake source; made here by hand instead.
    const std::string whole = play(small);
    write("loop-cut", whole.substr(0, whole.size() * 2 / 3));
    std::string corrupt = whole;
    if (corrupt.size() > 40) corrupt[corrupt.size() / 2] ^= 0x5a;
    write("loop-corrupt-byte", corrupt);
    FakeSourceOptions second = small;
    second.device = 1;
    second.stream = 3;
    write("two-sources", whole + "\n--source--\n" + play(second));
    pb::Envelope bad;
    bad.mutable_control()->set_command(pb::Control::STOP);
    write("control-and-empty", frame(bad) + frame(pb::Envelope()));
    std::printf("capture seeds written to %s\n", dir.c_str());
    return 0;
}
