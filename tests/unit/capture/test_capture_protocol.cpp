// The capture protocol's framing over real sockets: round trips, a stream that delivers
// one byte at a time, oversize and malformed lengths, garbage, a stream cut mid-message,
// string tables, Control messages and a peer that is gone (no SIGPIPE).
#include "stallscope/capture/protocol.h"

#include <QTemporaryDir>
#include <QTest>

#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

using namespace stallscope::capture;

namespace {

struct Pair {
    int fds[2] = {-1, -1};
    Pair() { ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds); }
    ~Pair() {
        for (int fd : fds)
            if (fd >= 0) ::close(fd);
    }
    void closeWriter() { ::close(fds[1]), fds[1] = -1; }
    void write(const std::string& bytes) const {
        size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(fds[1], bytes.data() + done, bytes.size() - done);
            QVERIFY(n > 0);
            done += size_t(n);
        }
    }
};

pb::Envelope batchEnvelope(uint64_t sequence, int activities) {
    pb::Envelope e;
    pb::Batch& b = *e.mutable_batch();
    b.set_sequence(sequence);
    b.add_new_strings("kernel " + std::to_string(sequence));
    for (int i = 0; i < activities; ++i) {
        pb::Activity& a = *b.add_activities();
        a.set_kind(pb::Activity::KERNEL);
        a.set_start_ns(1000 + i);
        a.set_end_ns(2000 + i);
        a.set_correlation(uint32_t(i + 1));
    }
    return e;
}

} // namespace

class TestCaptureProtocol : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void roundTripOfEveryBody() {
        Pair p;
        pb::Envelope hello, device, thread, bye, control;
        hello.mutable_hello()->set_source("fake");
        hello.mutable_hello()->set_pid(42);
        device.mutable_device()->set_name("GPU \"0\"");
        thread.mutable_thread_name()->set_tid(7);
        bye.mutable_bye()->set_reason(pb::Bye::CRASH);
        control.mutable_control()->set_command(pb::Control::STOP);
        const std::vector<pb::Envelope> all{hello, device, batchEnvelope(0, 3), thread, bye, control};
        std::string bytes;
        for (const auto& e : all) bytes += frame(e);
        p.write(bytes);
        p.closeWriter();
        EnvelopeReader r(p.fds[0]);
        std::string error;
        for (const auto& want : all) {
            pb::Envelope got;
            QCOMPARE(r.next(got, error), EnvelopeReader::Status::Ok);
            QCOMPARE(got.SerializeAsString(), want.SerializeAsString());
        }
        pb::Envelope end;
        QCOMPARE(r.next(end, error), EnvelopeReader::Status::End);
        QCOMPARE(r.next(end, error), EnvelopeReader::Status::End);  // sticky
        QCOMPARE(r.messages(), uint64_t(all.size()));
        QCOMPARE(r.bytesRead(), uint64_t(bytes.size()));
        QVERIFY(!r.lost());
    }

    void oneByteAtATime() {
        Pair p;
        std::string bytes;
        for (int i = 0; i < 40; ++i) bytes += frame(batchEnvelope(uint64_t(i), i % 7));
        std::thread writer([&] {
            for (char c : bytes) {
                QVERIFY(::write(p.fds[1], &c, 1) == 1);
                if (c == 0) std::this_thread::yield();
            }
            p.closeWriter();
        });
        EnvelopeReader r(p.fds[0]);
        std::string error;
        for (int i = 0; i < 40; ++i) {
            pb::Envelope got;
            QCOMPARE(r.next(got, error), EnvelopeReader::Status::Ok);
            QCOMPARE(got.batch().sequence(), uint64_t(i));
            QCOMPARE(got.batch().activities_size(), i % 7);
        }
        pb::Envelope end;
        QCOMPARE(r.next(end, error), EnvelopeReader::Status::End);
        writer.join();
    }

    void largeMessageAcrossManyReads() {
        Pair p;
        const pb::Envelope big = batchEnvelope(9, 200000);  // several MB
        const std::string bytes = frame(big);
        QVERIFY(bytes.size() > 2u << 20);
        std::thread writer([&] {
            p.write(bytes);
            p.closeWriter();
        });
        EnvelopeReader r(p.fds[0]);
        std::string error;
        pb::Envelope got;
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Ok);
        QCOMPARE(got.batch().activities_size(), 200000);
        writer.join();
    }

    void oversizeLengthLosesTheStream() {
        Pair p;
        std::string bytes;
        uint64_t v = uint64_t(kMaxMessageBytes) + 1;  // varint of 64 MiB + 1
        while (v >= 0x80) bytes += char((v & 0x7f) | 0x80), v >>= 7;
        bytes += char(v);
        bytes += frame(batchEnvelope(0, 1));
        p.write(bytes);
        EnvelopeReader r(p.fds[0]);
        std::string error;
        pb::Envelope got;
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Corrupt);
        QVERIFY2(error.find("exceeds the limit") != std::string::npos, error.c_str());
        QVERIFY(r.lost());
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Corrupt);  // nothing more is read
    }

    void lengthThatIsNotAVarint() {
        Pair p;
        p.write(std::string(11, '\xff'));
        EnvelopeReader r(p.fds[0]);
        std::string error;
        pb::Envelope got;
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Corrupt);
        QVERIFY(r.lost());
    }

    void garbageMessageIsSkipped() {
        Pair p;
        p.write(frame(batchEnvelope(0, 2)) + std::string("\x05\x07\x07\x07\x07\x07", 6) + frame(batchEnvelope(1, 3)));
        p.closeWriter();
        EnvelopeReader r(p.fds[0]);
        std::string error;
        pb::Envelope got;
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Ok);
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Corrupt);
        QVERIFY2(error.find("does not parse") != std::string::npos, error.c_str());
        QVERIFY(!r.lost());
        got.Clear();
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Ok);
        QCOMPARE(got.batch().sequence(), uint64_t(1));
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::End);
    }

    void endOfStreamInsideAMessage() {
        const std::string whole = frame(batchEnvelope(3, 10));
        for (size_t cut : {size_t(1), whole.size() / 2, whole.size() - 1}) {
            Pair p;
            p.write(frame(batchEnvelope(2, 1)) + whole.substr(0, cut));
            p.closeWriter();
            EnvelopeReader r(p.fds[0]);
            std::string error;
            pb::Envelope got;
            QCOMPARE(r.next(got, error), EnvelopeReader::Status::Ok);
            QCOMPARE(r.next(got, error), EnvelopeReader::Status::Truncated);
            QVERIFY2(error.find("ends inside") != std::string::npos, error.c_str());
            QVERIFY(r.lost());
        }
        Pair p;  // inside the length prefix itself
        p.write(std::string("\x80", 1));
        p.closeWriter();
        EnvelopeReader r(p.fds[0]);
        std::string error;
        pb::Envelope got;
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Truncated);
    }

    void stringTableAcrossBatches() {
        StringTable t;
        QCOMPARE(t.id(""), 0u);
        QCOMPARE(t.id("cudaLaunchKernel"), 1u);
        QCOMPARE(t.id("kernel"), 2u);
        QCOMPARE(t.id("cudaLaunchKernel"), 1u);
        pb::Batch b1;
        t.takeNew(b1);
        QCOMPARE(b1.new_strings_size(), 3);
        QCOMPARE(b1.new_strings(0), std::string());
        QCOMPARE(b1.new_strings(2), std::string("kernel"));
        pb::Batch b2;
        t.takeNew(b2);
        QCOMPARE(b2.new_strings_size(), 0);
        QCOMPARE(t.id("kernel"), 2u);
        QCOMPARE(t.id("memcpy"), 3u);
        t.takeNew(b2);
        QCOMPARE(b2.new_strings_size(), 1);
        QCOMPARE(b2.new_strings(0), std::string("memcpy"));
    }

    void socketWriterAndControl() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("s").toStdString();
        const int server = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
        QCOMPARE(::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        QCOMPARE(::listen(server, 1), 0);
        SocketWriter w;
        std::string error;
        QVERIFY(!SocketWriter().connect(dir.filePath("nobody").toStdString(), error));
        QVERIFY(error.find("cannot connect") != std::string::npos);
        QVERIFY(w.connect(path, error));
        const int peer = ::accept(server, nullptr, nullptr);
        QVERIFY(peer >= 0);
        QVERIFY(w.send(batchEnvelope(5, 4)));
        EnvelopeReader r(peer);
        pb::Envelope got;
        QCOMPARE(r.next(got, error), EnvelopeReader::Status::Ok);
        QCOMPARE(got.batch().sequence(), uint64_t(5));

        pb::Control c;
        QVERIFY(!w.pollControl(c));  // nothing waiting: does not block
        pb::Envelope start;
        start.mutable_control()->set_command(pb::Control::START);
        const std::string f = frame(start);
        QCOMPARE(::write(peer, f.data(), 1), ssize_t(1));  // half a message first
        QVERIFY(!w.pollControl(c));
        QCOMPARE(::write(peer, f.data() + 1, f.size() - 1), ssize_t(f.size() - 1));
        QVERIFY(w.pollControl(c));
        QCOMPARE(c.command(), pb::Control::START);

        // The recorder goes away: sending fails, and no SIGPIPE ends this process.
        ::close(peer);
        bool failed = false;
        for (int i = 0; i < 1000 && !failed; ++i) failed = !w.send(batchEnvelope(uint64_t(i), 100));
        QVERIFY(failed);
        QVERIFY(!w.sendRaw("x"));
        w.close();
        QVERIFY(!w.send(batchEnvelope(0, 1)));
        ::close(server);
    }
};

QTEST_GUILESS_MAIN(TestCaptureProtocol)
#include "test_capture_protocol.moc"
