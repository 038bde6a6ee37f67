// stallscope-cli as a user runs it: exit codes and well-formed JSON.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

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
    }
    void unreadableInputExitsOne() {
        QByteArray err;
        QCOMPARE(run({"info", "/nonexistent.json"}, nullptr, &err), 1);
        QVERIFY(err.contains("no such file"));
        QTemporaryDir dir;
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
    void infoTextAndVersion() {
        QByteArray out;
        QCOMPARE(run({"info", sample()}, &out), 0);
        QVERIFY(out.contains("busy"));
        QVERIFY(out.contains("ProfilerStep"));
        QCOMPARE(run({"--version"}, &out), 0);
        QVERIFY(out.contains("live GPU capture"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
