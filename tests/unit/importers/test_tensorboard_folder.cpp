// TensorBoard log folders: run/worker/span discovery and ranks; folders of plain *.json ranks;
// several ranks in one file.
#include "test_support.h"

#include "stallscope/importers/importer.h"
#include "stallscope/importers/ranks_in_one_file.h"
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
/// A kernel and a CPU op for one rank, its processes as given (pids as JSON values).
std::string rankEvents(const std::string& cpuPid, const std::string& gpuPid, int ts) {
    return "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op\", \"pid\": " + cpuPid +
           ", \"tid\": 1, \"ts\": " + std::to_string(ts) +
           ", \"dur\": 5},"
           "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": " +
           gpuPid + ", \"tid\": 7, \"ts\": " + std::to_string(ts + 1) + ", \"dur\": 3}";
}
std::string merged(const std::string& events) {
    return "{\"traceEvents\": [" + events + "]}";
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

    void severalRanksInOneFile_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("device1"); // rank 1's GPU index, -1: no split expected
        // TraceFuse: pid + rank * 10^6; rank 1's GPU 3 is pid 1000003.
        QTest::newRow("pid ranges")
            << QString::fromStdString(merged(rankEvents("59811", "3", 10) + "," +
                                             rankEvents("1059811", "1000003", 20)))
            << 2 << 3;
        // The sglang merger: "[TP01] 3".
        QTest::newRow("bracket tags")
            << QString::fromStdString(merged(rankEvents("\"[TP00] 59811\"", "\"[TP00] 2\"", 10) +
                                             "," +
                                             rankEvents("\"[TP01] 59811\"", "\"[TP01] 2\"", 20)))
            << 2 << 2;
        // Process names saying the rank; distinct pids without offsets.
        QTest::newRow("names") << QString::fromStdString(merged(
                                      rankEvents("100", "0", 10) + "," +
                                      rankEvents("200", "1", 20) +
                                      ",{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 100, "
                                      "\"args\": {\"name\": \"RANK 0 - CPU\"}},"
                                      "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 200, "
                                      "\"args\": {\"name\": \"RANK 1 - CPU\"}},"
                                      "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 0, "
                                      "\"args\": {\"labels\": \"Rank 0 GPU 0\"}},"
                                      "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 1, "
                                      "\"args\": {\"labels\": \"Rank 1 GPU 1\"}}"))
                               << 2 << 1;
        // One rank with eight GPUs is one rank, and a name that only contains "rank" is not one.
        std::string eight = rankEvents("1234567", "0", 10);
        for (int g = 1; g < 8; ++g) eight += "," + rankEvents("1234567", std::to_string(g), 10 + g);
        eight += ",{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1234567, \"args\": "
                 "{\"name\": \"cranky 3\"}}";
        QTest::newRow("one rank, 8 GPUs") << QString::fromStdString(merged(eight)) << 1 << -1;
        // A host pid with GPU-side events (a gpu_user_annotation) is not a device index above
        // a multiple of 1000.
        QTest::newRow("host pid with GPU-side events")
            << QString::fromStdString(
                   merged(rankEvents("1234567", "0", 10) +
                          ",{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"a\", "
                          "\"pid\": 1234567, \"tid\": 9, \"ts\": 12, \"dur\": 1}"))
            << 1 << -1;
    }
    void severalRanksInOneFile() {
        QFETCH(QString, text);
        QFETCH(int, ranks);
        QFETCH(int, device1);
        QTemporaryDir dir;
        const fs::path file = fs::path(dir.path().toStdString()) / "merged.json";
        test::writeFile(file, text.toStdString());
        auto r = importers::importPath(file);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const auto& s = r.value();
        QCOMPARE(int(s.traces.size()), ranks);
        if (ranks < 2) {
            QVERIFY(s.notes.empty());
            return;
        }
        QCOMPARE(s.notes.size(), size_t(1));
        for (int k = 0; k < ranks; ++k) {
            const auto& e = s.traces[size_t(k)];
            QCOMPARE(e.rank, k);
            // Each rank holds its own events only: one op and one kernel.
            QCOMPARE(e.trace->slices().size(), size_t(2));
            int device = -1;
            for (const auto& p : e.trace->processes())
                if (p.gpuDevice >= 0) device = p.gpuDevice;
            if (k == 1) QCOMPARE(device, device1);
        }
    }

    void aFileOfThousandsOfRanksIsOneTraceAndABudgetBindsTheRanks() {
        // Each rank of a file is a read of the whole file: 600 "RANK n" processes would be 600
        // reads (a 3.7 MB file of 20,000 once took 12 GB). More than kMaxRanksInOneFile: one
        // trace, and a note that says why.
        QTemporaryDir dir;
        std::string events;
        constexpr int kRanks = int(importers::kMaxRanksInOneFile) + 88;
        for (int k = 0; k < kRanks; ++k) {
            if (k) events += ",";
            events +=
                rankEvents(std::to_string(100 + k), std::to_string(100000 + k), 10 + k) +
                ",{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " + std::to_string(100 + k) +
                ", \"args\": {\"name\": \"RANK " + std::to_string(k) + " - CPU\"}}";
        }
        const fs::path file = fs::path(dir.path().toStdString()) / "many.json";
        test::writeFile(file, merged(events));
        auto r = importers::importPath(file);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        QCOMPARE(r.value().traces.size(), size_t(1));
        QCOMPARE(r.value().notes.size(), size_t(1));
        QVERIFY2(r.value().notes[0].find(std::to_string(kRanks) + " ranks in one file") == 0,
                 r.value().notes[0].c_str());
        QVERIFY(r.value().notes[0].find("shown as one trace") != std::string::npos);

        // Two ranks: split within an ample budget; below what the file needs, refused with
        // the sizes, not read rank after rank past it.
        const fs::path two = fs::path(dir.path().toStdString()) / "two.json";
        std::string big;
        for (int k = 0; k < 2; ++k)
            for (int i = 0; i < 20000; ++i)
                big += (big.empty() ? "" : ",") +
                       rankEvents(k ? "1059811" : "59811", k ? "1000003" : "3", 10 + 10 * i);
        test::writeFile(two, merged(big));
        auto whole = importers::importPath(two);
        QVERIFY(whole && whole.value().traces.size() == 2);
        importers::ImportOptions o;
        o.memoryBudgetBytes = uint64_t(1) << 34;
        auto ample = importers::importPath(two, o);
        QVERIFY(ample && ample.value().traces.size() == 2);
        o.memoryBudgetBytes = whole.value().traces[0].trace->memoryBytes() * 3 / 2;
        auto bounded = importers::importPath(two, o);
        QVERIFY(!bounded);
        QCOMPARE(bounded.error().kind, importers::ErrorKind::OverMemoryBudget);
        QVERIFY2(bounded.error().message.find("memory") != std::string::npos,
                 bounded.error().message.c_str());
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
