// Writes seed inputs for fuzz_capture_protocol into a folder: framed envelope streams as
// the fake source plays them (a training loop with kernels, copies, syncs, CPU ops and
// thread names), its faults (a corrupt message, a cut batch, an unknown string id, a gap,
// a death mid-batch), and two sources in one input.
//   fuzz_make_capture_seeds OUT_DIR
#include "stallscope/capture/fake_source.h"
#include "stallscope/capture/protocol.h"

#include <cstdint>
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
    // Values at the edges: int64 times, negative and huge ids, unknown kinds, strings past
    // the table, hostile names (valid UTF-8: proto3 rejects a message with invalid UTF-8
    // in a string), a kernel on a device with properties of zeros.
    {
        std::string edges;
        pb::Envelope hello;
        hello.mutable_hello()->set_protocol_version(99);
        hello.mutable_hello()->set_source("fuzz\"");
        hello.mutable_hello()->set_pid(-1);
        hello.mutable_hello()->set_command_line("/bin/\u00e9 \n run");
        edges += frame(hello);
        pb::Envelope dev;
        dev.mutable_device()->set_id(-7);
        dev.mutable_device()->set_name("</script>\x01");
        edges += frame(dev);
        pb::Envelope b;
        pb::Batch& batch = *b.mutable_batch();
        batch.set_sequence(UINT64_MAX);
        batch.add_new_strings("");
        batch.add_new_strings("k\"\\\x7f");
        batch.set_dropped_records(UINT64_MAX);
        batch.set_drop_reason("\x01");
        const int64_t times[][2] = {{INT64_MIN, INT64_MAX}, {INT64_MAX, INT64_MIN}, {-1, INT64_MAX}, {0, -5}};
        int kind = 0;
        for (const auto& t : times)
            for (int k : {1, 2, 3, 4, 6, 8, 9, 10, 99}) {
                pb::Activity& a = *batch.add_activities();
                a.set_kind(static_cast<pb::Activity::Kind>(k));
                a.set_start_ns(t[0]);
                a.set_end_ns(t[1]);
                a.set_name_id(static_cast<uint32_t>(kind++ % 3));
                a.set_device(kind % 2 ? -7 : INT32_MAX);
                a.set_stream(INT32_MIN);
                a.set_pid(kind % 3 ? INT64_MIN : 0);
                a.set_tid(INT64_MAX);
                a.set_correlation(kind % 2 ? UINT32_MAX : 0x80000000u);
                a.set_external_id(UINT64_MAX);
                a.set_grid_x(INT32_MAX), a.set_block_x(INT32_MAX), a.set_registers_per_thread(INT32_MAX);
                a.set_static_shared_memory(INT32_MAX), a.set_dynamic_shared_memory(INT32_MAX);
                a.set_bytes(UINT64_MAX);
                a.set_copy_kind(static_cast<pb::Activity::CopyKind>(k % 11));
                a.set_sequence_number(INT64_MIN);
                a.set_input_shapes(k % 2 ? "[[1, -2], []]" : "[[");
                a.set_category_id(k == 99 ? 5 : 0);
            }
        edges += frame(b);
        pb::Envelope tn;
        tn.mutable_thread_name()->set_pid(INT64_MIN);
        tn.mutable_thread_name()->set_tid(INT64_MAX);
        tn.mutable_thread_name()->set_name("thread \u2028");
        edges += frame(tn);
        pb::Envelope bye;
        bye.mutable_bye()->set_reason(static_cast<pb::Bye::Reason>(77));
        edges += frame(bye);
        write("edges", edges);
    }
    pb::Envelope bad;
    bad.mutable_control()->set_command(pb::Control::STOP);
    write("control-and-empty", frame(bad) + frame(pb::Envelope()));
    std::printf("capture seeds written to %s\n", dir.c_str());
    return 0;
}
