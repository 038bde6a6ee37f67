// stallscope-cli analyze on a folder with several captures of a worker: one rank per worker, its
// captures listed in time order as warm-up or steady with their figures, the summary and the
// detail from the latest steady capture; folders of one capture per rank print as before.
#include "capture_series_folder.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

class TestCliSeries : public QObject {
    Q_OBJECT
    int run(const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr) {
        QProcess p;
        p.start(qEnvironmentVariable("STALLSCOPE_CLI"), args);
        if (!p.waitForFinished(60000)) return -1;
        if (out) *out = p.readAllStandardOutput();
        if (err) *err = p.readAllStandardError();
        return p.exitCode();
    }

    /// The captures table's rows: "    *   4  4000   +30.000 s  steady   12.000 ms  - ..." as
    /// (marked, number, tag, phase, GPU busy %).
    struct Row {
        bool marked;
        int number;
        QString tag, phase;
        double busy;
    };
    static std::vector<Row> rows(const QString& text) {
        std::vector<Row> out;
        static const QRegularExpression re(
            R"(^    ([ *]) +(\d+)  (\S+) +(0|\+\S+ \S+)  (warm-up|steady) .* (\d+\.\d)%$)",
            QRegularExpression::MultilineOption);
        for (auto it = re.globalMatch(text); it.hasNext();) {
            const auto m = it.next();
            out.push_back({m.captured(1) == "*", m.captured(2).toInt(), m.captured(3),
                           m.captured(5), m.captured(6).toDouble()});
        }
        return out;
    }

private Q_SLOTS:
    void oneWorkerFourCaptures() {
        QTemporaryDir dir;
        stallscope::test::writeCaptures(dir.path().toStdString(), "worker0", "WWSS");
        QByteArray out, err;
        QCOMPARE(run({"analyze", dir.path()}, &out, &err), 0);
        const QString text = QString::fromUtf8(out);
        QVERIFY2(
            text.contains("rank 0 · worker0: 4 captures, 2 warm-up (#1, #2), 2 steady (#3, #4); "
                          "summarised by #4, the latest steady one"),
            out.constData());
        QVERIFY(!text.contains("more than once") && !err.contains("more than once"));
        QVERIFY(!text.contains("Ranks:")); // one rank: nothing to compare
        const std::vector<Row> r = rows(text);
        QCOMPARE(r.size(), size_t(4));
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(r[size_t(i)].number, i + 1);
            QCOMPARE(r[size_t(i)].tag, QString::number((i + 1) * 1000));
            QCOMPARE(r[size_t(i)].marked, i == 3);
            QCOMPARE(r[size_t(i)].phase, QString(i < 2 ? "warm-up" : "steady"));
            QVERIFY2(i < 2 ? r[size_t(i)].busy < 10 : r[size_t(i)].busy > 80, out.constData());
        }
        // The detail: the summarised capture's, once.
        QCOMPARE(text.count(QRegularExpression("^window: ", QRegularExpression::MultilineOption)),
                 1);
        QVERIFY(text.contains(
            QRegularExpression("worker0\\.4000\\.pt\\.trace\\.json( · rank 0)?\\nwindow: ")));

        QCOMPARE(run({"analyze", "--json", dir.path()}, &out), 0);
        const QJsonObject o = QJsonDocument::fromJson(out).object();
        QVERIFY2(!o.contains("ranks"), out.left(300).constData());
        const QJsonArray series = o["captures"].toArray();
        QCOMPARE(series.size(), 1);
        const QJsonObject s = series[0].toObject();
        QCOMPARE(s["rank"].toInt(), 0);
        QCOMPARE(s["label"].toString(), QString("worker0"));
        QCOMPARE(s["summarised_by"].toInt(), 3);
        const QJsonArray caps = s["captures"].toArray();
        QCOMPARE(caps.size(), 4);
        for (int i = 0; i < 4; ++i) {
            const QJsonObject c = caps[i].toObject();
            QCOMPARE(c["phase"].toString(), QString(i < 2 ? "warm-up" : "steady"));
            QCOMPARE(c["tag"].toString(), QString::number((i + 1) * 1000));
            QVERIFY(i < 2 ? c["utilization"].toDouble() < 0.1 : c["utilization"].toDouble() > 0.8);
            QVERIFY(c["window_ns"].toDouble() > 0);
            if (i >= 2) QCOMPARE(c["step_mean_ns"].toDouble(), 2e6);
        }
        const QJsonArray traces = o["traces"].toArray();
        QCOMPARE(traces.size(), 1);
        QVERIFY(traces[0].toObject()["path"].toString().endsWith("worker0.4000.pt.trace.json"));

        // Rank summaries: one rank, from its latest steady capture.
        QTemporaryDir sums;
        QCOMPARE(run({"analyze", "--summary", "-o", sums.path(), dir.path()}, &out, &err), 0);
        const QJsonObject summary =
            QJsonDocument::fromJson(QByteArray::fromStdString(stallscope::test::readFile(
                                        (sums.path() + "/rank0.summary.json").toStdString())))
                .object();
        QVERIFY2(summary["path"].toString().endsWith("worker0.4000.pt.trace.json"),
                 err.constData());
        QCOMPARE(QDir(sums.path()).entryList(QDir::Files).size(), 1);
    }

    void twoWorkersTwoCapturesEach() {
        QTemporaryDir dir;
        stallscope::test::writeCaptures(dir.path().toStdString(), "host_a", "WS", 1, 2);
        stallscope::test::writeCaptures(dir.path().toStdString(), "host_b", "WS", 0, 2);
        QByteArray out, err;
        QCOMPARE(run({"analyze", dir.path()}, &out, &err), 0);
        const QString text = QString::fromUtf8(out);
        QVERIFY2(text.contains("rank 0 · host_b: 2 captures, 1 warm-up (#1), 1 steady (#2); "
                               "summarised by #2"),
                 out.constData());
        QVERIFY(text.contains("rank 1 · host_a: 2 captures"));
        QVERIFY(text.contains("Ranks: 2"));
        QVERIFY(!text.contains("more than once"));
        QCOMPARE(rows(text).size(), size_t(4));
        QCOMPARE(text.count(QRegularExpression("^window: ", QRegularExpression::MultilineOption)),
                 2);
        QVERIFY(text.contains("host_b.2000.pt.trace.json · rank 0\nwindow: "));
        QVERIFY(text.contains("host_a.2000.pt.trace.json · rank 1\nwindow: "));

        QCOMPARE(run({"analyze", "--json", dir.path()}, &out), 0);
        const QJsonObject o = QJsonDocument::fromJson(out).object();
        const QJsonArray ranks = o["ranks"].toObject()["ranks"].toArray();
        QCOMPARE(ranks.size(), 2);
        for (const auto& r : ranks) {
            QVERIFY(r.toObject()["path"].toString().endsWith(".2000.pt.trace.json"));
            QVERIFY(r.toObject()["utilization"].toDouble() > 0.8);
        }
        QCOMPARE(o["captures"].toArray().size(), 2);
        QCOMPARE(o["traces"].toArray().size(), 2);
    }

    // Several ranks of one capture each: as before series existed — no captures section, the
    // {"ranks", "traces"} object with every trace.
    void oneCapturePerRankIsUnchanged() {
        QTemporaryDir dir;
        stallscope::test::writeCaptures(dir.path().toStdString(), "host_a", "S");
        stallscope::test::writeCaptures(dir.path().toStdString(), "host_b", "W");
        QByteArray out;
        QCOMPARE(run({"analyze", dir.path()}, &out), 0);
        const QString text = QString::fromUtf8(out);
        QVERIFY(text.startsWith("Ranks: 2"));
        QVERIFY(!text.contains("Captures:"));
        QCOMPARE(text.count(QRegularExpression("^window: ", QRegularExpression::MultilineOption)),
                 2);
        QCOMPARE(run({"analyze", "--json", dir.path()}, &out), 0);
        const QJsonObject o = QJsonDocument::fromJson(out).object();
        QCOMPARE(o.keys(), QStringList({"ranks", "traces"}));
        QCOMPARE(o["traces"].toArray().size(), 2);
        // One file: the array of one analysis.
        QCOMPARE(run({"analyze", "--json", dir.filePath("host_a.1000.pt.trace.json")}, &out), 0);
        QVERIFY(QJsonDocument::fromJson(out).isArray());
    }
};

QTEST_GUILESS_MAIN(TestCliSeries)
#include "test_cli_series.moc"
