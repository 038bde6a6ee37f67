// Comparisons and the regression gate: ResNet-50 with num_workers=0 (before) and 4 (after)
// is the known answer: the data-loading stall is fixed and the step time drops 20%; the
// reverse is a regression. Inline traces pin the arithmetic.
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/regression.h"
#include "stallscope/analysis/run_diff.h"
#include "stallscope/base/text_format.h"
#include "stallscope/importers/importer.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/report.h"

#include <QTest>

using namespace stallscope;
using namespace stallscope::reports;
using stallscope::analysis::checkRegression;
using stallscope::analysis::RegressionCheck;
using test::TraceText;

namespace {

ReportInput load(const std::filesystem::path& path) {
    ReportInput in;
    in.path = path.string();
    auto r = importers::importFile(path);
    if (!r) return in;
    in.trace = r.value();
    in.analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*in.trace));
    return in;
}

/// Four steps of `stepUs` with `busyUs` of GPU work at the end of each.
ReportInput steps(int64_t stepUs, int64_t busyUs) {
    TraceText t;
    for (int s = 0; s < 4; ++s) {
        const int64_t b = s * stepUs;
        t.step(s, b, stepUs);
        t.launch("k", b + stepUs - busyUs - 10, 5, b + stepUs - busyUs, busyUs);
    }
    ReportInput in;
    in.path = "inline.json";
    in.trace = t.load();
    in.analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*in.trace));
    return in;
}

} // namespace

class TestReportCompare : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void regressionArithmetic() {
        const ReportInput fast = steps(1000, 800), slow = steps(1100, 800);
        const RegressionCheck up = checkRegression(*fast.analysis, *slow.analysis, 5);
        QVERIFY(up.regressed);
        QVERIFY(std::abs(up.stepTimeChangePct - 10.0) < 0.01);
        QVERIFY(up.reason.find("step time regressed +10.0%") != std::string::npos);
        QVERIFY(!checkRegression(*fast.analysis, *slow.analysis, 10.5).regressed);  // +10% steps, +7.3 pts idle
        const RegressionCheck down = checkRegression(*slow.analysis, *fast.analysis, 5);
        QVERIFY(!down.regressed);
        QVERIFY(down.stepTimeChangePct < 0);
        // Same step time, more idle: the idle share gate.
        const ReportInput busy = steps(1000, 900), idle = steps(1000, 700);
        const RegressionCheck more = checkRegression(*busy.analysis, *idle.analysis, 5);
        QVERIFY(more.regressed);
        QVERIFY(std::abs(more.stepTimeChangePct) < 0.01);
        QVERIFY(more.idleShareChangePts > 15 && more.idleShareChangePts < 25);
        QVERIFY(more.reason.find("idle share") != std::string::npos);
    }

    void resnetWorkersComparison() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto dir = test::sharedTraces() / "kineto-tb-plugin";
        const ReportInput before = load(dir / "resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
        const ReportInput after = load(dir / "resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz");
        QVERIFY(before.trace && after.trace);
        const RegressionCheck better = checkRegression(*before.analysis, *after.analysis, 5);
        QVERIFY(!better.regressed);
        QVERIFY(better.stepTimeChangePct < -15);   // 174.8 ms -> 139.7 ms
        QVERIFY(better.idleShareChangePts < -10);  // 43.4% -> 27.4%
        const RegressionCheck worse = checkRegression(*after.analysis, *before.analysis, 5);
        QVERIFY(worse.regressed);
        QVERIFY(worse.reason.find("step time") != std::string::npos);

        const ReportDocument doc = buildComparison(before, after);
        const std::string md = renderMarkdown(doc);
        // The data-loading finding is fixed; the CPU-dispatch one is in both runs.
        const size_t dl = md.find("GPU idle while the input pipeline prepares batches");
        QVERIFY(dl != std::string::npos);
        QVERIFY(md.find("**fixed**", dl) < md.find('\n', dl));
        const size_t host = md.find("The GPU waits for the CPU");
        QVERIFY(host != std::string::npos);
        QVERIFY(md.find("**new**", host) > md.find('\n', host));
        QVERIFY(md.find("**fixed**", host) > md.find('\n', host));
        QVERIFY(md.find("\\-20.6%") != std::string::npos);
        const std::string html = renderHtml(doc);
        QVERIFY(html.find("class=\"good\">-20.6%") != std::string::npos); // shorter steps are good
        QVERIFY(html.find("<span class=\"good\">fixed</span>") != std::string::npos);

        // What changed in the work: the noise, the replay's prediction beside the measured
        // step, the aligned tables and the differential flame graph (analysis/run_diff.h).
        const analysis::RunDiff d =
            analysis::diffRuns(*before.trace, *before.analysis, *after.trace, *after.analysis, {});
        QVERIFY(md.find("## What changed in the work") != std::string::npos);
        QVERIFY(md.find("beyond the step-to-step noise") != std::string::npos);
        QVERIFY(!d.predictions.empty());
        const analysis::Prediction& p = d.predictions.front();
        auto mdDuration = [](int64_t ns) { return escapeMarkdown(base::formatDuration(ns)); };
        const size_t row =
            md.find("| `data_loading/gpu0` | data loading in workers | " + mdDuration(p.beforeNs) +
                    " | " + mdDuration(p.predictedNs) + " | " + mdDuration(p.afterNs) + " |");
        QVERIFY2(row != std::string::npos, md.c_str());
        const size_t ops = md.find("### Operators"), kernels = md.find("### Kernels");
        QVERIFY(ops != std::string::npos && kernels > ops);
        const size_t loader =
            md.find("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", ops);
        QVERIFY(loader < kernels);
        QVERIFY(md.find("removed", loader) < md.find('\n', loader));
        QVERIFY(md.find("by family under their operator", kernels) != std::string::npos);
        const size_t flame = html.find("GPU time by launching stack, per step: " +
                                       base::formatDuration(d.flame.nodes[0].beforeNs) + " -&gt; " +
                                       base::formatDuration(d.flame.nodes[0].afterNs));
        QVERIFY(flame != std::string::npos);
        QVERIFY(html.find("<title>ProfilerStep#*: ", flame) != std::string::npos);
        QVERIFY(html.find("<g", flame) == std::string::npos); // only the tags the reports write
        // The waterfall of the idle time: each cause's change per step, largest first.
        QVERIFY(html.find("GPU 0: what changed in the idle time a step") != std::string::npos);
        const analysis::CauseChange& top = d.devices.at(0).causes.at(0);
        QCOMPARE(std::string(analysis::idleCauseName(top.cause)), std::string("data_loading"));
        QVERIFY(html.find("-" + base::formatDuration(top.beforeNs - top.afterNs) + "  (" +
                          base::formatDuration(top.beforeNs) + " -&gt; " +
                          base::formatDuration(top.afterNs) + ")") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestReportCompare)
#include "test_report_compare.moc"
