// Attach through Kineto's daemon protocol: the wire format (and a bad-input table), the
// daemon against a stand-in Kineto client written from libkineto's sources
// (tests/tools/kineto_client.cpp, several processes at once), the attach flow and
// `stallscope-cli record --attach` end to end. Each case uses filesystem sockets in a
// temporary folder (KINETO_IPC_SOCKET_DIR, as Kineto supports) or an abstract name of its own,
// so that cases running side by side, or a dynolog daemon on the machine, do not meet.
#include "test_support.h"

#include "stallscope/capture/kineto_daemon.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <thread>

using namespace stallscope::capture::kineto;
using stallscope::test::okOr;
using stallscope::test::valueOr;
using namespace std::chrono_literals;

namespace {

QString clientPath() {
    return QStringLiteral(STALLSCOPE_KINETO_CLIENT);
}

/// A stand-in Kineto client process polling the daemon in `socketDir` (empty: abstract).
struct Client {
    QProcess p;
    Client(const QString& socketDir, const QStringList& args, const QString& daemonName = {}) {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        if (socketDir.isEmpty())
            e.remove("KINETO_IPC_SOCKET_DIR");
        else
            e.insert("KINETO_IPC_SOCKET_DIR", socketDir);
        e.remove("SLURM_JOB_ID");
        p.setProcessEnvironment(e);
        QStringList a = args;
        if (!daemonName.isEmpty()) a << "--daemon-name" << daemonName;
        p.start(clientPath(), a);
    }
    ~Client() {
        if (p.state() != QProcess::NotRunning) {
            p.kill();
            p.waitForFinished();
        }
    }
    int32_t pid() const { return static_cast<int32_t>(p.processId()); }
    QString output() { return QString::fromUtf8(p.readAllStandardOutput()); }
};

template <typename F> bool waitFor(F cond, std::chrono::milliseconds limit = 10s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
        if (cond()) return true;
        std::this_thread::sleep_for(20ms);
    }
    return cond();
}

DaemonOptions inFolder(const QTemporaryDir& dir) {
    DaemonOptions o;
    o.socketDir = dir.path().toStdString();
    o.socketDirFromEnvironment = false;
    return o;
}

} // namespace

class TestKinetoAttach : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void messageFraming() {
        const std::string m = encodeMessage("req", "abc");
        QCOMPARE(m.size(), size_t(43));
        uint64_t size = 0;
        std::memcpy(&size, m.data(), 8);
        QCOMPARE(size, uint64_t(3));
        QCOMPARE(std::string(m.data() + 8), std::string("req"));
        QCOMPARE(m.substr(40), std::string("abc"));
        std::string error;
        const Message d = valueOr(decodeMessage(m), error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(d.type, std::string("req"));
        QCOMPARE(d.payload, std::string("abc"));

        PollRequest r{kConfigActivities, 4242, {300, 200, 100}};
        const std::string p = encodePollRequest(r);
        QCOMPARE(p.size(), size_t(16 + 12));
        const PollRequest back = valueOr(decodePollRequest(p), error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(back.configType, kConfigActivities);
        QCOMPARE(back.jobId, int64_t(4242));
        QCOMPARE(back.pids, (std::vector<int32_t>{300, 200, 100}));
        const ContextRegistration c{3, 77, 9};
        const ContextRegistration cb = valueOr(decodeContext(encodeContext(c)), error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(cb.gpu, 3);
        QCOMPARE(cb.pid, 77);
        QCOMPARE(cb.jobId, int64_t(9));
    }
    void badMessages_data() {
        QTest::addColumn<QByteArray>("datagram");
        QTest::addColumn<QString>("error");
        auto msg = [](const char* type, const std::string& payload) {
            const std::string m = encodeMessage(type, payload);
            return QByteArray(m.data(), qsizetype(m.size()));
        };
        QTest::newRow("empty") << QByteArray() << "shorter than the 40-byte header";
        QTest::newRow("header cut") << msg("req", "").left(39) << "shorter than the 40-byte header";
        QByteArray lying = msg("req", "abcd");
        lying[0] = 9;
        QTest::newRow("size disagrees") << lying << "announces 9 payload bytes, the datagram has 4";
        QByteArray noNul = msg("req", "");
        for (int i = 8; i < 40; ++i) noNul[i] = 'x';
        QTest::newRow("type without NUL") << noNul << "without its terminating NUL";
    }
    void badMessages() {
        QFETCH(QByteArray, datagram);
        QFETCH(QString, error);
        const auto m =
            decodeMessage(std::string_view(datagram.constData(), size_t(datagram.size())));
        QVERIFY(!m);
        const std::string& e = m.error().message;
        QVERIFY2(QString::fromStdString(e).contains(error), e.c_str());
    }
    void badPayloads() {
        QVERIFY(!decodePollRequest("short"));
        std::string p = encodePollRequest({2, 0, {1, 2}});
        const auto cut = decodePollRequest(p.substr(0, p.size() - 1)); // n says 2 pids, 7 follow
        QVERIFY(!cut);
        const std::string& e = cut.error().message;
        QVERIFY2(e.find("2 pids in 23 bytes") != std::string::npos, e.c_str());
        p = encodePollRequest({2, 0, {}});
        const int32_t negative = -5;
        std::memcpy(p.data() + 4, &negative, 4);
        QVERIFY(!decodePollRequest(p));
        const int32_t huge = 1 << 30;
        std::memcpy(p.data() + 4, &huge, 4);
        QVERIFY(!decodePollRequest(p));
        QVERIFY(!decodeContext(std::string(15, '\0')));
    }
    void addresses() {
        sockaddr_un a{};
        QCOMPARE(socketAddress("dynolog", "", &a), offsetof(sockaddr_un, sun_path) + 9);
        QCOMPARE(a.sun_path[0], '\0');
        QCOMPARE(std::string(a.sun_path + 1), std::string("dynolog"));
        QCOMPARE(a.sun_path[8], '\0'); // the trailing NUL belongs to the name's length
        QCOMPARE(socketAddress("dynolog", "/run/k", &a), offsetof(sockaddr_un, sun_path) + 15);
        QCOMPARE(std::string(a.sun_path), std::string("/run/k/dynolog"));
        QCOMPARE(socketAddress(std::string(200, 'x'), "", &a), size_t(0));
    }
    void configAndPaths() {
        TraceRequest t;
        t.duration = 1500ms;
        t.logFile = "/tmp/s/trace.pt.trace.json";
        const std::string d = onDemandConfig(t);
        QVERIFY(d.find("ACTIVITIES_LOG_FILE=/tmp/s/trace.pt.trace.json\n") == 0);
        QVERIFY(d.find("PROFILE_START_TIME=0\nACTIVITIES_DURATION_MSECS=1500\n") !=
                std::string::npos);
        QVERIFY(d.find("ITERATION") == std::string::npos);
        QVERIFY(d.find("WARMUP") == std::string::npos); // Kineto's own unless asked
        t.warmupSeconds = 1;
        QVERIFY(onDemandConfig(t).find("ACTIVITIES_WARMUP_PERIOD_SECS=1\n") != std::string::npos);
        t.warmupSeconds = -1;
        t.iterations = 4;
        const std::string i = onDemandConfig(t);
        QVERIFY(i.find("PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1\nACTIVITIES_"
                       "ITERATIONS=4\n") != std::string::npos);
        QVERIFY(i.find("DURATION") == std::string::npos);
        // Every line is KEY=VALUE: Kineto aborts its parse on any other line.
        for (const std::string& text : {d, i}) {
            size_t at = 0;
            while (at < text.size()) {
                const size_t end = text.find('\n', at);
                const std::string line = text.substr(at, end - at);
                QVERIFY2(std::count(line.begin(), line.end(), '=') == 1, line.c_str());
                at = end + 1;
            }
        }
        QCOMPARE(kinetoTracePath("/tmp/a/trace.pt.trace.json", 42).string(),
                 std::string("/tmp/a/trace_42.pt.trace.json"));
        QCOMPARE(kinetoTracePath("/tmp/a/t.json", 42).string(), std::string("/tmp/a/t_42.json"));
        QCOMPARE(kinetoTracePath("/tmp/a/t", 42).string(), std::string("/tmp/a/t"));
        QCOMPARE(kinetoDefaultTracePath(7).string(),
                 std::string("/tmp/libkineto_activities_7.json"));
    }
    void traceFileCompleteness() {
        QTemporaryDir dir;
        const std::string p = dir.filePath("t.json").toStdString();
        QVERIFY(!traceFileComplete(p)); // missing
        std::ofstream(p) << "{\"traceEvents\": [";
        QVERIFY(!traceFileComplete(p)); // cut
        std::ofstream(p) << "{\"traceEvents\": []}\n\n";
        QVERIFY(traceFileComplete(p));
        std::ofstream(p + ".tmp") << "{";
        QVERIFY(!traceFileComplete(p)); // Kineto 2.x is writing the next one
    }

    void severalClientsRegisterAndOnlyTheChosenOneTraces() {
        QTemporaryDir dir;
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(inFolder(dir)), error), error.c_str());
        QCOMPARE(QString::fromStdString(d.address()), "socket " + dir.path() + "/dynolog");
        const QString sock = dir.path();
        Client a(sock, {"--interval-ms", "100", "--ctxt", "0"}),
            b(sock, {"--interval-ms", "100", "--ctxt", "0"}),
            c(sock, {"--interval-ms", "100", "--config-type", "3"});
        QVERIFY(a.p.waitForStarted() && b.p.waitForStarted() && c.p.waitForStarted());
        QVERIFY(waitFor([&] { return d.processes().size() == 3; }));
        const auto ps = d.processes();
        for (const KinetoProcess& p : ps) {
            QVERIFY(p.pid == a.pid() || p.pid == b.pid() || p.pid == c.pid());
            QCOMPARE(p.ancestry.front(), p.pid);
            QVERIFY(p.ancestry.size() >= 2);
            QCOMPARE(p.ancestry[1], static_cast<int32_t>(getpid())); // the test started them
            QVERIFY2(p.command.find("kineto_client") != std::string::npos, p.command.c_str());
            QVERIFY(!p.busy);
        }
        // "ctxt": the second registration on GPU 0 counts two processes.
        QString ao, bo;
        QVERIFY(waitFor([&] {
            a.p.waitForReadyRead(10), b.p.waitForReadyRead(10);
            ao += a.output(), bo += b.output();
            return ao.contains("ctxt") && bo.contains("ctxt");
        }));
        QVERIFY2((ao.contains("ctxt ctxt 1") && bo.contains("ctxt ctxt 2")) ||
                     (ao.contains("ctxt ctxt 2") && bo.contains("ctxt ctxt 1")),
                 qPrintable(ao + bo));

        TraceRequest t;
        t.duration = 100ms;
        t.logFile = dir.filePath("x.pt.trace.json").toStdString();
        QCOMPARE(d.request({b.pid()}, onDemandConfig(t)), std::vector<int32_t>{b.pid()});
        const std::string expected = kinetoTracePath(t.logFile, b.pid()).string();
        QVERIFY(waitFor([&] { return traceFileComplete(expected); }));
        QVERIFY(!QFileInfo::exists(
            QString::fromStdString(kinetoTracePath(t.logFile, a.pid()).string())));
        QVERIFY(!QFileInfo::exists(
            QString::fromStdString(kinetoTracePath(t.logFile, c.pid()).string())));
        for (const KinetoProcess& p : d.processes())
            QCOMPARE(p.delivered, p.pid == b.pid() ? 1 : 0);
        QCOMPARE(d.badMessages(), size_t(0));
    }

    void attachCollectsEveryRank() {
        QTemporaryDir dir;
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(inFolder(dir)), error), error.c_str());
        Client a(dir.path(), {"--interval-ms", "150"}),
            b(dir.path(), {"--interval-ms", "150", "--old-kineto"});
        AttachOptions o;
        o.waitForProcesses = 10s;
        o.settle = 600ms;
        o.trace.duration = 200ms;
        o.trace.logFile = dir.filePath("job.pt.trace.json").toStdString();
        o.traceTimeout = 20s;
        std::vector<std::string> lines;
        const AttachResult r =
            attachAndTrace(d, o, [&](const std::string& s) { lines.push_back(s); });
        QVERIFY2(r.problems.empty(), r.problems.empty() ? "" : r.problems.front().c_str());
        QCOMPARE(r.traces.size(), size_t(2));
        for (const AttachedTrace& t : r.traces) {
            QVERIFY(t.pid == a.pid() || t.pid == b.pid());
            QCOMPARE(t.path, kinetoTracePath(o.trace.logFile, t.pid));
            QVERIFY(traceFileComplete(t.path));
        }
        QVERIFY(lines.front().find("waiting for PyTorch processes") == 0);
        QVERIFY(std::any_of(lines.begin(), lines.end(), [](const std::string& s) {
            return s.find("trace requested from 2 processes") == 0;
        }));
    }
    void aLaunchersPidSelectsAllItsWorkers() {
        // torchrun-like: a launcher process whose children are the PyTorch processes. Its pid
        // selects every one of them, after a poll interval for all to show.
        QTemporaryDir dir;
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(inFolder(dir)), error), error.c_str());
        QProcess launcher;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert("KINETO_IPC_SOCKET_DIR", dir.path());
        launcher.setProcessEnvironment(e);
        const QString c = clientPath() + " --interval-ms 150 --lifetime-ms 20000";
        launcher.start("/bin/sh", {"-c", c + " & " + c + " & " + c + " & wait"});
        QVERIFY(launcher.waitForStarted());
        Client outsider(dir.path(), {"--interval-ms", "150"});
        AttachOptions o;
        o.pids = {static_cast<int32_t>(launcher.processId())};
        o.waitForProcesses = 10s;
        o.settle = 1500ms;
        o.trace.duration = 100ms;
        o.trace.logFile = dir.filePath("l.pt.trace.json").toStdString();
        o.traceTimeout = 20s;
        const AttachResult r = attachAndTrace(d, o, [](const std::string&) {});
        QVERIFY2(r.problems.empty(), r.problems.empty() ? "" : r.problems.front().c_str());
        QCOMPARE(r.traces.size(), size_t(3));
        for (const AttachedTrace& t : r.traces) {
            QVERIFY(t.pid != outsider.pid());
            QVERIFY(t.command.find("kineto_client") != std::string::npos);
        }
        launcher.kill();
        launcher.waitForFinished();
    }
    void attachExplainsWhatDidNotCome() {
        QTemporaryDir dir;
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(inFolder(dir)), error), error.c_str());
        AttachOptions o;
        o.waitForProcesses = 600ms;
        AttachResult r = attachAndTrace(d, o, [](const std::string&) {});
        QVERIFY(r.traces.empty());
        QCOMPARE(r.problems.size(), size_t(1));
        QVERIFY2(r.problems[0].find("KINETO_USE_DAEMON=1") != std::string::npos,
                 r.problems[0].c_str());

        // A process busy tracing never takes the request: said so when the time is up.
        Client busy(dir.path(), {"--interval-ms", "100", "--busy"});
        o.waitForProcesses = 10s;
        o.settle = 300ms;
        o.traceTimeout = 1500ms;
        o.trace.duration = 100ms;
        o.trace.logFile = dir.filePath("b.pt.trace.json").toStdString();
        r = attachAndTrace(d, o, [](const std::string&) {});
        QVERIFY(r.traces.empty());
        QCOMPARE(r.problems.size(), size_t(1));
        QVERIFY2(r.problems[0].find("kept polling without taking the request") != std::string::npos,
                 r.problems[0].c_str());

        // --pid of a process that never polls, while another one does.
        o.pids = {999999};
        o.waitForProcesses = 700ms;
        r = attachAndTrace(d, o, [](const std::string&) {});
        QVERIFY(r.traces.empty());
        QVERIFY2(r.problems[0].find("with the pids given; polling: " +
                                    std::to_string(busy.pid())) != std::string::npos,
                 r.problems[0].c_str());
    }
    void abstractNamesAndATakenName() {
        // Kineto's default: an abstract name whose trailing NUL is part of it. A name of the
        // test's own keeps a dynolog on this machine out of the way.
        const std::string name = "stallscope-test-" + std::to_string(getpid());
        DaemonOptions o;
        o.name = name;
        o.socketDirFromEnvironment = false;
        KinetoDaemon d, second;
        std::string error;
        QVERIFY2(okOr(d.start(o), error), error.c_str());
        QCOMPARE(d.address(), "abstract socket @" + name);
        QVERIFY(!okOr(second.start(o), error));
        QVERIFY2(error.find("another Kineto daemon already serves abstract socket @" + name) == 0,
                 error.c_str());
        Client c(QString(), {"--interval-ms", "100"}, QString::fromStdString(name));
        QVERIFY(waitFor([&] { return d.processes().size() == 1; }));
        QCOMPARE(d.processes()[0].pid, c.pid());
    }
    void garbageIsCountedNotFatal() {
        QTemporaryDir dir;
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(inFolder(dir)), error), error.c_str());
        const int fd = ::socket(AF_UNIX, SOCK_DGRAM, 0);
        sockaddr_un to{};
        const size_t len = socketAddress("dynolog", dir.path().toStdString(), &to);
        const std::string junk[] = {"", "x", encodeMessage("req", "123"), encodeMessage("what", ""),
                                    encodeMessage("ctxt", "1")};
        for (const std::string& j : junk)
            QVERIFY(::sendto(fd, j.data(), j.size(), 0, reinterpret_cast<sockaddr*>(&to),
                             socklen_t(len)) >= 0);
        ::close(fd);
        QVERIFY(waitFor([&] { return d.badMessages() == 5; }));
        const auto problems = d.problems();
        QVERIFY(std::any_of(problems.begin(), problems.end(), [](const std::string& p) {
            return p.find("unknown type \"what\"") != std::string::npos;
        }));
        // Still serving.
        Client c(dir.path(), {"--interval-ms", "100"});
        QVERIFY(waitFor([&] { return d.processes().size() == 1; }));
    }

    void recordAttachEndToEnd() {
        const QString cli = qEnvironmentVariable("STALLSCOPE_CLI");
        if (cli.isEmpty()) QSKIP("STALLSCOPE_CLI is not set (run through ctest)");
        QTemporaryDir dir;
        Client job(dir.path(), {"--interval-ms", "200", "--lifetime-ms", "30000"});
        QProcess p;
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert("KINETO_IPC_SOCKET_DIR", dir.path());
        e.insert("KINETO_ONDEMAND_TRACE_DIR", dir.path());
        p.setProcessEnvironment(e);
        const QString out = dir.filePath("attached.pt.trace.json.gz");
        p.start(cli, {"record", "--attach", "--pid", QString::number(job.pid()), "--duration",
                      "0.4", "--wait", "10", "-o", out});
        QVERIFY(p.waitForFinished(60'000));
        const QString text = QString::fromUtf8(p.readAllStandardOutput());
        const QString log = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(log.contains("found pid " + QString::number(job.pid())), qPrintable(log));
        QVERIFY2(text.contains("Attached: 1 trace from Kineto (400 ms)"), qPrintable(text));
        QVERIFY2(text.contains("Wrote " + out), qPrintable(text));
        QVERIFY(QFileInfo(out).size() > 100);
        // The stand-in's steps wait 28 of 40 ms on a single-process DataLoader.
        QVERIFY2(text.contains("data_loading") || text.contains("DataLoader"), qPrintable(text));
        // Kineto's own file in the attach folder was taken away.
        QDir d(dir.path());
        QCOMPARE(d.entryList({"stallscope-attach-*"}, QDir::Dirs).size(), 0);

        // Options of the other mode are refused, by name.
        const std::pair<QStringList, QString> refused[] = {
            {{"record", "--with-stack", "--", "/bin/true"}, "--with-stack goes with --attach"},
            {{"record", "--attach", "--steps", "3"}, "--steps records a program it starts"},
            {{"record", "--attach", "--duration", "2", "--iterations", "3"}, "one or the other"},
            {{"record", "--attach", "--", "/bin/true"}, "no COMMAND with it"},
            {{"record", "--attach", "--pid", "12,x"}, "--pid needs process ids"},
        };
        for (const auto& [args, message] : refused) {
            p.start(cli, args);
            QVERIFY(p.waitForFinished(10'000));
            const QString said = QString::fromUtf8(p.readAllStandardError());
            QVERIFY2(p.exitCode() != 0 && said.contains(message),
                     qPrintable(args.join(' ') + ": " + said));
        }

        // --list shows it.
        p.start(cli, {"record", "--list", "--wait", "1"});
        QVERIFY(p.waitForFinished(30'000));
        const QString list = QString::fromUtf8(p.readAllStandardOutput());
        QCOMPARE(p.exitCode(), 0);
        QVERIFY2(list.contains(QString::number(job.pid())) && list.contains("kineto_client"),
                 qPrintable(list));
    }

    // ---- trust (docs/security.md): who may be served, what is believed, what is read

    void anotherUsersPollIsNotServed() {
        if (::geteuid() != 0) QSKIP("needs root, to run a client as another user");
        constexpr uint32_t kNobody = 65534;
        const std::string name = "stallscope-test-uid-" + std::to_string(getpid());
        DaemonOptions o;
        o.name = name;
        o.socketDirFromEnvironment = false;
        {
            KinetoDaemon d;
            std::string error;
            QVERIFY2(okOr(d.start(o), error), error.c_str());
            Client other(QString(), {"--interval-ms", "100", "--ctxt", "0", "--as-uid", "65534"},
                         QString::fromStdString(name));
            QVERIFY(waitFor([&] { return d.refusedPolls() >= 3; }));
            QVERIFY(d.processes().empty()); // never listed, never asked for a trace
            QCOMPARE(d.request({}, "ACTIVITIES_DURATION_MSECS=100"), std::vector<int32_t>{});
            const auto problems = d.problems();
            QVERIFY(std::any_of(problems.begin(), problems.end(), [](const std::string& p) {
                return p.find("of uid 65534, another user: not served (--allow-user 65534") !=
                       std::string::npos;
            }));
            QCOMPARE(d.tableSize(), size_t(0)); // its "ctxt" is not kept either
            // It got an answer (empty), so its Kineto does not wait.
            QString out;
            QVERIFY(waitFor([&] {
                other.p.waitForReadyRead(10);
                out += other.output();
                return out.contains("ctxt ctxt 0");
            }));
        }
        // Served when named.
        o.allowedUids = {0, kNobody};
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(o), error), error.c_str());
        Client other(QString(), {"--interval-ms", "100", "--as-uid", "65534"},
                     QString::fromStdString(name));
        QVERIFY(waitFor([&] { return d.processes().size() == 1; }));
        QCOMPARE(d.processes()[0].uid, kNobody);
        QCOMPARE(d.processes()[0].pid, other.pid());
    }
    void aClaimedPidOrAncestryIsNotBelieved() {
        QTemporaryDir dir;
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(inFolder(dir)), error), error.c_str());
        // The job a spoofer wants to pass as part of: a process that is no ancestor of it.
        QProcess job;
        job.start("/bin/sleep", {"30"});
        QVERIFY(job.waitForStarted());
        const QString jobPid = QString::number(job.processId());
        // Its own pid first, then the job's: the poll is served (it is its own), but as what
        // /proc says it is.
        Client spoof(dir.path(), {"--interval-ms", "100", "--claim-pids", "self," + jobPid});
        // Another process's pid first: not served at all.
        Client liar(dir.path(), {"--interval-ms", "100", "--claim-pids", jobPid + ",1"});
        QVERIFY(waitFor([&] { return d.processes().size() == 1 && d.refusedPolls() >= 2; }));
        const KinetoProcess p = d.processes()[0];
        QCOMPARE(p.pid, spoof.pid());
        QCOMPARE(p.ancestry.front(), spoof.pid());
        QCOMPARE(p.ancestry[1], static_cast<int32_t>(getpid())); // its true parent: this test
        QVERIFY(std::find(p.ancestry.begin(), p.ancestry.end(), int32_t(job.processId())) ==
                p.ancestry.end());
        const auto problems = d.problems();
        QVERIFY(std::any_of(problems.begin(), problems.end(), [&](const std::string& s) {
            return s.find("a poll from pid " + std::to_string(liar.pid()) + " claiming to be pid " +
                          jobPid.toStdString()) == 0;
        }));
        // --pid JOB selects nothing: the spoofer is not one of its workers.
        AttachOptions o;
        o.pids = {static_cast<int32_t>(job.processId())};
        o.waitForProcesses = 700ms;
        const AttachResult r = attachAndTrace(d, o, [](const std::string&) {});
        QVERIFY(r.traces.empty());
        QVERIFY(!r.problems.empty() &&
                r.problems[0].find("with the pids given") != std::string::npos);
        job.kill();
        job.waitForFinished();
    }
    void floodsStayBounded() {
        QTemporaryDir dir;
        KinetoDaemon d;
        DaemonOptions opts = inFolder(dir);
        opts.maxProcesses = 2;
        std::string error;
        QVERIFY2(okOr(d.start(opts), error), error.c_str());
        // 20,000 polls and registrations, each claiming another process and job.
        Client flood(dir.path(), {"--flood", "20000"});
        QVERIFY(flood.p.waitForFinished(60'000));
        QVERIFY(waitFor([&] { return d.refusedPolls() > 0; }));
        QVERIFY2(d.tableSize() <= 1, std::to_string(d.tableSize()).c_str()); // its one "ctxt"
        QVERIFY(d.processes().empty());
        // The cap: a third real process is refused, and said so.
        Client a(dir.path(), {"--interval-ms", "100"}), b(dir.path(), {"--interval-ms", "100"});
        QVERIFY(waitFor([&] { return d.processes().size() == 2; }));
        Client c(dir.path(), {"--interval-ms", "100"});
        QVERIFY(waitFor([&] {
            const auto ps = d.problems();
            return std::any_of(ps.begin(), ps.end(), [](const std::string& s) {
                return s.find("more than 2 polling processes") == 0;
            });
        }));
        QCOMPARE(d.processes().size(), size_t(2));
        // Entries expire: a short keep-alive forgets them once they stop polling.
        KinetoDaemon e;
        DaemonOptions short_ = inFolder(dir);
        short_.name = "short";
        short_.keepAlive = std::chrono::seconds(1);
        QVERIFY2(okOr(e.start(short_), error), error.c_str());
        {
            Client gone(dir.path(), {"--interval-ms", "100", "--ctxt", "0", "--lifetime-ms", "300"},
                        "short");
            QVERIFY(waitFor([&] { return e.tableSize() == 2; }));
            QVERIFY(gone.p.waitForFinished(10'000));
        }
        QVERIFY(waitFor([&] { return e.tableSize() == 0; }, 5s));
    }
    void traceFilesAreReadOnlyFromTheirOwner() {
        QTemporaryDir dir;
        const std::string real = dir.filePath("trace_1.pt.trace.json").toStdString();
        std::ofstream(real) << "{\"traceEvents\": []}\n";
        const uint32_t me = ::geteuid();
        {
            const auto opened = openOwnedTrace(real, me);
            QVERIFY2(opened, opened ? "" : opened.error().message.c_str());
            QVERIFY(opened.value().get() >= 0);
        }
        // A link planted where Kineto's file is expected, to a file only root may read.
        const std::string secret = dir.filePath("secret").toStdString();
        std::ofstream(secret) << "{\"root only\": 1}";
        ::chmod(secret.c_str(), 0600);
        const std::string planted = dir.filePath("trace_2.pt.trace.json").toStdString();
        QVERIFY(::symlink(secret.c_str(), planted.c_str()) == 0);
        const auto link = openOwnedTrace(planted, me);
        QVERIFY(!link);
        QVERIFY(link.error().kind == stallscope::base::ErrorKind::Unreadable);
        QVERIFY2(link.error().message.find("is a symbolic link: not read") != std::string::npos,
                 link.error().message.c_str());
        const auto missing =
            openOwnedTrace(dir.filePath("trace_3.pt.trace.json").toStdString(), me);
        QVERIFY(!missing);
        QVERIFY(missing.error().kind == stallscope::base::ErrorKind::NotFound);
        QVERIFY(!traceFileComplete(planted));
        // collectTraces refuses it and writes nothing.
        AttachResult r;
        r.traces.push_back({2, me, "job", planted});
        const std::string out = dir.filePath("out.json").toStdString();
        const auto collected = collectTraces(r, out);
        QVERIFY(!collected);
        const std::string& error = collected.error().message;
        QVERIFY2(error.find("symbolic link") != std::string::npos, error.c_str());
        QVERIFY(!QFileInfo::exists(QString::fromStdString(out)));
        // A file another user wrote (Kineto's default name, planted before the job wrote it).
        if (me == 0) {
            const std::string other = dir.filePath("libkineto_activities_3.json").toStdString();
            std::ofstream(other) << "{\"traceEvents\": []}\n";
            QVERIFY(::chown(other.c_str(), 65534, 65534) == 0);
            const auto owned = openOwnedTrace(other, 0);
            QVERIFY(!owned);
            const std::string& why = owned.error().message;
            QVERIFY2(why.find("is owned by uid 65534, not by the traced process's user (uid 0)") !=
                         std::string::npos,
                     why.c_str());
        }
    }
    void theTraceFolderIsPrivate() {
        QTemporaryDir dir;
        qputenv("KINETO_ONDEMAND_TRACE_DIR", dir.path().toUtf8());
        KinetoDaemon d;
        std::string error;
        QVERIFY2(okOr(d.start(inFolder(dir)), error), error.c_str());
        Client a(dir.path(), {"--interval-ms", "100"});
        AttachOptions o;
        o.waitForProcesses = 10s;
        o.settle = 300ms;
        o.trace.duration = 100ms;
        o.traceTimeout = 20s;
        const AttachResult r = attachAndTrace(d, o, [](const std::string&) {});
        qunsetenv("KINETO_ONDEMAND_TRACE_DIR");
        QVERIFY2(r.problems.empty(), r.problems.empty() ? "" : r.problems.front().c_str());
        QCOMPARE(r.traces.size(), size_t(1));
        struct stat st {};
        QVERIFY(::stat(r.traces[0].path.parent_path().c_str(), &st) == 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0700)); // not 01777: nobody else writes in it
        QCOMPARE(st.st_uid, ::geteuid());
        QCOMPARE(r.traces[0].uid, ::geteuid());
    }
    void aFileWhereTheSocketGoesIsLeftAlone() {
        QTemporaryDir dir;
        const std::string file = dir.filePath("dynolog").toStdString();
        std::ofstream(file) << "keep me";
        KinetoDaemon d;
        std::string error;
        QVERIFY(!okOr(d.start(inFolder(dir)), error));
        QVERIFY2(error.find("exists and is not a socket: it was left as it is") !=
                     std::string::npos,
                 error.c_str());
        std::ifstream in(file);
        std::string text;
        std::getline(in, text);
        QCOMPARE(text, std::string("keep me"));
    }
};

QTEST_GUILESS_MAIN(TestKinetoAttach)
#include "test_kineto_attach.moc"
