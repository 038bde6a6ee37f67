// Several ranks together: collectives matched by order, waiting vs transfer, clock offsets
// from the collectives' ends, the straggler.
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/cross_rank.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {
constexpr int64_t us = 1000;

/// One rank: 3 steps, each compute then an all-reduce that starts `late` us after the
/// compute on this rank (when it arrives) and ends at the common time of the collective,
/// all shifted by this host's clock `clock` us.
TraceText rank(int64_t clock, int64_t late) {
    TraceText t;
    for (int s = 0; s < 3; ++s) {
        const int64_t b = clock + s * 1000;
        t.step(s, b, 1000);
        t.launch("k_compute", b, 5, b + 10, 300);
        t.launch("ncclKernel_AllReduce_RING_LL_Sum_float", b + 20, 5, b + 320 + late, 600 - late,
                 9);
    }
    return t;
}
} // namespace

class TestCrossRank : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void waitingTransferAndTheStraggler() {
        // Rank 1's host clock runs 2 s ahead and it arrives 200 us late at every all-reduce:
        // rank 0 waits 200 us each time, rank 1 not at all; the transfer is 400 us on both.
        const auto t0 = rank(0, 0).load(), t1 = rank(2'000'000, 200).load();
        QVERIFY(t0 && t1);
        const AnalysisResult a0 = analyze(*t0), a1 = analyze(*t1);
        const CrossRankResult r =
            analyzeRanks({{0, "r0", t0.get(), &a0}, {1, "r1", t1.get(), &a1}});
        QCOMPARE(r.collectives, size_t(3));
        QVERIFY(r.clocksAligned);
        QCOMPARE(r.ranks[1].clockOffsetNs, 2'000'000 * us);
        QCOMPARE(r.ranks[0].waitNs, 3 * 200 * us);
        QCOMPARE(r.ranks[1].waitNs, int64_t(0));
        QCOMPARE(r.ranks[0].transferNs, 3 * 400 * us);
        QCOMPARE(r.ranks[1].transferNs, 3 * 400 * us);
        QCOMPARE(r.straggler, 1);
        QCOMPARE(r.ranks[1].lastArrivals, size_t(3));
        QCOMPARE(r.ranks[1].lateNs, 3 * 200 * us);
        // Before its late arrivals (520 + 600 + 600 us) its GPU ran the 300 us compute kernel
        // each time; the rest is idle, charged by cause.
        QCOMPARE(r.ranks[1].lateStretchNs, 1720 * us);
        QCOMPARE(r.ranks[1].lateBusyNs, 900 * us);
        int64_t idle = 0;
        for (int64_t ns : r.ranks[1].lateIdle) idle += ns;
        QCOMPARE(idle, 820 * us);
    }

    void differentCollectivesAreSaidNotGuessed() {
        TraceText other;
        other.step(0, 0, 1000);
        other.launch("ncclKernel_AllToAll_RING_LL_Sum_float", 20, 5, 320, 600, 9);
        const auto t0 = rank(0, 0).load(), t1 = other.load();
        const AnalysisResult a0 = analyze(*t0), a1 = analyze(*t1);
        const CrossRankResult r =
            analyzeRanks({{0, "r0", t0.get(), &a0}, {1, "r1", t1.get(), &a1}});
        QCOMPARE(r.collectives, size_t(0));
        QCOMPARE(r.straggler, -1);
        QVERIFY(!r.notes.empty());
    }
};

QTEST_GUILESS_MAIN(TestCrossRank)
#include "test_cross_rank.moc"
