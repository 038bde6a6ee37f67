// Several ranks together: collectives matched by order, waiting vs transfer, clock offsets
// from the collectives' ends, the straggler, per step; rank summaries read back exactly, so
// `merge` of summaries equals the analysis of all ranks in one process.
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/analysis/cross_rank.h"
#include "stallscope/workspace/rank_summary.h"
#include "stallscope/workspace/workspace.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::analysis;
using test::TraceText;

namespace {
constexpr int64_t us = 1000;

std::string crossJson(const CrossRankResult& r) {
    base::JsonWriter w(true);
    writeCrossRankJson(w, r);
    return w.str();
}

/// Each digest written as a summary and read back.
std::vector<RankDigest> throughSummaries(const std::vector<RankInput>& in) {
    std::vector<RankDigest> out;
    for (const RankInput& r : in) {
        auto d = workspace::parseRankSummary(workspace::rankSummaryJson(digestRank(r)));
        if (!d) qFatal("summary did not read back: %s", d.error().message.c_str());
        out.push_back(std::move(d.value()));
    }
    return out;
}

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
/// An NCCL kernel with Kineto's process group and Seq, launched at `call` (stream 9).
void nccl(TraceText& t, int64_t call, int64_t start, int64_t dur, const char* group, int seq) {
    const int c = t.nextCorrelation();
    t.runtime("cudaLaunchKernel", call, 5, c);
    t.add(R"({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", )"
          R"("pid": 0, "tid": 9, "ts": )" +
          std::to_string(start) + R"(, "dur": )" + std::to_string(dur) +
          R"(, "args": {"correlation": )" + std::to_string(c) +
          R"(, "stream": 9, "device": 0, "Process Group Name": ")" + group + R"(", "Seq": )" +
          std::to_string(seq) + "}}");
}

/// rank() with Kineto's NCCL arguments: the all-reduces are Seq 1..3 of process group "0";
/// `extra` adds one of group "1" (Seq 1) early in the first step.
TraceText rankWithSeq(int64_t late, bool extra) {
    TraceText t;
    for (int s = 0; s < 3; ++s) {
        const int64_t b = s * 1000;
        t.step(s, b, 1000);
        t.launch("k_compute", b, 5, b + 10, 300);
        if (extra && s == 0) nccl(t, b + 12, b + 100, 50, "1", 1);
        nccl(t, b + 20, b + 320 + late, 600 - late, "0", s + 1);
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
        // Rank 0 waits 200 of its 600 us per collective: mostly transfer, no such sentence.
        for (const std::string& line : crossRankSentences(r))
            QVERIFY(!line.starts_with("Waiting, not transferring"));
        QCOMPARE(r.ranks[1].lastArrivals, size_t(3));
        QCOMPARE(r.ranks[1].lateNs, 3 * 200 * us);
        // Before its late arrivals (520 + 600 + 600 us) its GPU ran the 300 us compute kernel
        // each time; the rest is idle, charged by cause.
        QCOMPARE(r.ranks[1].lateStretchNs, 1720 * us);
        QCOMPARE(r.ranks[1].lateBusyNs, 900 * us);
        int64_t idle = 0;
        for (int64_t ns : r.ranks[1].lateIdle) idle += ns;
        QCOMPARE(idle, 820 * us);
        // Per step: three columns by ProfilerStep number, rank 1 the straggler of each, the
        // 200 us of waiting in each of rank 0's steps.
        QCOMPARE(r.stepLabels, (std::vector<std::string>{"#0", "#1", "#2"}));
        QCOMPARE(r.stepStraggler, (std::vector<int32_t>{1, 1, 1}));
        for (size_t s = 0; s < 3; ++s) {
            QCOMPARE(r.cells[0][s].waitNs, 200 * us);
            QCOMPARE(r.cells[1][s].waitNs, int64_t(0));
            QCOMPARE(r.cells[1][s].lastArrivals, size_t(1));
            QCOMPARE(r.cells[0][s].collectiveNs, 600 * us);
            QVERIFY(r.cells[0][s].stepNs >= 1000 * us);
        }
        // Through summary files: the same result, to the byte.
        const std::vector<RankInput> in{{0, "r0", t0.get(), &a0}, {1, "r1", t1.get(), &a1}};
        QCOMPARE(crossJson(analyzeRanks(throughSummaries(in))), crossJson(r));
    }

    // Rank 1 runs one more collective (another process group) before the three all-reduces:
    // by order, its first would pair with rank 0's first all-reduce; by (process group, Seq)
    // the three all-reduces pair, and rank 0 waits 200 us at each.
    void collectivesMatchedByProcessGroupAndSeq() {
        const auto t0 = rankWithSeq(0, false).load(), t1 = rankWithSeq(200, true).load();
        QVERIFY(t0 && t1);
        const AnalysisResult a0 = analyze(*t0), a1 = analyze(*t1);
        const std::vector<RankInput> in{{0, "r0", t0.get(), &a0}, {1, "r1", t1.get(), &a1}};
        const CrossRankResult r = analyzeRanks(in);
        QCOMPARE(r.collectives, size_t(3));
        QVERIFY2(r.matching.find("Seq") != std::string::npos, r.matching.c_str());
        QCOMPARE(r.ranks[0].waitNs, 3 * 200 * us);
        QCOMPARE(r.ranks[1].waitNs, int64_t(0));
        QCOMPARE(r.straggler, 1);
        bool said = false;
        for (const std::string& n : r.notes)
            said |= n.starts_with("1 collective is not on every rank");
        QVERIFY(said);
        // The Seq and group survive a summary file.
        QCOMPARE(crossJson(analyzeRanks(throughSummaries(in))), crossJson(r));
    }

    void stepsOfDifferentNumbersAreComparedByPosition() {
        TraceText other;
        for (int s = 0; s < 3; ++s) {
            const int64_t b = s * 1000;
            other.step(s + 40, b, 1000);
            other.launch("k_compute", b, 5, b + 10, 300);
            other.launch("ncclKernel_AllReduce_RING_LL_Sum_float", b + 20, 5, b + 320, 600, 9);
        }
        const auto t0 = rank(0, 0).load(), t1 = other.load();
        const AnalysisResult a0 = analyze(*t0), a1 = analyze(*t1);
        const CrossRankResult r =
            analyzeRanks({{0, "r0", t0.get(), &a0}, {1, "r1", t1.get(), &a1}});
        QCOMPARE(r.stepLabels.size(), size_t(3));
        bool said = false;
        for (const auto& n : r.notes) said |= n.find("by position") != std::string::npos;
        QVERIFY(said);
    }

    void badSummariesAreRefusedWithTheField() {
        const auto t0 = rank(0, 0).load();
        const AnalysisResult a0 = analyze(*t0);
        const std::string good = workspace::rankSummaryJson(digestRank({0, "r0", t0.get(), &a0}));
        QVERIFY(workspace::parseRankSummary(good));
        const RankDigest digest = digestRank({0, "r0", t0.get(), &a0});
        auto edited = [&](void (*edit)(RankDigest&)) {
            RankDigest d = digest;
            edit(d);
            return workspace::rankSummaryJson(d);
        };
        auto replace = [&](const std::string& from, const std::string& to) {
            std::string s = good;
            const size_t at = s.find(from);
            if (at == std::string::npos) qFatal("no %s in the summary", from.c_str());
            return s.replace(at, from.size(), to);
        };
        struct Case {
            const char* what;
            std::string text;
            base::ErrorKind kind;
            const char* says;
        };
        const Case cases[] = {
            {"not JSON", good.substr(0, good.size() / 2), base::ErrorKind::InvalidJson, "not JSON"},
            {"an array", "[1, 2]", base::ErrorKind::InvalidStructure, "not a JSON object"},
            {"another schema", replace("stallscope.rank-summary/1", "stallscope.analysis/1"),
             base::ErrorKind::InvalidStructure, "not a Stallscope rank summary"},
            {"a missing field", replace("\"device_name\"", "\"device_label\""),
             base::ErrorKind::InvalidStructure, "device_name"},
            {"a string for a number", replace("\"rank\": 0", "\"rank\": \"0\""),
             base::ErrorKind::InvalidStructure, "\"rank\" is not an integer"},
            {"a rank past int32", replace("\"rank\": 0", "\"rank\": 99999999999"),
             base::ErrorKind::InvalidStructure, "out of range"},
            {"a step past the steps", replace("\"step\": 0", "\"step\": 7"),
             base::ErrorKind::InvalidStructure, "past the steps"},
            {"an unknown finding", replace("\"kind\": \"", "\"kind\": \"x"),
             base::ErrorKind::InvalidStructure, "unknown finding kind"},
            {"a missing cause", replace("\"data_loading\"", "\"data_load\""),
             base::ErrorKind::InvalidStructure, "data_loading"},
            {"a negative window", edited([](RankDigest& d) { d.windowStartNs = -5; }),
             base::ErrorKind::InvalidStructure, "the window"},
            {"a collective ending before it starts", edited([](RankDigest& d) {
                 d.collectives.at(1).endNs = d.collectives.at(1).startNs - 1;
             }),
             base::ErrorKind::InvalidStructure, "impossible times"},
            {"a step past 2^62 ns",
             edited([](RankDigest& d) { d.steps.at(0).endNs = int64_t(1) << 62; }),
             base::ErrorKind::InvalidStructure, "impossible times"},
            {"a utilisation of 2", edited([](RankDigest& d) { d.utilization = 2; }),
             base::ErrorKind::InvalidStructure, "utilization"},
            {"a negative idle time", edited([](RankDigest& d) { d.idle[0] = -1; }),
             base::ErrorKind::InvalidStructure, "idle time"},
            // Each below 2^62, together past the window (and past int64 across ranks: merge
            // once printed -4611686018.427 s).
            {"idle times adding up past the window", edited([](RankDigest& d) {
                 for (int64_t& v : d.idle) v = (int64_t(1) << 62) - 1;
             }),
             base::ErrorKind::InvalidStructure, "add up to more than the window"},
            {"a window of 20 days", edited([](RankDigest& d) {
                 d.windowEndNs = d.windowStartNs + (int64_t(20) * 86400 * 1000000000);
             }),
             base::ErrorKind::InvalidStructure, "at most 2^50 ns long"},
            {"a step busier than it is long", edited([](RankDigest& d) {
                 d.steps.at(0).busyNs = d.steps.at(0).endNs - d.steps.at(0).startNs + 1;
             }),
             base::ErrorKind::InvalidStructure, "impossible times"},
        };
        for (const Case& c : cases) {
            const auto r = workspace::parseRankSummary(c.text);
            QVERIFY2(!r, c.what);
            QVERIFY2(r.error().kind == c.kind, c.what);
            QVERIFY2(r.error().message.find(c.says) != std::string::npos,
                     (std::string(c.what) + ": " + r.error().message).c_str());
        }
    }

    void oneRankIsListedAndRanksGivenTwiceAreComparedOnce() {
        const auto t0 = rank(0, 0).load(), t1 = rank(0, 100).load();
        const AnalysisResult a0 = analyze(*t0), a1 = analyze(*t1);
        const RankDigest d0 = digestRank({0, "r0", t0.get(), &a0}),
                         d1 = digestRank({1, "r1", t1.get(), &a1});
        const CrossRankResult alone = analyzeRanks(std::vector<RankDigest>{d0});
        QCOMPARE(alone.ranks.size(), size_t(1));
        QCOMPARE(alone.ranks[0].rank, 0);
        QCOMPARE(alone.notes, std::vector<std::string>{"one rank: nothing to compare"});
        const CrossRankResult twice = analyzeRanks(std::vector<RankDigest>{d0, d1, d0});
        QCOMPARE(twice.ranks.size(), size_t(2));
        QCOMPARE(twice.collectives, size_t(3));
        bool said = false;
        for (const auto& n : twice.notes)
            said |= n.find("rank 0 given more than once") != std::string::npos;
        QVERIFY(said);
        const CrossRankResult once = analyzeRanks(std::vector<RankDigest>{d0, d1});
        for (size_t i = 0; i < 2; ++i) {
            QCOMPARE(twice.ranks[i].waitNs, once.ranks[i].waitNs);
            QCOMPARE(twice.ranks[i].lastArrivals, once.ranks[i].lastArrivals);
        }
        QCOMPARE(twice.straggler, 1);
    }

    void realRanksMergeEqualsOneProcess() {
        // The 8 DLRM ranks (one clock) and the two sampled HTA ranks (clocks aligned).
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        for (const char* folder : {"param-dlrm-8rank", "hta/trace_filter"}) {
            auto ws = workspace::loadAndAnalyse((test::sharedTraces() / folder).string());
            QVERIFY2(ws, folder);
            std::vector<RankInput> in;
            for (const auto& at : ws.value().traces)
                in.push_back({at.entry.rank, at.entry.label, at.entry.trace.get(),
                              at.analysis.get(), at.entry.path});
            QVERIFY(in.size() >= 2);
            const CrossRankResult whole = analyzeRanks(in);
            QVERIFY(whole.collectives > 0);
            QVERIFY(!whole.stepLabels.empty());
            QCOMPARE(crossJson(analyzeRanks(throughSummaries(in))), crossJson(whole));
            if (std::string(folder) == "param-dlrm-8rank") {
                // Rank 7 is last at 5 of the 8 collectives, 3 of them launched in the
                // sparse-data distribution before the forward pass.
                QCOMPARE(whole.straggler, 7);
                QCOMPARE(whole.ranks[7].lastArrivals, size_t(5));
                QCOMPARE(whole.ranks[7].latePhase, std::string("## sparse_data_dist ##"));
                QCOMPARE(whole.ranks[7].latePhaseCount, size_t(3));
                // The other ranks' time in collectives is mostly waiting for rank 7 (93-96 %):
                // said, since each rank's own comm_exposed cannot tell waiting from transfer.
                std::string waiting;
                for (const std::string& line : crossRankSentences(whole))
                    if (line.starts_with("Waiting, not transferring")) waiting = line;
                QVERIFY2(waiting.find("ranks 0, 1, 2, 3, 4, 5, 6 wait") != std::string::npos,
                         waiting.c_str());
                QVERIFY(waiting.find("rank 7's stall") != std::string::npos);
            }
        }
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
