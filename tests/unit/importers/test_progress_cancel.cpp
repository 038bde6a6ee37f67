// Progress reporting and cooperative cancellation of an import.
#include "test_support.h"

#include "stallscope/importers/importer.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>

using namespace stallscope;

namespace {
std::string trace(int events) {
    std::string s = "{\"traceEvents\": [\n";
    for (int i = 0; i < events; ++i) {
        s += "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" + std::to_string(i % 13) +
             "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i * 10) + ", \"dur\": 5, \"args\": {\"External id\": " +
             std::to_string(i) + "}}" + (i + 1 < events ? ",\n" : "\n");
    }
    return s + "]}";
}
} // namespace

class TestProgressCancel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void progressIsReportedAndMonotone() {
        QTemporaryDir dir;
        const auto path = std::filesystem::path(dir.path().toStdString()) / "t.json";
        test::writeFile(path, trace(400000));  // ~40 MB
        std::vector<importers::ImportProgress> seen;
        importers::ImportOptions o;
        o.progress = [&](const importers::ImportProgress& p) { seen.push_back(p); };
        auto r = importers::importFile(path, o);
        QVERIFY(r);
        QVERIFY(!seen.empty());
        for (size_t i = 1; i < seen.size(); ++i) QVERIFY(seen[i].bytesRead >= seen[i - 1].bytesRead);
        QCOMPARE(seen.back().bytesRead, seen.back().bytesTotal);
        QCOMPARE(seen.back().events, uint64_t(400000));
    }

    void cancelStopsTheImport() {
        QTemporaryDir dir;
        const auto path = std::filesystem::path(dir.path().toStdString()) / "t.json";
        test::writeFile(path, trace(400000));
        for (unsigned threads : {1u, 2u}) {
            std::atomic<bool> cancel{false};
            importers::ImportOptions o;
            o.threads = threads;
            o.blockBytes = 64 * 1024;
            o.cancel = &cancel;
            o.progressIntervalMs = 0;  // a report after every block
            uint64_t eventsAtCancel = 0;
            o.progress = [&](const importers::ImportProgress& p) {
                if (!cancel && p.events > 0) {
                    eventsAtCancel = p.events;
                    cancel = true;  // cancel as soon as something was read
                }
            };
            auto r = importers::importFile(path, o);
            QVERIFY(eventsAtCancel > 0 && eventsAtCancel < 400000);
            QVERIFY(!r.ok());
            QCOMPARE(r.error().kind, importers::ErrorKind::Cancelled);
        }
    }

    void cancelBeforeStart() {
        std::atomic<bool> cancel{true};
        importers::ImportOptions o;
        o.cancel = &cancel;
        QTemporaryDir dir;
        const auto path = std::filesystem::path(dir.path().toStdString()) / "t.json";
        test::writeFile(path, trace(1000));
        auto r = importers::importPath(path, o);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().kind, importers::ErrorKind::Cancelled);
    }
};

QTEST_GUILESS_MAIN(TestProgressCancel)
#include "test_progress_cancel.moc"
