// stallscope-cli as a user runs it: exit codes and well-formed JSON.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <pty.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string_view>

class TestCli : public QObject {
    Q_OBJECT
    QString cli() const { return qEnvironmentVariable("STALLSCOPE_CLI"); }
    QString sample() const {
        return qEnvironmentVariable("STALLSCOPE_SOURCE_DIR") + "/resources/samples/synthetic_training.pt.trace.json.gz";
    }
    int run(const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr) {
        QProcess p;
        p.start(cli(), args);
        if (!p.waitForFinished(60000)) return -1;
        if (out) *out = p.readAllStandardOutput();
        if (err) *err = p.readAllStandardError();
        return p.exitCode();
    }
private Q_SLOTS:
    void usageErrorsExitTwo() {
        QCOMPARE(run({}), 2);
        QCOMPARE(run({"frobnicate"}), 2);
        QCOMPARE(run({"info"}), 2);
        QCOMPARE(run({"info", "--bogus", sample()}), 2);
        QCOMPARE(run({"info", "--threads", "four", sample()}), 2);
        QCOMPARE(run({"info", "--threads", "100000", sample()}), 2); // bounded, not an abort
        QCOMPARE(run({"analyze", "--device"}), 2);
        QCOMPARE(run({"analyze", "--max-regression", "-3", sample()}), 2);
        QCOMPARE(run({"report", sample()}), 2); // no -o
        QByteArray err;
        QCOMPARE(run({"report", "-o", "x.html", sample(), sample()}, nullptr, &err), 2);
        QVERIFY(err.contains("report takes one PATH"));
        QVERIFY(err.contains("-o OUT PATH")); // the command's own usage follows the message
    }
    void everyCommandHasHelp() {
        QByteArray out;
        QCOMPARE(run({"--help"}, &out), 0);
        for (const char* c : {"info", "analyze", "diff", "report", "record"}) {
            QVERIFY2(out.contains(QByteArray("  ") + c + " ["), c);
            QByteArray own;
            QCOMPARE(run({c, "--help"}, &own), 0);
            QVERIFY2(own.startsWith("usage:\n  " + QByteArray(c)), own.constData());
        }
    }
    // The command and report-format lists come from the registries (commands.def,
    // report_formats.def): help --list, which bash completion reads, the {report-formats}
    // placeholder of report's usage and its --format error all say the same names.
    void listsAndCompletionComeFromTheTables() {
        QByteArray commands, formats, help, reportHelp, err;
        QCOMPARE(run({"help", "--list", "commands"}, &commands), 0);
        QCOMPARE(commands, QByteArray("info\nanalyze\nmemory\nmerge\ndiff\nreport\nrecord\nmcp\n"));
        QCOMPARE(run({"help", "--list", "report-formats"}, &formats), 0);
        QCOMPARE(formats, QByteArray("html\npdf\nmd\nmarkdown\njson\ntrace\n"));
        QCOMPARE(run({"help", "--list", "nothing"}, nullptr, &err), 2);
        QVERIFY(err.contains("commands or report-formats"));
        QCOMPARE(run({"--help"}, &help), 0);
        QVERIFY(help.contains("report [--format html|pdf|md|json|trace]"));
        QVERIFY(!help.contains("{report-formats}"));
        QCOMPARE(run({"report", "--help"}, &reportHelp), 0);
        QVERIFY(reportHelp.contains("--format html|pdf|md|json|trace"));
        QCOMPARE(run({"report", "--format", "docx", "-o", "x.docx", sample()}, nullptr, &err), 2);
        QVERIFY2(err.contains("--format needs one of html, pdf, md, json, trace"), err.constData());
        // The completion file asks the CLI instead of listing names of its own.
        QFile completion(qEnvironmentVariable("STALLSCOPE_SOURCE_DIR") +
                         "/packaging/completion/stallscope-cli");
        QVERIFY(completion.open(QIODevice::ReadOnly));
        const QByteArray script = completion.readAll();
        QVERIFY(script.contains("help --list commands"));
        QVERIFY(script.contains("help --list report-formats"));
        QVERIFY(!script.contains("html md json"));
    }
    // mcp refuses to start without a path it may read, and an --allow that is no folder.
    void mcpNeedsPathsItMayRead() {
        QByteArray err;
        QCOMPARE(run({"mcp"}, nullptr, &err), 2);
        QVERIFY2(err.contains("or --allow FOLDER"), err.constData());
        QCOMPARE(run({"mcp", "--allow", "/no/such/folder"}, nullptr, &err), 2);
        QVERIFY2(err.contains("not a folder"), err.constData());
        QCOMPARE(run({"mcp", "-"}, nullptr, &err), 2);
        QVERIFY2(err.contains("standard input carries the protocol"), err.constData());
    }
    void standardStreamsQuietAndManPage() {
        // "-": the trace on standard input (gzip told by its magic), same analysis as the file.
        QFile gz(sample());
        QVERIFY(gz.open(QIODevice::ReadOnly));
        const QByteArray bytes = gz.readAll();
        QProcess p;
        p.start(cli(), {"analyze", "--json", "-"});
        p.write(bytes);
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonArray fromStdin = QJsonDocument::fromJson(p.readAllStandardOutput()).array();
        QByteArray out;
        QCOMPARE(run({"analyze", "--json", sample()}, &out), 0);
        const QJsonArray fromFile = QJsonDocument::fromJson(out).array();
        QCOMPARE(fromStdin.size(), 1);
        QCOMPARE(fromStdin[0].toObject()["findings"], fromFile[0].toObject()["findings"]);
        QCOMPARE(fromStdin[0].toObject()["steps"], fromFile[0].toObject()["steps"]);
        // "-o -": the report on standard output, the command's own lines on stderr.
        QByteArray err;
        QCOMPARE(run({"report", "--format", "md", "-o", "-", sample()}, &out, &err), 0);
        QVERIFY2(out.startsWith("# Stallscope report"), out.left(200).constData());
        QVERIFY(!out.contains("Wrote "));
        QCOMPARE(run({"report", "-o", "-", sample()}, &out), 0);
        QVERIFY(out.startsWith("<!DOCTYPE html>"));
        // -q: no progress lines, errors still said (attach with nothing polling, on a socket
        // folder of this test's own).
        QTemporaryDir dir;
        qputenv("KINETO_IPC_SOCKET_DIR", dir.path().toUtf8());
        QCOMPARE(run({"record", "--attach", "--wait", "0.3"}, nullptr, &err), 1);
        QVERIFY2(err.contains("stallscope: waiting for PyTorch processes"), err.constData());
        QCOMPARE(run({"-q", "record", "--attach", "--wait", "0.3"}, nullptr, &err), 1);
        QVERIFY2(!err.contains("stallscope: waiting"), err.constData());
        QVERIFY(err.contains("stallscope-cli: no PyTorch process polled"));
        qunsetenv("KINETO_IPC_SOCKET_DIR");
        // The man page comes from the --help text: every command, the exit codes.
        QCOMPARE(run({"help", "--man"}, &out), 0);
        QVERIFY(out.startsWith(".TH STALLSCOPE\\-CLI 1"));
        for (const char* c : {"info", "analyze", "merge", "report", "record"})
            QVERIFY2(out.contains(QByteArray(".SS ") + c), c);
        QVERIFY(out.contains(".SH EXIT STATUS"));
        QVERIFY(out.contains("a CI gate failed"));
        QByteArray help;
        QCOMPARE(run({"--help"}, &help), 0);
        QVERIFY(help.contains("exit codes: 0 ok"));
    }
    void unreadableInputExitsOne() {
        QByteArray err;
        QCOMPARE(run({"info", "/nonexistent.json"}, nullptr, &err), 1);
        QVERIFY(err.contains("no such file"));
        QTemporaryDir dir;
        // A FIFO nobody writes would block the read forever; a device never ends: refused.
        const QString fifo = dir.filePath("in.json");
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        for (const QString& path : {fifo, QString("/dev/zero")}) {
            QCOMPARE(run({"analyze", path}, nullptr, &err), 1);
            QVERIFY2(err.contains(", not a file: traces are read from files and folders"),
                     err.constData());
        }
        if (::geteuid() == 0 && !QStandardPaths::findExecutable("setpriv").isEmpty()) {
            // A folder its user cannot list is said to be unreadable, not to hold no traces
            // (as root, run as nobody: root reads every folder).
            const QString locked = dir.filePath("locked");
            QVERIFY(QDir(dir.path()).mkdir("locked"));
            QFile::setPermissions(dir.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                  QFileDevice::ExeOwner | QFileDevice::ExeOther |
                                                  QFileDevice::ReadOther);
            QFile::setPermissions(locked, QFileDevice::ReadOwner | QFileDevice::ExeOwner |
                                              QFileDevice::ExeOther);
            QProcess p;
            p.start("setpriv",
                    {"--reuid=65534", "--regid=65534", "--clear-groups", cli(), "info", locked});
            QVERIFY(p.waitForFinished(60000));
            const QByteArray said = p.readAllStandardError();
            if (!said.contains("Permission denied") || p.exitCode() != 1)
                qWarning("%s", said.constData()); // (the CLI itself unreachable for nobody: a note)
            else
                QVERIFY2(said.contains("cannot read the folder " + locked.toUtf8()),
                         said.constData());
        }
        {
            // An endless standard input stops at what the memory budget could open.
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("STALLSCOPE_MEMORY_BUDGET", "8M");
            p.setProcessEnvironment(env);
            p.setStandardInputFile("/dev/zero");
            p.start(cli(), {"analyze", "-"});
            QVERIFY(p.waitForFinished(60000));
            QCOMPARE(p.exitCode(), 1);
            const QByteArray said = p.readAllStandardError();
            QVERIFY2(said.contains("more than the memory budget could open"), said.constData());
        }
        QFile f(dir.filePath("bad.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"traceEvents\": 5}");
        f.close();
        QCOMPARE(run({"info", f.fileName()}, nullptr, &err), 1);
        QVERIFY(err.contains("must be an array"));
    }
    void infoJsonOnTheSample() {
        QByteArray out;
        QCOMPARE(run({"info", "--json", sample()}, &out), 0);
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(out, &pe);
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
        QVERIFY(doc.isArray());
        const QJsonObject t = doc.array().at(0).toObject();
        for (const char* k : {"events", "by_phase", "by_category", "gpu", "profiler_steps", "devices", "diagnostics"})
            QVERIFY2(t.contains(k), k);
        QVERIFY(t["events"].toInteger() > 1000);
        QVERIFY(t["gpu"].toObject()["kernel"].toInteger() > 0);
        QVERIFY(t["devices"].toObject().contains("0"));
        QVERIFY(t["profiler_steps"].toInteger() >= 3);
    }
    void analyzeTextJsonAndGate() {
        QByteArray out, err;
        QCOMPARE(run({"analyze", sample()}, &out), 0);
        QVERIFY(out.contains("Why the GPU was idle"));
        QVERIFY(out.contains("data_loading"));
        QVERIFY(out.contains("Fix:"));
        QCOMPARE(run({"analyze", "--json", sample()}, &out), 0);
        QJsonParseError pe;
        const QJsonDocument doc = QJsonDocument::fromJson(out, &pe);
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
        const QJsonObject t = doc.array().at(0).toObject();
        QCOMPARE(t["schema"].toString(), QString("stallscope.analysis/1"));
        for (const char* k : {"devices", "idle_causes", "findings", "hta", "window", "stats"}) QVERIFY2(t.contains(k), k);
        const QJsonObject dev = t["devices"].toObject()["0"].toObject();
        for (const char* k : {"utilization", "busy_ns", "idle_ns", "window_ns"}) QVERIFY2(dev.contains(k), k);
        qint64 causes = 0;
        const QJsonObject ic = t["idle_causes"].toObject()["0"].toObject();
        for (auto it = ic.begin(); it != ic.end(); ++it) causes += it.value().toInteger();
        QCOMPARE(causes, dev["idle_ns"].toInteger());
        const QJsonObject f = t["findings"].toArray().at(0).toObject();
        for (const char* k : {"id", "kind", "severity", "saving_ns", "saving_pct", "ranges", "title", "fix"})
            QVERIFY2(f.contains(k), k);
        QCOMPARE(f["kind"].toString(), QString("data_loading"));
        const QJsonObject temporal = t["hta"].toObject()["temporal"].toObject();
        for (const char* k : {"idle_us", "compute_us", "non_compute_us", "span_us"}) QVERIFY2(temporal.contains(k), k);
        // The CI gate.
        QCOMPARE(run({"analyze", "--fail-on", "data_loading:5", sample()}, &out, &err), 3);
        QVERIFY(err.contains("data_loading"));
        QCOMPARE(run({"analyze", "--fail-on", "data_loading:90", sample()}, &out, &err), 0);
        QCOMPARE(run({"analyze", "--fail-on", "comm_exposed", sample()}, &out, &err), 0);
        QCOMPARE(run({"analyze", "--fail-on", "nonsense", sample()}, &out, &err), 2);
        QCOMPARE(run({"analyze", "--window", "bogus", sample()}, &out, &err), 2);
        QCOMPARE(run({"analyze", "--window", "12", "--json", sample()}, &out), 0);
        QVERIFY(QJsonDocument::fromJson(out).array().at(0).toObject()["window"].toObject()["description"].toString().contains("#12"));
    }
    // The text's "Time per step" table: a row per step of the JSON's devices.0.steps, each
    // step's length and its roles as the JSON has them (durations as the CLI prints them are
    // checked by digits: the kernel column's value is the JSON's kernel_ns rounded).
    void analyzeTextShowsTheStepBreakdownOfTheJson() {
        QByteArray text, json;
        QCOMPARE(run({"analyze", sample()}, &text), 0);
        QCOMPARE(run({"analyze", "--json", sample()}, &json), 0);
        const QJsonArray steps = QJsonDocument::fromJson(json)
                                     .array()
                                     .at(0)
                                     .toObject()["devices"]
                                     .toObject()["0"]
                                     .toObject()["steps"]
                                     .toArray();
        QVERIFY(steps.size() >= 3);
        const int at = int(text.indexOf("Time per step by what ran"));
        QVERIFY2(at > 0, text.constData());
        const QList<QByteArray> lines = text.mid(at).split('\n');
        QVERIFY(lines.at(1).contains("length") && lines.at(1).contains("kern") &&
                lines.at(1).contains("other"));
        for (qsizetype i = 0; i < steps.size() && i < 16; ++i) {
            const QJsonObject st = steps.at(i).toObject();
            const QByteArray row = lines.at(2 + i).trimmed();
            QVERIFY2(row.startsWith("#" + QByteArray::number(st["number"].toInteger())),
                     row.constData());
            const QJsonObject roles = st["roles"].toObject();
            qint64 total = 0;
            for (auto it = roles.begin(); it != roles.end(); ++it) total += it.value().toInteger();
            // The parts add up to the step (start to the next step's start).
            QCOMPARE(total, st["end_ns"].toInteger() - st["start_ns"].toInteger());
        }
        QVERIFY(text.contains("kern = Kernel, cpy = Memcpy"));
        // One step length: the mean the window line and steps.mean_ns say is the mean of the
        // steps' spans (start to the next step's start) that the table shows.
        const QJsonObject doc = QJsonDocument::fromJson(json).array().at(0).toObject();
        qint64 sum = 0, n = 0;
        for (qsizetype i = 0; i < steps.size(); ++i)
            if (!steps.at(i)["warmup"].toBool())
                sum += steps.at(i)["end_ns"].toInteger() - steps.at(i)["start_ns"].toInteger(), ++n;
        QVERIFY(n > 0);
        QCOMPARE(doc["steps"].toObject()["mean_ns"].toInteger(), sum / n);
    }
    void aCutInputFailsTheGates() {
        // The sample's gzip cut at 60 %: analysed (what was read), said, and no gate passes on
        // it unless --allow-truncated says a part is enough.
        QFile gz(sample());
        QVERIFY(gz.open(QIODevice::ReadOnly));
        const QByteArray bytes = gz.readAll();
        QTemporaryDir dir;
        const QString cut = dir.filePath("cut.pt.trace.json.gz");
        QFile f(cut);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes.left(bytes.size() * 6 / 10));
        f.close();
        QByteArray out, err;
        QCOMPARE(run({"analyze", cut}, &out, &err), 0); // no gate: said, not failed
        QVERIFY2(err.contains("was cut short"), err.constData());
        QVERIFY(!err.contains("the gate fails"));
        QCOMPARE(run({"analyze", "--fail-on", "comm_exposed", cut}, &out, &err), 3);
        QVERIFY2(err.contains("the gate fails (--allow-truncated accepts it)"), err.constData());
        QCOMPARE(
            run({"analyze", "--fail-on", "comm_exposed", "--allow-truncated", cut}, &out, &err), 0);
        QVERIFY(err.contains("was cut short"));
        QCOMPARE(run({"analyze", "--baseline", sample(), cut}, &out, &err), 3);
        QVERIFY2(err.contains("the gate fails"), err.constData());
        // The whole file passes the same gate.
        QCOMPARE(run({"analyze", "--fail-on", "comm_exposed", sample()}, &out, &err), 0);
        QVERIFY(!err.contains("cut short"));
    }
    void rankSummariesAndMerge() {
        // Per-rank summaries (one `analyze --summary` per rank, as a Slurm array runs them)
        // merged: the same cross-rank JSON as analysing the folder in one process.
        const QString shared = qEnvironmentVariable("STALLSCOPE_SHARED_TRACES");
        const QString folder = shared + "/param-dlrm-8rank";
        if (shared.isEmpty() || !QFileInfo(folder).isDir()) QSKIP("no ../shared/traces");
        QTemporaryDir tmp;
        QByteArray out, err, whole;
        const QStringList files =
            QDir(folder).entryList({"*.pt.trace.json"}, QDir::Files, QDir::Name);
        QCOMPARE(files.size(), 8);
        for (const QString& f : files) {
            const QString summary = tmp.filePath(QFileInfo(f).baseName() + ".summary.json");
            QCOMPARE(run({"analyze", "--summary", "-o", summary, folder + "/" + f}, &out, &err), 0);
            QVERIFY(QFileInfo(summary).size() > 0);
        }
        QCOMPARE(run({"merge", "--json", tmp.path()}, &out, &err), 0);
        QCOMPARE(run({"analyze", "--ranks", "--json", folder}, &whole, &err), 0);
        QCOMPARE(out, whole);
        // Merged into one file and read back: the same again.
        const QString bundle = tmp.filePath("all.ranks");
        QCOMPARE(run({"merge", "--summaries", bundle, tmp.path()}, &out, &err), 0);
        QVERIFY(err.contains("8 rank summaries merged"));
        QCOMPARE(run({"merge", "--json", bundle}, &out, &err), 0);
        QCOMPARE(out, whole);
        QCOMPARE(run({"merge", tmp.path()}, &out, &err), 0);
        QVERIFY(out.contains("Straggler: rank 7"));
        QVERIFY(out.contains("Step time per rank and step"));
        QCOMPARE(run({"merge", "-o", tmp.filePath("ranks.html"), tmp.path()}, &out, &err), 0);
        QFile html(tmp.filePath("ranks.html"));
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QByteArray page = html.readAll();
        QVERIFY(page.contains("Step time per rank and step"));
        QVERIFY(page.contains("<svg"));
        QCOMPARE(run({"merge", "-o", tmp.filePath("ranks.pdf"), tmp.path()}, &out, &err), 2);
        QVERIFY(err.contains("needs the traces"));
        QCOMPARE(run({"merge", sample()}, &out, &err), 1); // a trace is not a summary
        QVERIFY(err.contains("not JSON") || err.contains("not a Stallscope rank summary"));
        // Several traces to --summary need a folder.
        QCOMPARE(run({"analyze", "--summary", folder}, &out, &err), 2);
        QCOMPARE(run({"analyze", "--summary", "-o", tmp.filePath("all"), folder}, &out, &err), 0);
        QCOMPARE(QDir(tmp.filePath("all")).entryList({"*.summary.json"}).size(), 8);
        // analyze --json of several ranks: {"ranks": ..., "traces": [...]}.
        QCOMPARE(run({"analyze", "--json", folder}, &out, &err), 0);
        const QJsonObject o = QJsonDocument::fromJson(out).object();
        QCOMPARE(o["traces"].toArray().size(), 8);
        QCOMPARE(o["ranks"].toObject()["straggler"].toInt(), 7);
        QCOMPARE(o["ranks"].toObject()["steps"].toArray().size(), 1);
    }
    void memoryOfATraceWithAndWithoutEvents() {
        QCOMPARE(run({"memory"}), 2);
        QCOMPARE(run({"memory", "--top", "0", sample()}), 2);
        QCOMPARE(run({"memory", "--bogus", sample()}), 2);
        QCOMPARE(run({"memory", "/nonexistent.json"}), 1);
        // The sample has no allocator events: said, with how to record them.
        QByteArray out;
        QCOMPARE(run({"memory", sample()}, &out), 0);
        QVERIFY2(out.contains("profile_memory=True"), out.constData());
        // A tiny profile_memory trace: its peak, the operator of the live block, the events.
        QTemporaryDir dir;
        const QString path = dir.filePath("mem.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"deviceProperties": [{"id": 0, "name": "G", "totalGlobalMem": 1000000000}],)"
            R"("traceEvents": [)"
            R"( {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},)"
            R"( {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 10, "dur": 10},)"
            R"( {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 15,)"
            R"(  "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Bytes": 2000000, "Total Allocated": 2000000, "Total Reserved": 4000000}},)"
            R"( {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 30, "dur": 5, "args": {"correlation": 1}},)"
            R"( {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 40, "dur": 100, "args": {"correlation": 1, "device": 0, "stream": 7}})"
            R"(]})");
        f.close();
        QCOMPARE(run({"memory", path}, &out), 0);
        QVERIFY2(out.contains("peak allocated 2.0 MB"), out.constData());
        QVERIFY(out.contains("aten::empty"));
        QCOMPARE(run({"memory", "--json", "--events", path}, &out), 0);
        const QJsonArray arr = QJsonDocument::fromJson(out).array();
        QCOMPARE(arr.size(), 1);
        auto firstDevice = [](const QJsonArray& a) {
            return a[0].toObject()["memory"].toObject()["devices"].toArray()[0].toObject();
        };
        const QJsonObject d = firstDevice(arr);
        QCOMPARE(d["peak_allocated_bytes"].toInteger(), 2000000);
        QCOMPARE(d["peak_reserved_bytes"].toInteger(), 4000000);
        QCOMPARE(d["capacity_bytes"].toInteger(), 1000000000);
        QCOMPARE(d["events"].toArray().size(), 1);
        QCOMPARE(d["events"].toArray()[0].toObject()["operator"].toString(),
                 QString("aten::empty"));
        // analyze --json carries the same object.
        QCOMPARE(run({"analyze", "--json", path}, &out), 0);
        QCOMPARE(
            firstDevice(QJsonDocument::fromJson(out).array())["peak_allocated_bytes"].toInteger(),
            2000000);
    }

    void infoTextAndVersion() {
        QByteArray out;
        QCOMPARE(run({"info", sample()}, &out), 0);
        QVERIFY(out.contains("busy"));
        // info's busy share is of the device's span, not analyze's window: it says so.
        QVERIFY(out.contains("of its first to last GPU work; analyze: of its window"));
        QVERIFY(out.contains("ProfilerStep"));
        QCOMPARE(run({"--version"}, &out), 0);
        QVERIFY(out.contains("live GPU capture"));
    }

    void reportEveryFormat() {
        QTemporaryDir dir;
        QByteArray out, err;
        QCOMPARE(run({"--version"}, &out), 0);
        const bool pdf = out.contains("PDF reports: yes");
        for (const char* name : {"r.html", "r.md", "r.json", "r.pdf", "r.trace.json", "r.trace.json.gz"}) {
            const QString path = dir.filePath(name);
            if (QString(name).endsWith(".pdf") && !pdf) {  // a build without Qt says so
                QCOMPARE(run({"report", "-o", path, sample()}, &out, &err), 1);
                QVERIFY(err.contains("PDF needs the Qt part"));
                continue;
            }
            QCOMPARE(run({"report", "-o", path, sample()}, &out, &err), 0);
            QVERIFY2(QFileInfo(path).size() > 1000, name);
        }
        QFile html(dir.filePath("r.html"));
        QVERIFY(html.open(QIODevice::ReadOnly));
        QVERIFY(html.readAll().contains("GPU idle while the input pipeline prepares batches"));
        // --format wins over the extension.
        QCOMPARE(run({"report", "--format", "md", "-o", dir.filePath("x.txt"), sample()}), 0);
        QFile md(dir.filePath("x.txt"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(md.readAll().startsWith("# Stallscope report"));
    }

    void reportErrors() {
        QTemporaryDir dir;
        QByteArray err;
        QCOMPARE(run({"report", sample()}, nullptr, &err), 2);                              // no -o
        QCOMPARE(run({"report", "-o", dir.filePath("r.txt"), sample()}, nullptr, &err), 2);  // unknown format
        QVERIFY(err.contains("cannot tell the format"));
        QCOMPARE(run({"report", "--format", "docx", "-o", "x", sample()}, nullptr, &err), 2);
        QCOMPARE(run({"report", "-o", dir.filePath("r.html"), "/nonexistent.json"}, nullptr, &err), 1);
        QCOMPARE(run({"report", "-o", dir.filePath("no/dir/r.html"), sample()}, nullptr, &err), 1);
        QVERIFY(err.contains("no such folder"));
    }

    void baselineGate() {
        QTemporaryDir dir;
        QByteArray out, err;
        // The same trace against itself: no change, passes.
        QCOMPARE(run({"analyze", "--baseline", sample(), sample()}, &out, &err), 0);
        QVERIFY(err.contains("step time +0.0%"));
        QCOMPARE(run({"analyze", "--baseline", sample(), "--max-regression", "x", sample()}, &out, &err), 2);
        const QString shared = qEnvironmentVariable("STALLSCOPE_SHARED_TRACES");
        const QString w0 = shared + "/kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
        const QString w4 = shared + "/kineto-tb-plugin/resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz";
        if (!QFileInfo::exists(w0)) QSKIP("../shared/traces is absent");
        QCOMPARE(run({"analyze", "--baseline", w0, w4}, &out, &err), 0);  // faster: fine
        QCOMPARE(run({"analyze", "--baseline", w4, "--max-regression", "10", w0}, &out, &err), 3);
        QVERIFY(err.contains("regression: step time regressed +25.9%"));
        QCOMPARE(run({"analyze", "--baseline", w4, "--max-regression", "30", w0}, &out, &err),
                 0); // +26% < 30%, +16 pts < 30
        QCOMPARE(run({"report", "--baseline", w0, "-o", dir.filePath("diff.md"), w4}, &out, &err), 0);
        QFile md(dir.filePath("diff.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(md.readAll().contains("**fixed**"));
    }

    void diffCommand() {
        QByteArray out, err;
        QCOMPARE(run({"diff"}, &out, &err), 2);
        QVERIFY(err.contains("two paths: BEFORE AFTER"));
        QCOMPARE(run({"diff", sample()}, &out, &err), 2);
        QCOMPARE(run({"diff", "--top", "0", sample(), sample()}, &out, &err), 2);
        QCOMPARE(run({"diff", "--max-regression", "-1", sample(), sample()}, &out, &err), 2);
        QCOMPARE(run({"diff", sample(), "/nonexistent/after.json"}, &out, &err), 1);
        QVERIFY(err.contains("/nonexistent/after.json"));
        // A run against itself: nothing moved.
        QCOMPARE(run({"diff", sample(), sample()}, &out, &err), 0);
        QVERIFY(out.contains("+0.0%"));
        QVERIFY(out.contains("0 added, 0 removed, 0 faster, 0 slower"));
        QCOMPARE(run({"diff", "--json", sample(), sample()}, &out, &err), 0);
        const QJsonObject d = QJsonDocument::fromJson(out).object();
        QCOMPARE(d["schema"].toString(), QString("stallscope.diff/1"));
        QVERIFY(!d["operators"].toArray().isEmpty());
        for (const QJsonValue r : d["operators"].toArray())
            QCOMPARE(r["change"].toString(), QString("same"));
        for (const QJsonValue f : d["findings"].toArray())
            QCOMPARE(f["status"].toString(), QString("persisting"));
        // The gate: slower by more than the limit exits 3.
        const QString shared = qEnvironmentVariable("STALLSCOPE_SHARED_TRACES");
        const QString w0 =
            shared +
            "/kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
        const QString w4 =
            shared +
            "/kineto-tb-plugin/resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz";
        const QString snap = shared + "/memory/snapshots/silmont_memory_forward_fp32_128.pickle";
        if (!QFileInfo::exists(w0)) QSKIP("../shared/traces is absent");
        QCOMPARE(run({"diff", "--max-regression", "10", w0, w4}, &out, &err), 0);
        QVERIFY(out.contains("predicted"));
        QCOMPARE(run({"diff", "--max-regression", "10", w4, w0}, &out, &err), 3);
        QVERIFY(err.contains("regression: step time regressed +25.9%"));
        // A memory recording against a trace: like with like.
        QCOMPARE(run({"diff", snap, w0}, &out, &err), 1);
        QVERIFY(err.contains("compare like with like"));
    }

    // ---- docs/security.md: outputs never replace what they are not; terminals see no controls

    void outputsNeverReplaceWhatTheyAreNot() {
        QTemporaryDir dir;
        const QString fifo = dir.filePath("fifo"), link = dir.filePath("link.html"),
                      target = dir.filePath("target"), device = dir.filePath("null");
        QVERIFY(::mkfifo(fifo.toLocal8Bit().constData(), 0600) == 0);
        {
            QFile t(target);
            QVERIFY(t.open(QIODevice::WriteOnly));
            t.write("precious");
        }
        QVERIFY(QFile::link(target, link));
        QStringList refused = {fifo, link};
        if (::geteuid() == 0 &&
            ::mknod(device.toLocal8Bit().constData(), S_IFCHR | 0666, makedev(1, 3)) == 0)
            refused << device; // as `report -o /dev/null` as root, on a node of our own
        QByteArray out, err;
        for (const QString& o : refused) {
            struct stat before {};
            QVERIFY(::lstat(o.toLocal8Bit().constData(), &before) == 0);
            QCOMPARE(run({"report", "--format", "html", "-o", o, sample()}, &out, &err), 1);
            QVERIFY2(err.contains("not a regular file: it was left as it is"), err.constData());
            QCOMPARE(run({"analyze", "--summary", "-o", o, sample()}, &out, &err), 1);
            QVERIFY2(err.contains("not a regular file"), err.constData());
            QCOMPARE(run({"record", "--fake-source", "--duration", "0.2", "-o", o}, &out, &err), 1);
            QVERIFY2(err.contains("not a regular file"), err.constData());
            struct stat after {};
            QVERIFY(::lstat(o.toLocal8Bit().constData(), &after) == 0);
            QCOMPARE(after.st_mode, before.st_mode);
            QCOMPARE(after.st_ino, before.st_ino);
        }
        QFile t(target);
        QVERIFY(t.open(QIODevice::ReadOnly));
        QCOMPARE(t.readAll(), QByteArray("precious"));
        // The record's partial file planted as a link: refused, not followed.
        const QString planted = dir.filePath("rec.json.partial.json");
        QVERIFY(QFile::link(target, planted));
        QVERIFY(
            run({"record", "--fake-source", "--duration", "0.2", "-o", dir.filePath("rec.json")},
                &out, &err) != 0);
        QVERIFY2(err.contains("is not a regular file of this user"), err.constData());
        QVERIFY(t.seek(0));
        QCOMPARE(t.readAll(), QByteArray("precious"));

        // A report never replaces its own input.
        const QString copy = dir.filePath("mine.pt.trace.json.gz");
        QVERIFY(QFile::copy(sample(), copy));
        const qint64 size = QFileInfo(copy).size();
        QCOMPARE(run({"report", "--format", "html", "-o", copy, copy}, &out, &err), 2);
        QVERIFY2(err.contains("a report never replaces its own trace"), err.constData());
        QCOMPARE(QFileInfo(copy).size(), size);

        // A 0600 report rewritten stays 0600.
        const QString priv = dir.filePath("private.md");
        QCOMPARE(run({"report", "-o", priv, sample()}, &out, &err), 0);
        QVERIFY(QFile::setPermissions(priv, QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        QCOMPARE(run({"report", "-o", priv, sample()}, &out, &err), 0);
        struct stat st {};
        QVERIFY(::stat(priv.toLocal8Bit().constData(), &st) == 0);
        QCOMPARE(st.st_mode & 07777, mode_t(0600));

        // Two traces claiming one rank: refused before anything is written.
        const QString shared = qEnvironmentVariable("STALLSCOPE_SHARED_TRACES");
        const QString rank0 = shared + "/param-dlrm-8rank/rank0.pt.trace.json";
        if (!QFileInfo::exists(rank0)) return;
        QDir(dir.path()).mkdir("twice");
        QVERIFY(QFile::copy(rank0, dir.filePath("twice/a.pt.trace.json")));
        QVERIFY(QFile::copy(rank0, dir.filePath("twice/b.pt.trace.json")));
        QCOMPARE(run({"analyze", "--summary", "-o", dir.filePath("sums"), dir.filePath("twice")},
                     &out, &err),
                 1);
        QVERIFY2(err.contains("2 traces claim rank 0") && err.contains("nothing written"),
                 err.constData());
        QVERIFY(QDir(dir.filePath("sums")).entryList({"*.summary.json"}).isEmpty());
    }

    void terminalsNeverSeeControlCharacters() {
        // A trace whose names carry escape sequences (retitle the terminal, 8-bit CSI).
        QTemporaryDir dir;
        const QString trace = dir.filePath("esc.json");
        {
            QFile f(trace);
            QVERIFY(f.open(QIODevice::WriteOnly));
            // (No raw string literal: the moc of Qt 6.4 finds no class after one.)
            f.write("{\"traceEvents\": [\n"
                    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": "
                    "\"aten::mm\\u001b]0;owned\\u0007\\u009b31m\", "
                    "\"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 50},\n"
                    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\\u001b[2J\", \"pid\": "
                    "0, \"tid\": 7, "
                    "\"ts\": 10, \"dur\": 30, \"args\": {\"device\": 0, \"stream\": 7}}\n"
                    "], \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\\u001b[1m\", "
                    "\"totalGlobalMem\": 1}]}");
        }
        const QByteArray cliPath = cli().toLocal8Bit(), tracePath = trace.toLocal8Bit();
        for (const char* command : {"info", "analyze"}) {
            // Through a pipe: the bytes as they are (the escape is there to be filtered).
            QByteArray piped;
            run({command, trace}, &piped);
            // Through a terminal: filtered.
            int master = -1;
            const pid_t child = ::forkpty(&master, nullptr, nullptr, nullptr);
            QVERIFY(child >= 0);
            if (child == 0) {
                ::execl(cliPath.constData(), cliPath.constData(), command, tracePath.constData(),
                        static_cast<char*>(nullptr));
                ::_exit(127);
            }
            QByteArray tty;
            char buf[4096];
            for (;;) {
                const ssize_t n = ::read(master, buf, sizeof buf);
                if (n <= 0) break; // EIO once the child has gone
                tty.append(buf, int(n));
            }
            ::close(master);
            int status = 0;
            ::waitpid(child, &status, 0);
            QVERIFY2(tty.size() > 40, tty.constData()); // it printed, to the terminal
            if (std::string_view(command) == "info")    // the device name, its ESC made '?'
                QVERIFY2(tty.contains("GPU?[1m"), tty.constData());
            QVERIFY2(!tty.contains('\x1b'), tty.toHex().constData());
            QVERIFY2(!tty.contains('\x07'), tty.toHex().constData());
            QVERIFY2(!tty.contains("\xc2\x9b"), tty.toHex().constData());
            if (std::string_view(command) == "info") // a pipe gets the bytes as they are
                QVERIFY2(piped.contains("GPU\x1b[1m"), piped.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
