// The injection library as the CUDA driver sees it: a shared object exporting only
// InitializeInjection, loadable into a process that links the protocol's messages itself,
// and whose entry point never takes the process down. Each run happens in a child process
// (this test executable, started again with STALLSCOPE_TEST_CUPTI_CHILD set).
//
// Without a CUDA driver (CI, this machine): the entry point prints one clear line and, when
// a recorder listens, tells it in a Hello why nothing is captured. With a driver and a GPU,
// gpuEndToEnd lets the driver load the library (CUDA_INJECTION64_PATH) around a tiny driver
// API workload and checks what reaches the recorder.
#include "stallscope/capture/protocol.h"

#include <cuda.h>

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <dlfcn.h>
#include <link.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace stallscope::capture;

namespace {

constexpr const char* kChildEnv = "STALLSCOPE_TEST_CUPTI_CHILD";
using InitializeInjectionFn = int (*)();

// ---- the child side

int directChild(bool twice) {
    void* lib = dlopen(STALLSCOPE_CUPTI_INJECTION_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        std::printf("dlopen failed: %s\n", dlerror());
        return 3;
    }
    auto init = reinterpret_cast<InitializeInjectionFn>(dlsym(lib, "InitializeInjection"));
    if (init == nullptr) return 4;
    std::printf("returned %d\n", init());
    if (twice) std::printf("returned %d\n", init());
    std::fflush(stdout);
    return 0;
}

// cuInit with CUDA_INJECTION64_PATH set: the driver loads the library and calls it. Then a
// 1 MiB memset on the device, through the driver API (libcuda opened, never linked).
int driverChild() {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cuda == nullptr) return 77;
    auto fn = [&](const char* name) { return dlsym(cuda, name); };
    auto cuInitF = reinterpret_cast<decltype(&cuInit)>(fn("cuInit"));
    auto cuDeviceGetF = reinterpret_cast<decltype(&cuDeviceGet)>(fn("cuDeviceGet"));
    auto retainF =
        reinterpret_cast<decltype(&cuDevicePrimaryCtxRetain)>(fn("cuDevicePrimaryCtxRetain"));
    auto setCurrentF = reinterpret_cast<decltype(&cuCtxSetCurrent)>(fn("cuCtxSetCurrent"));
    auto allocF = reinterpret_cast<decltype(&cuMemAlloc)>(fn("cuMemAlloc_v2"));
    auto memsetF = reinterpret_cast<decltype(&cuMemsetD8)>(fn("cuMemsetD8_v2"));
    auto syncF = reinterpret_cast<decltype(&cuCtxSynchronize)>(fn("cuCtxSynchronize"));
    auto freeF = reinterpret_cast<decltype(&cuMemFree)>(fn("cuMemFree_v2"));
    if (!cuInitF || !cuDeviceGetF || !retainF || !setCurrentF || !allocF || !memsetF || !syncF ||
        !freeF)
        return 5;
    if (cuInitF(0) != CUDA_SUCCESS) return 78; // a driver without a usable GPU
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUdeviceptr p = 0;
    if (cuDeviceGetF(&dev, 0) != CUDA_SUCCESS || retainF(&ctx, dev) != CUDA_SUCCESS ||
        setCurrentF(ctx) != CUDA_SUCCESS || allocF(&p, 1 << 20) != CUDA_SUCCESS)
        return 6;
    const bool ok = memsetF(p, 0x5a, 1 << 20) == CUDA_SUCCESS && syncF() == CUDA_SUCCESS;
    freeF(p);
    return ok ? 0 : 7;
}

// ---- the parent side

struct ChildResult {
    int exitCode = -1;
    QString out, err;
};

ChildResult runChild(const char* mode, const std::vector<std::pair<QString, QString>>& env,
                     bool withoutSocket = false) {
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert(kChildEnv, mode);
    e.remove(QString::fromLatin1(kSocketEnv));
    if (!withoutSocket)
        for (const auto& [k, v] : env) e.insert(k, v);
    p.setProcessEnvironment(e);
    p.start(QCoreApplication::applicationFilePath(), {});
    if (!p.waitForFinished(60'000)) p.kill();
    p.waitForFinished();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

int listenAt(const std::string& path) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd, 4) != 0)
        return -1;
    return fd;
}

/// Accepts one source and reads its envelopes until it closes (on a thread of its own).
struct Recorder {
    int listenFd = -1;
    std::vector<pb::Envelope> received;
    EnvelopeReader::Status last = EnvelopeReader::Status::Ok;
    std::thread thread;

    void start() {
        thread = std::thread([this] {
            pollfd p{listenFd, POLLIN, 0};
            if (::poll(&p, 1, 60'000) != 1) return;
            const int fd = ::accept(listenFd, nullptr, nullptr);
            if (fd < 0) return;
            EnvelopeReader reader(fd);
            std::string error;
            pb::Envelope e;
            while ((last = reader.next(e, error)) == EnvelopeReader::Status::Ok)
                received.push_back(e);
            ::close(fd);
        });
    }
    void join() {
        if (thread.joinable()) thread.join();
    }
};

bool haveCudaDriver() {
    void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h != nullptr) dlclose(h);
    return h != nullptr;
}

bool libcudaLoaded() {
    bool found = false;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            if (info->dlpi_name && std::strstr(info->dlpi_name, "libcuda.so"))
                *static_cast<bool*>(data) = true;
            return 0;
        },
        &found);
    return found;
}

} // namespace

class TestCuptiInjection : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exportsOnlyTheEntryPoint() {
        // This process registered the full-runtime protocol messages at start-up; loading the
        // library must not register them a second time (protobuf aborts on that).
        QVERIFY(pb::Envelope::descriptor() != nullptr);
        void* lib = dlopen(STALLSCOPE_CUPTI_INJECTION_PATH, RTLD_NOW | RTLD_LOCAL);
        QVERIFY2(lib != nullptr, dlerror());
        QVERIFY(dlsym(lib, "InitializeInjection") != nullptr);
        QVERIFY(dlsym(lib, "_ZN10stallscope7capture5cupti14calibrateClockERNS1_8ClockMapE") == nullptr);
        QVERIFY(dlsym(lib, "_ZN10stallscope7capture11StringTable2idESt17basic_string_"
                           "viewIcSt11char_traitsIcEE") == nullptr);
        QVERIFY2(!libcudaLoaded(),
                 "the injection library must not pull in libcuda (the driver loads it)");
        // Left loaded, as the CUDA driver leaves it: libcupti's own C++ runtime allocates its
        // 72 KiB exception pool at load, which an unloaded library would leave unreachable
        // (LeakSanitizer then reports it from an unknown module).
    }
    void withoutASocketItSaysSoOnce() {
        if (haveCudaDriver()) QSKIP("a CUDA driver is installed: see gpuEndToEnd");
        const ChildResult r = runChild("twice", {}, true);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QString("returned 1\nreturned 1\n")); // a second call is a no-op
        QCOMPARE(r.err,
                 QString("stallscope capture: STALLSCOPE_CAPTURE_SOCKET is not set (the recorder "
                         "sets it); this process runs without GPU capture\n"));
    }
    void unreachableRecorder() {
        if (haveCudaDriver()) QSKIP("a CUDA driver is installed: see gpuEndToEnd");
        QTemporaryDir dir;
        const QString path = dir.filePath("nobody.sock");
        const ChildResult r = runChild("once", {{kSocketEnv, path}});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.err.startsWith("stallscope capture: cannot reach the recorder at " + path),
                 qPrintable(r.err));
        QCOMPARE(r.err.count('\n'), 1);
    }
    void noDriverTellsTheRecorderWhy() {
        if (haveCudaDriver()) QSKIP("a CUDA driver is installed: see gpuEndToEnd");
        QTemporaryDir dir;
        const std::string path = dir.filePath("rec.sock").toStdString();
        Recorder rec;
        rec.listenFd = listenAt(path);
        QVERIFY(rec.listenFd >= 0);
        rec.start();
        const ChildResult r = runChild("twice", {{kSocketEnv, QString::fromStdString(path)},
                                                 {"STALLSCOPE_CAPTURE_DELAY", "oops"}});
        rec.join();
        ::close(rec.listenFd);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QString("returned 1\nreturned 1\n"));
        const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2); // the bad setting, then why nothing is captured
        QVERIFY(lines[0].startsWith("stallscope capture: STALLSCOPE_CAPTURE_DELAY='oops'"));
        QVERIFY2(lines[1].startsWith(
                     "stallscope capture: CUPTI could not start (cuptiSubscribe_v2: CUPTI_ERROR_"),
                 qPrintable(lines[1]));
        QVERIFY(lines[1].endsWith(
            "is the NVIDIA driver loaded and a GPU visible?; this process runs without "
            "GPU capture"));
        QCOMPARE(rec.received.size(), size_t(1));
        QCOMPARE(rec.last, EnvelopeReader::Status::End);
        const pb::Hello& h = rec.received[0].hello();
        QCOMPARE(h.protocol_version(), kProtocolVersion);
        QCOMPARE(h.source(), std::string("cupti"));
        QVERIFY(h.pid() > 0 && h.pid() != getpid());
        QVERIFY2(h.clock_note().rfind("not capturing: CUPTI could not start", 0) == 0,
                 h.clock_note().c_str());
        QVERIFY(h.command_line().find("test_cupti_injection") != std::string::npos);
        QVERIFY(!h.cupti_version().empty());
        QVERIFY(h.cuda_driver_version().empty()); // not asked from inside cuInit
    }
    void anotherCuptiClientKeepsTheProgramRunning() {
        // torch.profiler (Kineto) holds CUPTI's one subscription: a stand-in libcupti says so
        // through cuptiSubscribe_v2, as CUPTI does. The program runs on unprofiled, the line
        // on stderr and the recorder's Hello name the other client and suggest --attach.
        QTemporaryDir dir;
        const std::string path = dir.filePath("rec.sock").toStdString();
        Recorder rec;
        rec.listenFd = listenAt(path);
        QVERIFY(rec.listenFd >= 0);
        rec.start();
        const ChildResult r =
            runChild("twice", {{kSocketEnv, QString::fromStdString(path)},
                               {"LD_LIBRARY_PATH", QStringLiteral(STALLSCOPE_FAKE_CUPTI_DIR)},
                               {"FAKE_CUPTI_SUBSCRIBER", "libkineto"},
                               {"FAKE_CUPTI_TRACE", "1"}});
        rec.join();
        ::close(rec.listenFd);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QString("returned 1\nreturned 1\n"));
        const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
        // The stand-in was the CUPTI loaded, asked once, and nothing else was tried after.
        QCOMPARE(lines.filter("fake cupti: ").size(), 1);
        QCOMPARE(lines[0], QString("fake cupti: cuptiSubscribe_v2"));
        const QStringList ours = lines.filter("stallscope capture: ");
        QCOMPARE(ours.size(), 1);
        QVERIFY2(ours[0].startsWith("stallscope capture: another CUPTI client already holds CUPTI "
                                    "in this process (\"libkineto\")"),
                 qPrintable(ours[0]));
        QVERIFY(ours[0].contains("stallscope-cli record --attach"));
        QVERIFY(ours[0].endsWith("this process runs without GPU capture"));
        QCOMPARE(rec.received.size(), size_t(1));
        const pb::Hello& h = rec.received[0].hello();
        QCOMPARE(h.cupti_version(), std::string("999")); // the stand-in's
        QVERIFY2(h.clock_note().rfind("not capturing: another CUPTI client already holds CUPTI "
                                      "in this process (\"libkineto\")",
                                      0) == 0,
                 h.clock_note().c_str());
    }
    void recordSaysWhyNothingWasCaptured() {
        // The same, through `stallscope-cli record`: its summary carries the reason.
        const QString cli = qEnvironmentVariable("STALLSCOPE_CLI");
        if (cli.isEmpty()) QSKIP("STALLSCOPE_CLI is not set (run through ctest)");
        QTemporaryDir dir;
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(kChildEnv, "once");
        e.insert("LD_LIBRARY_PATH", QStringLiteral(STALLSCOPE_FAKE_CUPTI_DIR));
        e.insert("FAKE_CUPTI_SUBSCRIBER", "libkineto");
        p.setProcessEnvironment(e);
        p.start(cli, {"record", "-o", dir.filePath("t.pt.trace.json.gz"), "--",
                      QCoreApplication::applicationFilePath()});
        QVERIFY(p.waitForFinished(60'000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(out.contains("note: no GPU rows: another CUPTI client already holds CUPTI in this "
                              "process (\"libkineto\")"),
                 qPrintable(out));
        QVERIFY2(out.contains("record --attach"), qPrintable(out));
    }
    void gpuEndToEnd() {
        if (!haveCudaDriver())
            QSKIP("no CUDA driver on this machine: the GPU path is not exercised");
        QTemporaryDir dir;
        const std::string path = dir.filePath("rec.sock").toStdString();
        Recorder rec;
        rec.listenFd = listenAt(path);
        QVERIFY(rec.listenFd >= 0);
        rec.start();
        const ChildResult r =
            runChild("driver", {{kSocketEnv, QString::fromStdString(path)},
                                {"CUDA_INJECTION64_PATH", STALLSCOPE_CUPTI_INJECTION_PATH}});
        rec.join();
        ::close(rec.listenFd);
        if (r.exitCode == 78) QSKIP("the CUDA driver found no usable GPU");
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(!rec.received.empty() && rec.received.front().has_hello(), qPrintable(r.err));
        const pb::Hello& h = rec.received.front().hello();
        QVERIFY2(h.clock_note().rfind("not capturing", 0) != 0, h.clock_note().c_str());
        QVERIFY(!h.cuda_driver_version().empty());
        std::vector<std::string> strings;
        const pb::Activity* memset = nullptr;
        uint64_t activities = 0;
        std::vector<std::pair<std::string, uint32_t>> driverCalls;
        for (const pb::Envelope& e : rec.received) {
            if (!e.has_batch()) continue;
            for (const std::string& s : e.batch().new_strings()) strings.push_back(s);
            for (const pb::Activity& a : e.batch().activities()) {
                ++activities;
                if (a.kind() == pb::Activity::MEMSET && a.bytes() == (1u << 20)) memset = &a;
                if (a.kind() == pb::Activity::DRIVER)
                    driverCalls.emplace_back(strings.at(a.name_id()), a.correlation());
            }
        }
        QVERIFY2(memset != nullptr, "no 1 MiB memset reached the recorder");
        QCOMPARE(strings.at(memset->name_id()), std::string("Memset (Device)"));
        QVERIFY(memset->end_ns() > memset->start_ns());
        QVERIFY(std::find(driverCalls.begin(), driverCalls.end(),
                          std::make_pair(std::string("cuMemsetD8"), memset->correlation())) !=
                driverCalls.end());
        QVERIFY(rec.received.back().has_bye());
        QCOMPARE(rec.received.back().bye().reason(), pb::Bye::EXIT);
        QCOMPARE(rec.received.back().bye().total_records(), activities);
    }
};

int main(int argc, char** argv) {
    if (const char* mode = std::getenv(kChildEnv)) {
        const std::string m = mode;
        return m == "driver" ? driverChild() : directChild(m == "twice");
    }
    QCoreApplication app(argc, argv);
    TestCuptiInjection t;
    return QTest::qExec(&t, argc, argv);
}

#include "test_cupti_injection.moc"
