// TensorBoard log folders: run/worker/span discovery and ranks.
#include "test_support.h"

#include "stallscope/importers/importer.h"
#include "stallscope/importers/tensorboard_folder.h"

#include <QTemporaryDir>
#include <QTest>

using namespace stallscope;
namespace fs = std::filesystem;

namespace {
std::string trace(int rank, int ts) {
    std::string s = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": 1, \"tid\": 1, \"ts\": " +
                    std::to_string(ts) + ", \"dur\": 1}]";
    if (rank >= 0) s += ", \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) + ", \"world_size\": 2}";
    return s + "}";
}
} // namespace

class TestTensorBoardFolder : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void fileNames() {
        auto n = importers::parseTraceFileName("host_1234.1623143089861.pt.trace.json.gz");
        QVERIFY(n.matches);
        QCOMPARE(n.worker, std::string("host_1234"));
        QCOMPARE(n.spanTag, std::string("1623143089861"));
        n = importers::parseTraceFileName("worker0.pt.trace.json");
        QVERIFY(n.matches);
        QCOMPARE(n.worker, std::string("worker0"));
        QVERIFY(n.spanTag.empty());
        n = importers::parseTraceFileName("my.host.name_7.99.pt.trace.json");
        QCOMPARE(n.worker, std::string("my.host.name_7"));
        QCOMPARE(n.spanTag, std::string("99"));
        QVERIFY(!importers::parseTraceFileName("trace.json").matches);
        QVERIFY(!importers::parseTraceFileName("x.pt.trace.json.bz2").matches);
    }

    void workersBecomeRanksAndSpansStayOrdered() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        test::writeFile(root / "nodeB_2.200.pt.trace.json", trace(0, 10));
        test::writeFile(root / "nodeA_1.100.pt.trace.json", trace(1, 20));
        test::writeFile(root / "nodeA_1.300.pt.trace.json", trace(1, 30));
        test::writeFile(root / "README.txt", "not a trace");
        auto r = importers::importPath(root);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const auto& s = r.value();
        QCOMPARE(s.sourceKind, std::string("tensorboard-folder"));
        QCOMPARE(s.traces.size(), size_t(3));
        // Ranks come from distributedInfo, not from the worker names' order.
        QCOMPARE(s.traces[0].rank, 0);
        QCOMPARE(s.traces[0].label, std::string("nodeB_2"));
        QCOMPARE(s.traces[1].rank, 1);
        QCOMPARE(s.traces[1].span, 0);
        QCOMPARE(s.traces[2].span, 1);
        QVERIFY(s.traces[2].path.find(".300.") != std::string::npos);
    }

    void unreadableFilesAreReportedNotFatal() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        test::writeFile(root / "w.1.pt.trace.json", trace(-1, 1));
        test::writeFile(root / "w.2.pt.trace.json", "{\"oops\": ");
        auto r = importers::importPath(root);
        QVERIFY(r);
        QCOMPARE(r.value().traces.size(), size_t(1));
        QCOMPARE(r.value().problems.size(), size_t(1));
    }

    void runsInSubfolders() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        fs::create_directories(root / "run_a");
        fs::create_directories(root / "run_b");
        test::writeFile(root / "run_a" / "w.1.pt.trace.json", trace(-1, 1));
        test::writeFile(root / "run_b" / "w.1.pt.trace.json", trace(-1, 1));
        const auto runs = importers::findTensorBoardRuns(root);
        QCOMPARE(runs.size(), size_t(2));
        auto r = importers::importPath(root);
        QVERIFY(r);
        QCOMPARE(r.value().otherRuns.size(), size_t(1));
    }

    void realLegacyFolders() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        for (const char* sub : {"torch-1.13-legacy/tb_gzip", "torch-1.13-legacy/tb_plain"}) {
            auto r = importers::importPath(test::sharedTraces() / sub);
            QVERIFY2(r, r ? "" : r.error().message.c_str());
            QCOMPARE(r.value().traces.size(), size_t(1));
            QCOMPARE(r.value().traces[0].trace->metadata().formatName, std::string("legacy autograd profiler JSON"));
        }
    }
};

QTEST_GUILESS_MAIN(TestTensorBoardFolder)
#include "test_tensorboard_folder.moc"
