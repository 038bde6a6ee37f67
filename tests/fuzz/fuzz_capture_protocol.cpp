// Fuzz target: the capture protocol's decoder (EnvelopeReader: varint-framed Envelopes from
// a stream) and the capture session that consumes the envelopes (CaptureSession: strings,
// sequence numbers, activities -> event log + model, finish -> a Kineto JSON file).
// The input is up to four sources' byte streams separated by "\n--source--\n"; each stream
// arrives through a pipe in small writes (chunk size from the input's hash), the envelopes
// are read as the recorder reads a connection (recorder_server.cpp) and the sources take
// turns, one envelope each.
// Promises:
//  * every stream ends (End, Truncated, or Corrupt with the framing lost); a bad message is
//    a counted problem, never a crash, a hang or undefined behaviour;
//  * snapshots and the final trace keep the model's invariants, hold every record written,
//    and read their args back from the event log;
//  * the finished file imports, and the importer's model equals the session's
//    (the session's promise, session.h), gzip output included.
#include "fuzz_support.h"

#include "stallscope/capture/protocol.h"
#include "stallscope/capture/session.h"
#include "stallscope/importers/importer.h"

#include <google/protobuf/stubs/logging.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace stallscope;
using namespace stallscope::capture;

namespace {

constexpr const char* kTarget = "capture_protocol";
constexpr std::string_view kSeparator = "\n--source--\n";
constexpr size_t kMaxSources = 4;

/// One source's stream: a pipe fed by a writer thread in chunks of `chunk` bytes.
struct Stream {
    int fd = -1;
    std::thread writer;
    std::unique_ptr<EnvelopeReader> reader;
    uint32_t source = 0;
    bool done = false;

    Stream(std::string bytes, size_t chunk) {
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0)
            fuzz::fail(kTarget, std::string("pipe2 failed: ") + std::strerror(errno));
        fd = p[0];
        try {
            writer = std::thread([w = p[1], bytes = std::move(bytes), chunk] {
                for (size_t at = 0; at < bytes.size();) {
                    const ssize_t n =
                        ::write(w, bytes.data() + at, std::min(chunk, bytes.size() - at));
                    if (n < 0 && errno == EINTR) continue;
                    if (n <= 0) break; // the reader gave up (EPIPE)
                    at += static_cast<size_t>(n);
                }
                ::close(w);
            });
        } catch (const std::system_error&) { // no thread to be had (the machine's limit)
            ::close(p[0]);
            ::close(p[1]);
            throw;
        }
        reader = std::make_unique<EnvelopeReader>(fd);
    }
    ~Stream() {
        ::close(fd);  // a writer still blocked gets EPIPE
        if (writer.joinable()) writer.join();
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const bool once = [] {
        std::signal(SIGPIPE, SIG_IGN);               // a writer whose reader gave up gets EPIPE
        google::protobuf::SetLogHandler(nullptr);    // "invalid UTF-8" for every such message
        return true;
    }();
    (void)once;
    const std::string input(reinterpret_cast<const char*>(data), size);
    const uint64_t hash = fuzz::inputHash(input);
    std::vector<std::string> parts;
    for (size_t at = 0;;) {
        const size_t sep = parts.size() + 1 < kMaxSources ? input.find(kSeparator, at) : std::string::npos;
        parts.push_back(input.substr(at, sep == std::string::npos ? std::string::npos : sep - at));
        if (sep == std::string::npos) break;
        at = sep + kSeparator.size();
    }

    const std::filesystem::path dir = fuzz::scratchDir();
    const bool gzipOutput = hash % 4 == 0;  // the final trace is then the file's import
    const std::filesystem::path output = dir / (gzipOutput ? "capture.json.gz" : "capture.json");
    std::error_code ec;
    std::filesystem::remove(output, ec);
    auto session = std::make_unique<CaptureSession>(dir / "capture.events.json");
    if (const base::Status opened = session->open(); !opened)
        fuzz::fail(kTarget, "the session does not open: " + opened.error().message);
    std::string error; // the stream readers' messages

    std::vector<std::unique_ptr<Stream>> streams;
    const size_t chunk = 1 + (hash >> 8) % 61;
    for (std::string& p : parts) {
        try {
            streams.push_back(std::make_unique<Stream>(std::move(p), chunk));
        } catch (const std::system_error& e) {
            // The machine, not the code under test: said, and the input is not judged.
            std::fprintf(
                stderr, "fuzz_capture_protocol: cannot start a writer thread (%s): input skipped\n",
                e.what());
            return 0;
        }
        streams.back()->source = session->addSource();
    }
    uint64_t problemsReported = 0, envelopes = 0;
    for (bool any = true; any;) {
        any = false;
        for (auto& s : streams) {
            if (s->done) continue;
            any = true;
            pb::Envelope e;
            const EnvelopeReader::Status st = s->reader->next(e, error);
            if (st == EnvelopeReader::Status::Ok) {
                ++envelopes;
                session->receive(s->source, e);
                continue;
            }
            s->done = true;
            if (st == EnvelopeReader::Status::End) continue;
            STALLSCOPE_FUZZ_CHECK(!error.empty(), "a stream problem without a message");
            session->reportProblem(s->source, error);
            ++problemsReported;
            if (st == EnvelopeReader::Status::Corrupt && !s->reader->lost()) s->done = false;
        }
    }
    for (auto& s : streams) {
        // After the end every call says the same.
        const EnvelopeReader::Status again = s->reader->next(*std::make_unique<pb::Envelope>(), error);
        STALLSCOPE_FUZZ_CHECK(again != EnvelopeReader::Status::Ok, "a message after the end of a stream");
    }
    streams.clear();

    const SessionStats st = session->stats();
    STALLSCOPE_FUZZ_CHECK(st.badMessages >= problemsReported, "reported problems were not counted");
    STALLSCOPE_FUZZ_CHECK(st.problems.size() <= 20, "the problem list grows without bound");
    const auto snap = session->snapshot();
    STALLSCOPE_FUZZ_CHECK(snap != nullptr, "no snapshot");
    fuzz::checkModel(kTarget, *snap);
    STALLSCOPE_FUZZ_CHECK(snap->slices().size() + snap->instants().size() == st.records,
                          "the snapshot holds " + std::to_string(snap->slices().size() + snap->instants().size()) +
                              " events of " + std::to_string(st.records) + " records");

    const auto finished = session->finish(output);
    STALLSCOPE_FUZZ_CHECK(finished.ok() && finished.value(),
                          "finish failed: " +
                              (finished.ok() ? std::string("no trace") : finished.error().message));
    const auto& final = finished.value();
    fuzz::checkModel(kTarget, *final);
    fuzz::readBackEvents(kTarget, *final, 16);
    auto again = importers::importFile(output);
    if (!again) {
        std::string near;
        if (!gzipOutput) {  // the text around the problem
            std::ifstream f(output, std::ios::binary);
            const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            const size_t at = std::min<uint64_t>(again.error().byteOffset, text.size());
            near = " near '" + text.substr(at > 120 ? at - 120 : 0, 240) + "'";
        }
        fuzz::fail(kTarget, "the recording does not import: " + again.error().message + near);
    }
    fuzz::checkModel(kTarget, *again.value());
    fuzz::CompareOptions cmp;
    cmp.importCounts = false;  // the session's model does not count file entries
    cmp.srcOffsets = !gzipOutput;
    const std::string diff = fuzz::compareTraces(*final, *again.value(), cmp);
    STALLSCOPE_FUZZ_CHECK(diff.empty(), "the recording's re-import differs from the session's model: " + diff);
    session.reset();
    std::filesystem::remove(output, ec);
    return 0;
}
