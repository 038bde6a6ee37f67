// Several captures of one worker are a series in time, not ranks: the loader groups a rank's
// captures in time order, labels each warm-up or steady by the one rule, and every per-rank
// summary (the cross-rank analysis, rank digests, rank summaries) takes the latest steady one.
#include "capture_series_folder.h"
#include "test_support.h"

#include "stallscope/analysis/cross_rank.h"
#include "stallscope/workspace/capture_series.h"
#include "stallscope/workspace/rank_summary.h"
#include "stallscope/workspace/workspace.h"

#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace stallscope;
using workspace::CapturePhase;

namespace {

constexpr int64_t ms = 1'000'000;

workspace::Workspace load(const QTemporaryDir& dir) {
    auto r = workspace::loadAndAnalyse(dir.path().toStdString());
    if (!r) qFatal("%s", r.error().message.c_str());
    return std::move(r.value());
}

std::string phases(const workspace::RankSeries& s) {
    std::string out;
    for (const workspace::Capture& c : s.captures)
        out += c.phase == CapturePhase::WarmUp ? 'W' : 'S';
    return out;
}

bool endsWith(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool saysGivenTwice(const analysis::CrossRankResult& r) {
    for (const std::string& n : r.notes)
        if (n.find("more than once") != std::string::npos) return true;
    return false;
}

/// An analysis whose warm-up is `warmup` of a `whole` window (ms), or none when whole == 0.
analysis::AnalysisResult withWarmup(int64_t warmup, int64_t whole, bool wholeWindow = false) {
    analysis::AnalysisResult a;
    if (whole == 0) return a;
    analysis::Warmup w;
    w.wholeStartNs = 100 * ms;
    w.wholeEndNs = w.wholeStartNs + whole * ms;
    w.startNs = w.wholeStartNs;
    w.endNs = w.startNs + warmup * ms;
    w.wholeWindow = wholeWindow;
    a.warmup = w;
    return a;
}

} // namespace

class TestCaptureSeries : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // The rule, at its edges: warm-up when the whole window is warm-up or warm-up is at least
    // half of it; steady otherwise, and when no warm-up was found.
    void theRule() {
        QCOMPARE(workspace::capturePhase(withWarmup(0, 0)), CapturePhase::Steady);
        QCOMPARE(workspace::capturePhase(withWarmup(10, 10, true)), CapturePhase::WarmUp);
        QCOMPARE(workspace::capturePhase(withWarmup(50, 100)), CapturePhase::WarmUp);
        QCOMPARE(workspace::capturePhase(withWarmup(49, 100)), CapturePhase::Steady);
        QCOMPARE(workspace::capturePhase(withWarmup(90, 100)), CapturePhase::WarmUp);
        QCOMPARE(workspace::capturePhaseName(CapturePhase::WarmUp), std::string_view("warm-up"));
        QCOMPARE(workspace::capturePhaseName(CapturePhase::Steady), std::string_view("steady"));
        // The representative: the latest steady capture, else the latest.
        std::vector<workspace::Capture> c(4);
        c[0].phase = c[1].phase = CapturePhase::WarmUp;
        QCOMPARE(workspace::representativeCapture(c), size_t(3));
        c[3].phase = CapturePhase::WarmUp;
        QCOMPARE(workspace::representativeCapture(c), size_t(2));
        c[2].phase = CapturePhase::WarmUp;
        QCOMPARE(workspace::representativeCapture(c), size_t(3));
    }

    // Four captures of one worker, two warm-up and two steady: one rank captured four times,
    // summarised by its latest steady capture, never "given more than once".
    void oneWorkerFourCapturesIsOneRank() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "worker0", "WWSS");
        const workspace::Workspace ws = load(dir);
        QCOMPARE(ws.traces.size(), size_t(4));
        QCOMPARE(ws.series.size(), size_t(1));
        const workspace::RankSeries& s = ws.series.front();
        QCOMPARE(s.rank, 0);
        QCOMPARE(s.label, std::string("worker0"));
        QCOMPARE(s.captures.size(), size_t(4));
        QCOMPARE(phases(s), std::string("WWSS"));
        QCOMPARE(s.count(CapturePhase::WarmUp), size_t(2));
        QCOMPARE(s.count(CapturePhase::Steady), size_t(2));
        QCOMPARE(s.representative, size_t(3));
        QVERIFY(!s.onlyWarmUp());
        for (size_t i = 0; i < 4; ++i) {
            const workspace::Capture& c = s.captures[i];
            QCOMPARE(c.tag, std::to_string((i + 1) * 1000));
            QCOMPARE(c.span, int32_t(i));
            QVERIFY(endsWith(c.path, "worker0." + c.tag + ".pt.trace.json"));
            QCOMPARE(ws.traces[c.trace].entry.path, c.path);
            // The label is the rule applied to that capture's own analysis.
            QCOMPARE(c.phase, workspace::capturePhase(*ws.traces[c.trace].analysis));
            if (i > 0) QVERIFY(c.startNs > s.captures[i - 1].startNs); // time order
            if (c.phase == CapturePhase::WarmUp) {
                QVERIFY2(c.utilization < 0.1, std::to_string(c.utilization).c_str());
                QCOMPARE(c.warmupNs, c.wholeNs); // the whole window is warm-up
                QCOMPARE(c.wholeNs, 14 * ms);
                QCOMPARE(c.steps, size_t(2));
                QCOMPARE(c.stepMeanNs, 7 * ms);
            } else {
                QVERIFY2(c.utilization > 0.8, std::to_string(c.utilization).c_str());
                QCOMPARE(c.steps, size_t(6));
                QCOMPARE(c.stepMeanNs, 2 * ms);
                QCOMPARE(c.warmupNs, int64_t(0));
                QCOMPARE(c.wholeNs, 12 * ms);
                QCOMPARE(c.utilization, c.windowUtilization);
            }
        }
        // The per-rank summary: one rank, the latest steady capture.
        const std::vector<analysis::RankInput> in = workspace::rankInputs(ws);
        QCOMPARE(in.size(), size_t(1));
        QCOMPARE(in.front().trace, ws.traces[s.captures[3].trace].entry.trace.get());
        QVERIFY(endsWith(in.front().path, "worker0.4000.pt.trace.json"));
        const analysis::CrossRankResult cr = analysis::analyzeRanks(in);
        QCOMPARE(cr.ranks.size(), size_t(1));
        QVERIFY(!saysGivenTwice(cr));
        QVERIFY(cr.ranks.front().utilization > 0.8);
        // Rank by rank without holding the traces (analyze --ranks/--summary, the GUI's many
        // ranks): the same rank, series and representative.
        auto set = workspace::digestRanks(dir.path().toStdString());
        QVERIFY2(set, set ? "" : set.error().message.c_str());
        QCOMPARE(set.value().digests.size(), size_t(1));
        QVERIFY(endsWith(set.value().digests.front().path, "worker0.4000.pt.trace.json"));
        QVERIFY(set.value().digests.front().utilization > 0.8);
        QCOMPARE(set.value().series.size(), size_t(1));
        QCOMPARE(phases(set.value().series.front()), std::string("WWSS"));
        QCOMPARE(set.value().series.front().representative, size_t(3));
        QVERIFY(!saysGivenTwice(analysis::analyzeRanks(set.value().digests)));
    }

    // Two workers of two captures each (warm-up, then steady), ranks from distributedInfo:
    // two ranks, each summarised by its steady capture.
    void twoWorkersTwoCapturesEach() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "host_a", "WS", 1, 2);
        test::writeCaptures(dir.path().toStdString(), "host_b", "WS", 0, 2);
        const workspace::Workspace ws = load(dir);
        QCOMPARE(ws.traces.size(), size_t(4));
        QCOMPARE(ws.series.size(), size_t(2));
        QVERIFY(workspace::hasSeries(ws.series));
        for (int r = 0; r < 2; ++r) {
            const workspace::RankSeries& s = ws.series[size_t(r)];
            QCOMPARE(s.rank, r);
            QCOMPARE(s.label, std::string(r == 0 ? "host_b" : "host_a"));
            QCOMPARE(phases(s), std::string("WS"));
            QCOMPARE(s.representative, size_t(1));
        }
        const std::vector<analysis::RankInput> in = workspace::rankInputs(ws);
        QCOMPARE(in.size(), size_t(2));
        QCOMPARE(in[0].rank, 0);
        QCOMPARE(in[1].rank, 1);
        QVERIFY(endsWith(in[0].path, "host_b.2000.pt.trace.json"));
        QVERIFY(endsWith(in[1].path, "host_a.2000.pt.trace.json"));
        const analysis::CrossRankResult cr = analysis::analyzeRanks(in);
        QCOMPARE(cr.ranks.size(), size_t(2));
        QVERIFY(!saysGivenTwice(cr));
        for (const analysis::RankSummary& rs : cr.ranks) QVERIFY(rs.utilization > 0.8);
        auto set = workspace::digestRanks(dir.path().toStdString());
        QVERIFY(set);
        QCOMPARE(set.value().digests.size(), size_t(2));
        QVERIFY(endsWith(set.value().digests[0].path, "host_b.2000.pt.trace.json"));
        QVERIFY(endsWith(set.value().digests[1].path, "host_a.2000.pt.trace.json"));
        QCOMPARE(set.value().series.size(), size_t(2));
    }

    // Without distributedInfo the workers' positions are the ranks, also rank by rank.
    void workersWithoutDistributedInfo() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "host_a", "WSS");
        test::writeCaptures(dir.path().toStdString(), "host_b", "SW");
        auto set = workspace::digestRanks(dir.path().toStdString());
        QVERIFY(set);
        QCOMPARE(set.value().digests.size(), size_t(2));
        QCOMPARE(set.value().digests[0].rank, 0);
        QCOMPARE(set.value().digests[1].rank, 1);
        QVERIFY(endsWith(set.value().digests[0].path, "host_a.3000.pt.trace.json"));
        // host_b: steady, then warm-up (a new process group, say): the steady one.
        QVERIFY(endsWith(set.value().digests[1].path, "host_b.1000.pt.trace.json"));
        const workspace::Workspace ws = load(dir);
        QCOMPARE(ws.series.size(), size_t(2));
        QCOMPARE(phases(ws.series[0]), std::string("WSS"));
        QCOMPARE(phases(ws.series[1]), std::string("SW"));
        QCOMPARE(ws.series[1].representative, size_t(0));
    }

    // Warm-up set apart inside a capture: the capture is warm-up when that is at least half
    // of it, steady otherwise; its figures are of the whole capture, and the analysed (steady)
    // part's utilisation is kept for the summaries.
    void warmUpSetApartIsLabelledByItsShare() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "worker0", "Pp");
        const workspace::Workspace ws = load(dir);
        QCOMPARE(ws.series.size(), size_t(1));
        const workspace::RankSeries& s = ws.series.front();
        QCOMPARE(phases(s), std::string("WS"));
        QCOMPARE(s.representative, size_t(1));
        const workspace::Capture& most = s.captures[0];
        QCOMPARE(most.warmupNs, 9 * ms);
        QCOMPARE(most.wholeNs, 13 * ms);
        QCOMPARE(most.windowNs, 4 * ms);
        QCOMPARE(most.steps, size_t(3));
        QCOMPARE(most.stepMeanNs, 13 * ms / 3);
        // 0.1 ms of kernels in the warm-up step, 1.8 ms in each steady one.
        QVERIFY2(std::abs(most.utilization - 3.7 / 13) < 0.01,
                 std::to_string(most.utilization).c_str());
        QVERIFY2(std::abs(most.windowUtilization - 0.9) < 0.01,
                 std::to_string(most.windowUtilization).c_str());
        const workspace::Capture& little = s.captures[1];
        QCOMPARE(little.warmupNs, 3 * ms);
        QCOMPARE(little.wholeNs, 15 * ms);
        QCOMPARE(little.steps, size_t(7));
        QVERIFY(little.utilization < little.windowUtilization);
        QVERIFY(endsWith(workspace::rankInputs(ws).front().path, "worker0.2000.pt.trace.json"));
    }

    // A rank with warm-up captures only is represented by its latest, marked warm-up.
    void onlyWarmUpTakesTheLatest() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "worker0", "WW");
        const workspace::Workspace ws = load(dir);
        QCOMPARE(ws.series.size(), size_t(1));
        QCOMPARE(phases(ws.series.front()), std::string("WW"));
        QCOMPARE(ws.series.front().representative, size_t(1));
        QVERIFY(ws.series.front().onlyWarmUp());
        QVERIFY(endsWith(workspace::rankInputs(ws).front().path, "worker0.2000.pt.trace.json"));
    }

    // Several ranks with one capture each: every trace, in session order, as before — the same
    // cross-rank analysis as all the traces given as ranks.
    void oneCapturePerRankStaysTheSame() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "host_a", "S");
        test::writeCaptures(dir.path().toStdString(), "host_b", "W");
        test::writeCaptures(dir.path().toStdString(), "host_c", "S");
        const workspace::Workspace ws = load(dir);
        QCOMPARE(ws.series.size(), size_t(3));
        QVERIFY(!workspace::hasSeries(ws.series));
        const std::vector<analysis::RankInput> in = workspace::rankInputs(ws);
        QCOMPARE(in.size(), ws.traces.size());
        std::vector<analysis::RankInput> all;
        for (const workspace::AnalysedTrace& at : ws.traces)
            all.push_back({at.entry.rank, at.entry.label, at.entry.trace.get(), at.analysis.get(),
                           workspace::absoluteTracePath(at.entry.path)});
        for (size_t i = 0; i < in.size(); ++i) {
            QCOMPARE(in[i].rank, all[i].rank);
            QCOMPARE(in[i].label, all[i].label);
            QCOMPARE(in[i].trace, all[i].trace);
            QCOMPARE(in[i].path, all[i].path);
        }
        QCOMPARE(ws.series[1].captures.front().phase, CapturePhase::WarmUp); // still a rank
        const analysis::CrossRankResult a = analysis::analyzeRanks(in),
                                        b = analysis::analyzeRanks(all);
        QCOMPARE(a.ranks.size(), b.ranks.size());
        for (size_t i = 0; i < a.ranks.size(); ++i) {
            QCOMPARE(a.ranks[i].rank, b.ranks[i].rank);
            QCOMPARE(a.ranks[i].windowNs, b.ranks[i].windowNs);
            QCOMPARE(a.ranks[i].utilization, b.ranks[i].utilization);
        }
        QCOMPARE(a.notes, b.notes);
    }

    // One file: one rank, one capture; not analysed (`info`): no series.
    void oneFileAndImportOnly() {
        QTemporaryDir dir;
        test::writeCaptures(dir.path().toStdString(), "worker0", "S");
        auto one =
            workspace::loadAndAnalyse(dir.filePath("worker0.1000.pt.trace.json").toStdString());
        QVERIFY(one);
        QCOMPARE(one.value().series.size(), size_t(1));
        QCOMPARE(one.value().series.front().captures.size(), size_t(1));
        workspace::LoadOptions o;
        o.analyse = false;
        auto bare = workspace::loadAndAnalyse(dir.path().toStdString(), o);
        QVERIFY(bare);
        QVERIFY(bare.value().series.empty());
    }
};

QTEST_GUILESS_MAIN(TestCaptureSeries)
#include "test_capture_series.moc"
