// gzip input: streaming inflate, multi-member streams, and reading events back through
// the random-access index (no uncompressed text is kept).
#include "gzip_text.h"
#include "test_support.h"

#include "stallscope/importers/importer.h"

#include <QTemporaryDir>
#include <QTest>
#include <zlib.h>

#include <ctime>

using namespace stallscope;
using namespace stallscope::model;

namespace {

std::string bigTrace(int events) {
    std::string s = "{\"traceEvents\": [\n";
    for (int i = 0; i < events; ++i) {
        s += "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::op" + std::to_string(i % 97) +
             "\", \"pid\": 1, \"tid\": " + std::to_string(1 + i % 4) + ", \"ts\": " + std::to_string(i * 3) +
             ", \"dur\": 2, \"args\": {\"External id\": " + std::to_string(i) + ", \"Call stack\": \"train.py(" +
             std::to_string(i * 7919 % 100003) + "): step\"}}";
        s += i + 1 < events ? ",\n" : "\n";
    }
    return s + "]}\n";
}

} // namespace

class TestGzip : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void gzipEqualsPlainAndArgsReadBack() {
        const std::string text = bigTrace(90000);  // ~14 MB: several index checkpoints
        QVERIFY(text.size() > 3 * (4u << 20));
        QTemporaryDir dir;
        const auto plainPath = std::filesystem::path(dir.path().toStdString()) / "t.json";
        const auto gzPath = std::filesystem::path(dir.path().toStdString()) / "t.json.gz";
        test::writeFile(plainPath, text);
        test::writeFile(gzPath, test::gzipText(text));
        auto plain = importers::importFile(plainPath);
        auto gz = importers::importFile(gzPath);
        QVERIFY(plain && gz);
        const Trace& p = *plain.value();
        const Trace& g = *gz.value();
        QCOMPARE(g.slices().size(), size_t(90000));
        QCOMPARE(g.slices().start, p.slices().start);
        QCOMPARE(g.slices().srcOffset, p.slices().srcOffset);
        QVERIFY(g.metadata().compressed);
        QCOMPARE(g.importStats().textBytes, uint64_t(text.size()));
        QVERIFY(g.eventSource() && g.eventSource()->memoryBytes() > 0);
        // Read events back from all over the file, out of order.
        for (uint32_t i : {89999u, 0u, 45000u, 12345u, 77777u, 1u, 89998u}) {
            std::string raw, err;
            QVERIFY2(g.sliceRawText(SliceId(i), raw, err), err.c_str());
            QCOMPARE(raw, text.substr(g.slices().srcOffset[i], g.slices().srcLength[i]));
            std::vector<ArgValue> args;
            QVERIFY2(g.sliceArgs(SliceId(i), args, err), err.c_str());
            QCOMPARE(args.size(), size_t(2));
            QCOMPARE(args[0].key, std::string("External id"));
            std::vector<ArgValue> plainArgs;
            QVERIFY(p.sliceArgs(SliceId(i), plainArgs, err));
            QCOMPARE(args[1].json, plainArgs[1].json);
        }
        // Reads that alternate between the start and the end of the file (a kernel's args and
        // its launching operator's) inflate each part once: 400 such reads cost less of this
        // thread's CPU time than the two reads that inflated them (each span is kept).
        auto cpuNs = [] {
            timespec ts{};
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
            return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
        };
        std::string raw, err;
        const int64_t t0 = cpuNs();
        QVERIFY(g.sliceRawText(SliceId(30000), raw, err));
        QVERIFY(g.sliceRawText(SliceId(60000), raw, err));
        const int64_t firstTwo = cpuNs() - t0;
        const int64_t t1 = cpuNs();
        for (int k = 0; k < 200; ++k) {
            QVERIFY(g.sliceRawText(SliceId(30000 + uint32_t(k)), raw, err));
            QVERIFY(g.sliceRawText(SliceId(60000 + uint32_t(k)), raw, err));
        }
        const int64_t alternating = cpuNs() - t1;
        QVERIFY2(alternating < firstTwo, qPrintable(QString("400 alternating reads %1 ns, the two "
                                                            "first reads %2 ns")
                                                        .arg(alternating)
                                                        .arg(firstTwo)));
        QCOMPARE(raw, text.substr(g.slices().srcOffset[60199], g.slices().srcLength[60199]));
    }

    void multiMemberStream() {
        const std::string text = bigTrace(2000);
        const size_t cut = text.size() / 3 + 17;  // anywhere, even inside an event
        QTemporaryDir dir;
        const auto path = std::filesystem::path(dir.path().toStdString()) / "multi.json.gz";
        test::writeFile(path, test::gzipText(text.substr(0, cut)) + test::gzipText(text.substr(cut), 1));
        auto r = importers::importFile(path);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        QCOMPARE(r.value()->slices().size(), size_t(2000));
        QVERIFY(r.value()->diagnostics().empty());
        std::string raw, err;
        const uint32_t last = 1999;
        QVERIFY2(r.value()->sliceRawText(SliceId(last), raw, err), err.c_str());
        QCOMPARE(raw, text.substr(r.value()->slices().srcOffset[last], r.value()->slices().srcLength[last]));
    }

    void inMemoryGzip() {
        auto r = importers::importBuffer(test::gzipText(bigTrace(100)));
        QVERIFY(r);
        QCOMPARE(r.value()->slices().size(), size_t(100));
    }
};

QTEST_GUILESS_MAIN(TestGzip)
#include "test_gzip.moc"
