// The one loader: a path imported and every trace analysed (in parallel for folders), the
// timeline index beside the analysis, progress, cancel and errors; open() with the ranks
// compared, many ranks as digests plus one rank's detail, and the memory budget by default.
#include "test_support.h"

#include "stallscope/importers/memory_budget.h"
#include "stallscope/workspace/memory_budget.h"
#include "stallscope/workspace/rank_summary.h"
#include "stallscope/workspace/workspace.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cstdlib>
#include <mutex>

using namespace stallscope;

namespace {
std::string dataTrace(const char* name) {
    return (std::filesystem::path(STALLSCOPE_TEST_DATA_DIR) / "traces" / name).string();
}

/// What an analysis says, as text: enough to tell two analyses apart.
std::string fingerprint(const analysis::AnalysisResult& a) {
    std::string s;
    for (const auto& f : a.findings) s += f.id + ":" + std::to_string(f.savingNs) + ";";
    for (const auto& d : a.devices)
        s += std::to_string(d.device) + "=" + std::to_string(d.busyNs) + "/" +
             std::to_string(d.idleNs) + ";";
    return s;
}
} // namespace

class TestWorkspace : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Progressive open: parts of the trace before the whole, each growing, each a finished
    // trace analysed only over the part whose CPU and GPU work are both read.
    void progressiveOpenPublishesThePartRead() {
        const auto path = test::sharedTraces() / "hta/df_index_resolver/df_index_resolver.json.gz";
        if (!std::filesystem::exists(path)) QSKIP("../shared/traces is absent");
        struct Part {
            uint64_t entries;
            double fraction;
            bool formatSaysPartly, analysed, windowIsReadPart, noteWhenNotAnalysed;
        };
        std::vector<Part> parts;
        workspace::LoadOptions o;
        o.partialFirstMs = 1;
        o.timelineIndex = true;
        o.partial = [&](workspace::Workspace&& ws) {
            QVERIFY(ws.partial);
            const double fraction = ws.readFraction;
            QCOMPARE(ws.traces.size(), size_t(1));
            const workspace::AnalysedTrace& at = ws.traces.front();
            const model::Trace& t = *at.entry.trace;
            const auto end = workspace::partialReadEnd(t);
            Part p{t.importStats().entries,
                   fraction,
                   t.metadata().formatName.find("partly read") != std::string::npos,
                   at.analysis && at.analysis->window.description != "no GPU work read yet",
                   at.analysis && end && at.analysis->window.endNs == *end &&
                       at.analysis->window.description.rfind("the part read (its first ", 0) == 0,
                   false};
            // Not analysed yet: an empty analysis says so, and a note.
            p.noteWhenNotAnalysed =
                p.analysed || (at.analysis && !ws.session.notes.empty() &&
                               ws.session.notes.front().find("no GPU work read yet") == 0);
            // The timeline's index comes with the part, built from its events.
            QVERIFY(at.timeline && at.timeline->lanes.size() == t.tracks().size());
            parts.push_back(p);
        };
        auto r = workspace::loadAndAnalyse(path.string(), o);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const model::Trace& whole = *r.value().traces.front().entry.trace;
        QVERIFY(whole.metadata().formatName.find("partly") == std::string::npos);
        QVERIFY(!parts.empty());
        for (size_t i = 0; i < parts.size(); ++i) {
            QVERIFY(parts[i].entries > 0 && parts[i].entries < whole.importStats().entries);
            QVERIFY(parts[i].fraction > 0 && parts[i].fraction <= 0.76);
            QVERIFY(parts[i].formatSaysPartly);
            QVERIFY(!parts[i].analysed || parts[i].windowIsReadPart);
            QVERIFY(parts[i].noteWhenNotAnalysed);
            if (i) QVERIFY(parts[i].entries >= 2 * parts[i - 1].entries);
        }
    }

    // Near the memory budget a copy of the part read would pass it together with the whole
    // trace: only copies that leave room come (here: a quarter of the events at most; the
    // whole is projected from the share read, roughly).
    void noPartialCopyPastTheMemoryBudget() {
        const auto gz = test::sharedTraces() / "hta/df_index_resolver/df_index_resolver.json.gz";
        if (!std::filesystem::exists(gz)) QSKIP("../shared/traces is absent");
        // A plain file: the share of it read projects the whole model's size (a .gz's
        // compressed share does so only roughly).
        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("trace.json").toStdString();
        QVERIFY(std::system(("gzip -dc '" + gz.string() + "' > '" + path.string() + "'").c_str()) ==
                0);
        workspace::LoadOptions first;
        first.analyse = false;
        auto whole = workspace::loadAndAnalyse(path.string(), first);
        QVERIFY(whole);
        const uint64_t entries = whole.value().traces.front().entry.trace->importStats().entries;
        workspace::LoadOptions o;
        o.analyse = false;
        o.partialFirstMs = 1;
        o.memoryBudgetBytes = entries * importers::kPeakBytesPerEvent * 102 / 100;
        std::vector<uint64_t> parts;
        o.partial = [&](workspace::Workspace&& ws) {
            parts.push_back(ws.traces.front().entry.trace->importStats().entries);
        };
        QVERIFY(workspace::loadAndAnalyse(path.string(), o));
        for (const uint64_t n : parts) QVERIFY2(n * 4 <= entries, std::to_string(n).c_str());
        // With room, the copies come as usual.
        parts.clear();
        o.memoryBudgetBytes = entries * importers::kPeakBytesPerEvent * 4;
        QVERIFY(workspace::loadAndAnalyse(path.string(), o));
        QVERIFY(!parts.empty() && parts.back() * 4 > entries);
    }

    void cancelDuringAProgressiveOpen() {
        const auto path = test::sharedTraces() / "hta/df_index_resolver/df_index_resolver.json.gz";
        if (!std::filesystem::exists(path)) QSKIP("../shared/traces is absent");
        std::atomic<bool> cancel{false};
        int parts = 0;
        workspace::LoadOptions o;
        o.cancel = &cancel;
        o.partialFirstMs = 1;
        o.partial = [&](workspace::Workspace&&) {
            ++parts;
            cancel = true;
        };
        auto r = workspace::loadAndAnalyse(path.string(), o);
        QVERIFY(!r);
        QCOMPARE(r.error().kind, base::ErrorKind::Cancelled);
        QCOMPARE(parts, 1);
    }

    // The read part's end: the earlier of the last GPU and the last CPU activity; none
    // without GPU work.
    void partialReadEndIsTheEarlierOfCpuAndGpu() {
        auto r = workspace::loadAndAnalyse(dataTrace("dataloader_stall.json"), {});
        QVERIFY(r);
        const model::Trace& t = *r.value().traces.front().entry.trace;
        int64_t gpu = INT64_MIN, cpu = INT64_MIN;
        for (const model::TrackInfo& tr : t.tracks())
            for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
                (tr.kind == model::TrackKind::GpuStream ? gpu : cpu) =
                    std::max(tr.kind == model::TrackKind::GpuStream ? gpu : cpu, t.slices().end(i));
        QVERIFY(gpu != INT64_MIN && cpu != INT64_MIN);
        QCOMPARE(workspace::partialReadEnd(t), std::optional<int64_t>(std::min(gpu, cpu)));
        const auto cpuOnly =
            test::sharedTraces() / "hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz";
        if (std::filesystem::exists(cpuOnly)) {
            auto c = workspace::loadAndAnalyse(cpuOnly.string(), {});
            QVERIFY(c);
            QVERIFY(!workspace::partialReadEnd(*c.value().traces.front().entry.trace));
        }
    }

    void fileIsImportedAndAnalysed() {
        std::vector<double> fractions;
        workspace::LoadOptions o;
        o.progress = [&](double f, const std::string&) { fractions.push_back(f); };
        auto r = workspace::loadAndAnalyse(dataTrace("dataloader_stall.json"), o);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const workspace::Workspace& ws = r.value();
        QCOMPARE(ws.traces.size(), size_t(1));
        QCOMPARE(ws.session.traces.size(), size_t(1));
        QVERIFY(ws.traces[0].analysis);
        QVERIFY(ws.traces[0].entry.trace == ws.session.traces[0].trace);
        QCOMPARE(ws.traces[0].analysis->findings.front().id, std::string("data_loading/gpu0"));
        QVERIFY(!fractions.empty());
        QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
        QCOMPARE(fractions.back(), 1.0);
        QVERIFY(ws.seconds > 0);
    }

    void importOnly() {
        workspace::LoadOptions o;
        o.analyse = false;
        auto r = workspace::loadAndAnalyse(dataTrace("cpu_only.json"), o);
        QVERIFY(r);
        QVERIFY(!r.value().traces[0].analysis);
    }

    void timelineIndexBuiltBesideTheAnalysis() {
        workspace::LoadOptions o;
        auto plain = workspace::loadAndAnalyse(dataTrace("launch_bound_steps.json"), o);
        QVERIFY(plain);
        QVERIFY(!plain.value().traces[0].timeline); // only when asked
        o.timelineIndex = true;
        auto r = workspace::loadAndAnalyse(dataTrace("launch_bound_steps.json"), o);
        QVERIFY(r);
        const workspace::AnalysedTrace& at = r.value().traces[0];
        QVERIFY(at.timeline && at.analysis);
        QCOMPARE(at.timeline->lanes.size(), at.entry.trace->tracks().size());
    }

    void errorsAreTheImportersAndCancelIsSaid() {
        auto missing = workspace::loadAndAnalyse(dataTrace("no-such-trace.json"));
        QVERIFY(!missing);
        QCOMPARE(missing.error().kind, base::ErrorKind::NotFound);
        std::atomic<bool> cancel{true};
        workspace::LoadOptions o;
        o.cancel = &cancel;
        auto r = workspace::loadAndAnalyse(dataTrace("dataloader_stall.json"), o);
        QVERIFY(!r);
        QCOMPARE(r.error().kind, base::ErrorKind::Cancelled);
    }

    void foldersAreAnalysedInParallelWithTheSameAnswers() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const std::string folder = (test::sharedTraces() / "param-dlrm-8rank").string();
        workspace::LoadOptions serial;
        serial.analysisThreads = 1;
        workspace::LoadOptions parallel;
        parallel.analysisThreads = 4;
        std::mutex m;
        std::vector<double> fractions;
        parallel.progress = [&](double f, const std::string&) {
            const std::lock_guard<std::mutex> lock(m);
            fractions.push_back(f);
        };
        auto a = workspace::loadAndAnalyse(folder, serial);
        auto b = workspace::loadAndAnalyse(folder, parallel);
        QVERIFY2(a && b, "the DLRM folder loads");
        QCOMPARE(a.value().traces.size(), size_t(8));
        QCOMPARE(b.value().traces.size(), size_t(8));
        for (size_t i = 0; i < 8; ++i) {
            QCOMPARE(a.value().traces[i].entry.path,
                     b.value().traces[i].entry.path); // session order kept
            QCOMPARE(fingerprint(*a.value().traces[i].analysis),
                     fingerprint(*b.value().traces[i].analysis));
        }
        QVERIFY(std::is_sorted(fractions.begin(), fractions.end()));
        QCOMPARE(fractions.back(), 1.0);
    }

    // The budget is the machine's unless the caller sets one (0: none).
    void theMachinesBudgetByDefault() {
        workspace::LoadOptions o;
        QCOMPARE(o.memoryBudgetBytes, workspace::kMachineMemoryBudget);
        qputenv("STALLSCOPE_MEMORY_BUDGET", "64M");
        QCOMPARE(workspace::memoryBudgetOf(o), uint64_t(64) << 20);
        // A 64 MiB budget refuses what needs more, through the default options.
        o.memoryBudgetBytes = 1000;
        QCOMPARE(workspace::memoryBudgetOf(o), uint64_t(1000));
        auto tight = workspace::open(dataTrace("launch_bound_steps.json"), o);
        QVERIFY(!tight);
        QCOMPARE(tight.error().kind, base::ErrorKind::OverMemoryBudget);
        o.memoryBudgetBytes = 0;
        QCOMPARE(workspace::memoryBudgetOf(o), uint64_t(0));
        qunsetenv("STALLSCOPE_MEMORY_BUDGET");
    }

    // open(): the ranks of a folder compared; above detailRanks, every rank as a digest and
    // the straggler's trace as the detail, another rank's on demand; the same cross-rank
    // answer either way.
    void openComparesRanksAndHoldsFewTraces() {
        const auto folder = test::sharedTraces() / "param-dlrm-8rank";
        if (!std::filesystem::exists(folder)) QSKIP("../shared/traces is absent");
        workspace::LoadOptions o;
        auto all = workspace::open(folder.string(), o);
        QVERIFY2(all, all ? "" : all.error().message.c_str());
        const workspace::Workspace& ws = all.value();
        QVERIFY(!ws.manyRanks);
        QCOMPARE(ws.traces.size(), size_t(8));
        QCOMPARE(ws.ranks.ranks.size(), size_t(8));
        QVERIFY(ws.ranks.straggler >= 0);
        o.detailRanks = 4;
        auto many = workspace::open(folder.string(), o);
        QVERIFY2(many, many ? "" : many.error().message.c_str());
        const workspace::Workspace& m = many.value();
        QVERIFY(m.manyRanks);
        QCOMPARE(m.ranks.ranks.size(), size_t(8));
        QCOMPARE(m.ranks.straggler, ws.ranks.straggler);
        QCOMPARE(m.traces.size(), size_t(1));
        QCOMPARE(m.traces.front().entry.rank, ws.ranks.straggler);
        QCOMPARE(m.traceOfRank(ws.ranks.straggler), 0);
        const int32_t other = ws.ranks.straggler == 0 ? 1 : 0;
        QCOMPARE(m.traceOfRank(other), -1);
        auto detail = workspace::openRank(m, other, o);
        QVERIFY2(detail, detail ? "" : detail.error().message.c_str());
        QCOMPARE(detail.value().traces.size(), size_t(1));
        QCOMPARE(detail.value().traces.front().entry.rank, other);
        QCOMPARE(detail.value().ranks.ranks.size(), size_t(8));
        QCOMPARE(fingerprint(*detail.value().traces.front().analysis),
                 fingerprint(*ws.traces[size_t(ws.traceOfRank(other))].analysis));
        QVERIFY(!workspace::openRank(m, 99, o));
        // kEveryRank: every trace held, as the CLI asks.
        o.detailRanks = workspace::kEveryRank;
        auto every = workspace::open(folder.string(), o);
        QVERIFY(every && !every.value().manyRanks && every.value().traces.size() == 8);
        // Two paths' ranks together (`analyze A B`), and one path's: the loader's comparison.
        std::vector<workspace::Workspace> opened;
        opened.push_back(std::move(every.value()));
        QCOMPARE(workspace::crossRank(opened).straggler, opened.front().ranks.straggler);
        opened.push_back(opened.front());
        std::vector<analysis::RankInput> both;
        for (const workspace::Workspace& w : opened)
            for (const analysis::RankInput& r : workspace::rankInputs(w)) both.push_back(r);
        const analysis::CrossRankResult expected = analysis::analyzeRanks(both);
        const analysis::CrossRankResult got = workspace::crossRank(opened);
        QCOMPARE(got.ranks.size(), expected.ranks.size());
        QCOMPARE(got.straggler, expected.straggler);
        QCOMPARE(got.notes, expected.notes);
    }

    // A representative's label names rank, worker and capture only where there are several.
    void representativeLabels() {
        workspace::LoadOptions o;
        auto one = workspace::open(dataTrace("launch_bound_steps.json"), o);
        QVERIFY(one);
        QCOMPARE(one.value().series.size(), size_t(1));
        QVERIFY(workspace::representativeLabel(one.value(), one.value().series.front()).empty());
        QVERIFY(one.value().representative(0) == &one.value().traces.front());
        QVERIFY(one.value().representative(1) == nullptr);
    }
};

QTEST_GUILESS_MAIN(TestWorkspace)
#include "test_workspace.moc"
