// The analysis on the real traces: the TensorBoard plugin's and Holistic Trace Analysis'
// numbers as oracles, the known answers of the ResNet-50 pair, invariants on every trace,
// and golden findings files (STALLSCOPE_REGEN_GOLDEN=1 rewrites them).
#include "real_traces.h"
#include "test_support.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/analysis/gpu_metrics.h"
#include "stallscope/importers/importer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <sstream>

using namespace stallscope;
using namespace stallscope::analysis;
namespace fs = std::filesystem;

namespace {

std::shared_ptr<const model::Trace> load(const std::string& rel) {
    auto r = importers::importFile(test::sharedTraces() / rel);
    return r ? r.value() : nullptr;
}

const Finding* find(const AnalysisResult& r, FindingKind k) {
    for (const auto& f : r.findings)
        if (f.kind == k) return &f;
    return nullptr;
}

std::vector<fs::path> realTraces() {
    return test::realTraceFiles();
}

std::string goldenDump(const model::Trace& t, const AnalysisResult& r, const std::string& rel) {
    std::ostringstream o;
    o << "file: " << rel << "\nwindow: " << r.window.description << " [" << r.window.startNs << ", " << r.window.endNs
      << "] " << r.window.length() << " ns\n";
    o << "steps: " << r.steps.size() << ", mean " << r.stepTimes.meanNs << " ns\n";
    for (const auto& d : r.devices) {
        char u[64];
        std::snprintf(u, sizeof u, "%.4f", d.utilization);
        o << "device " << d.device << ": utilization " << u << ", busy " << d.busyNs << ", idle " << d.idleNs << "\n";
        for (size_t k = 0; k < kIdleCauseCount; ++k)
            if (d.idle.causes[k].ns)
                o << "  " << idleCauseName(static_cast<IdleCause>(k)) << ": " << d.idle.causes[k].ns << " ns in "
                  << d.idle.causes[k].gaps << " gaps\n";
    }
    for (const auto& f : r.findings) {
        char s[64];
        std::snprintf(s, sizeof s, "%.2f%%", f.savingShare * 100);
        o << "finding " << f.id << " [" << severityName(f.severity) << "] saves " << f.savingNs << " ns (" << s
          << "): " << f.title << "\n";
        o << "  ranges " << f.ranges.size() << ", evidence " << f.evidence.size();
        if (!f.evidence.empty()) o << ", first `" << t.str(t.slices().name[f.evidence.front().index()]).substr(0, 60) << "`";
        o << "\n";
    }
    if (r.hta.valid)
        o << "hta: idle " << r.hta.idleNs << ", compute " << r.hta.computeNs << ", non-compute " << r.hta.nonComputeNs
          << ", span " << r.hta.spanNs << "\n";
    return o.str();
}

/// Lines at the top of a golden findings file that mark today's findings as wrong:
///   known-wrong <finding id>: why (the analysis makes it, and should not)
///   known-missing <finding kind>: why (the analysis should make it, and does not)
/// They are kept when the goldens are regenerated, and compared apart from the dump.
struct KnownWrong {
    std::string lines;                       // the marker lines as written
    std::string rest;                        // the golden dump without them
    std::vector<std::string> wrong, missing;
};

KnownWrong readKnownWrong(const fs::path& golden) {
    KnownWrong k;
    std::istringstream in(fs::exists(golden) ? test::readFile(golden) : std::string());
    std::string line;
    while (std::getline(in, line)) {
        bool marker = false;
        for (const auto& [prefix, list] : {std::pair{std::string("known-wrong "), &k.wrong},
                                           std::pair{std::string("known-missing "), &k.missing}}) {
            if (line.rfind(prefix, 0) != 0) continue;
            list->push_back(line.substr(prefix.size(), line.find(':') - prefix.size()));
            marker = true;
        }
        (marker ? k.lines : k.rest) += line + "\n";
    }
    return k;
}

} // namespace

class TestAnalysisReal : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { STALLSCOPE_REQUIRE_SHARED_TRACES(); }

    void tensorBoardPluginOracle() {
        // The plugin's expected output for test_gpu_metrics_input.json: "GPU 0 Utilization"
        // counters per bucket of the profiler span (bucket 10^k us, at most 100 buckets, the
        // last one absorbing the remainder) and "Est. SM Efficiency" ranges. The plugin's own
        // test feeds these values in by hand, in percent for utilisation and scaled by 10 for
        // SM efficiency; the scale factors are exact for every bucket and range.
        auto t = load("kineto-tb-plugin/test_gpu_metrics_input.json");
        QVERIFY(t);
        QFile f(QString::fromStdString((test::sharedTraces() / "kineto-tb-plugin/test_gpu_metrics_expected.json").string()));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray events = QJsonDocument::fromJson(f.readAll()).object()["traceEvents"].toArray();
        std::vector<std::pair<int64_t, double>> util, sm;
        for (const auto& v : events) {
            const QJsonObject e = v.toObject();
            if (e["ph"].toString() != "C") continue;
            const int64_t ts = static_cast<int64_t>(e["ts"].toDouble()) * 1000;
            if (e["name"].toString() == "GPU 0 Utilization") util.emplace_back(ts, e["args"].toObject()["GPU Utilization"].toDouble());
            else sm.emplace_back(ts, e["args"].toObject()["Est. SM Efficiency"].toDouble());
        }
        // Profiler span = the "PyTorch Profiler (0)" slice.
        int64_t lo = 0, hi = 0;
        for (uint32_t i = 0; i < t->slices().size(); ++i)
            if (t->str(t->slices().name[i]) == "PyTorch Profiler (0)")
                lo = t->slices().start[i], hi = lo + t->slices().dur[i];
        QVERIFY(hi > lo);
        int64_t bucket = 1000;  // ns; grows by 10x until there are at most 100 buckets
        while ((hi - lo) / bucket > 100) bucket *= 10;
        const auto buckets = bucketize(gpuBusyIntervals(*t, 0, true), lo, hi, bucket, true);
        // Expected: two axis-scaling points (1, 0) at the start, one value per bucket, a final 0.
        QCOMPARE(util.size(), buckets.size() + 3);
        for (size_t i = 0; i < buckets.size(); ++i) {
            QCOMPARE(util[i + 2].first, lo + int64_t(i) * bucket);
            QVERIFY2(std::abs(util[i + 2].second - 100 * buckets[i]) < 1e-9,
                     qPrintable(QString("bucket %1: %2 vs %3").arg(i).arg(util[i + 2].second).arg(100 * buckets[i])));
        }
        QCOMPARE(util.back().first, hi);
        const auto ranges = smEfficiencyRanges(*t, 0);
        QCOMPARE(sm.size(), 2 * ranges.size() + 2);
        for (size_t i = 0; i < ranges.size(); ++i) {
            QCOMPARE(sm[2 + 2 * i].first, ranges[i].start);
            QVERIFY(std::abs(sm[2 + 2 * i].second - 10 * ranges[i].value) < 1e-6);  // blocks/SM kept as float32
            QCOMPARE(sm[3 + 2 * i].first, ranges[i].end);
            QCOMPARE(sm[3 + 2 * i].second, 0.0);
        }
    }

    void holisticTraceAnalysisOracle_data() {
        QTest::addColumn<QString>("trace");
        QTest::addColumn<qint64>("idle");
        QTest::addColumn<qint64>("compute");
        QTest::addColumn<qint64>("nonCompute");
        QTest::addColumn<qint64>("span");
        QTest::addColumn<qint64>("hostWait7");
        QTest::addColumn<qint64>("kernelWait7");
        QTest::addColumn<qint64>("other7");
        QTest::newRow("trace_diff/control") << "hta/trace_diff/control/control.json.gz" << 62119LL << 234760LL << 86525LL
                                            << 383404LL << 102154LL << 14226LL << 32183LL;
        QTest::newRow("trace_diff/test") << "hta/trace_diff/test/test.json.gz" << 46910LL << 429216LL << 152245LL
                                         << 628371LL << 2960LL << 42372LL << 41756LL;
        QTest::newRow("negative_queue") << "hta/negative_queue_length_values_check/rank0.json.gz" << 705853LL << 143836LL
                                        << 166865LL << 1016554LL << -1LL << -1LL << -1LL;
        QTest::newRow("df_index_resolver") << "hta/df_index_resolver/df_index_resolver.json.gz" << 643612LL << 496485LL
                                           << 256572LL << 1396669LL << 791330LL << 16727LL << 73829LL;
    }
    void holisticTraceAnalysisOracle() {
        QFETCH(QString, trace);
        QFETCH(qint64, idle);
        QFETCH(qint64, compute);
        QFETCH(qint64, nonCompute);
        QFETCH(qint64, span);
        QFETCH(qint64, hostWait7);
        QFETCH(qint64, kernelWait7);
        QFETCH(qint64, other7);
        auto t = load(trace.toStdString());
        QVERIFY(t);
        const AnalysisResult r = analyze(*t);
        QVERIFY(r.hta.valid);
        QCOMPARE(r.hta.idleNs, idle * 1000);
        QCOMPARE(r.hta.computeNs, compute * 1000);
        QCOMPARE(r.hta.nonComputeNs, nonCompute * 1000);
        QCOMPARE(r.hta.spanNs, span * 1000);
        if (hostWait7 < 0) return;
        bool found = false;
        for (const auto& s : r.hta.idleByStream)
            if (s.stream == 7) {
                found = true;
                QCOMPARE(s.hostWaitNs, hostWait7 * 1000);
                QCOMPARE(s.kernelWaitNs, kernelWait7 * 1000);
                QCOMPARE(s.otherNs, other7 * 1000);
            }
        QVERIFY(found);
    }

    void resnetKnownAnswers() {
        auto w0 = load("kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz");
        auto w4 = load("kineto-tb-plugin/resnet50_num_workers_4__worker0.1623212756351.pt.trace.json.gz");
        QVERIFY(w0 && w4);
        const AnalysisResult a0 = analyze(*w0), a4 = analyze(*w4);
        QVERIFY(!a0.findings.empty());
        QCOMPARE(a0.findings.front().kind, FindingKind::DataLoading);
        QVERIFY2(a0.findings.front().savingShare >= 0.30, qPrintable(QString::number(a0.findings.front().savingShare)));
        QVERIFY(!find(a4, FindingKind::DataLoading));
        QVERIFY(find(a0, FindingKind::BlockingH2dCopy));
        QVERIFY(find(a4, FindingKind::BlockingH2dCopy));
    }

    void otherKnownAnswers() {
        auto nq = load("hta/negative_queue_length_values_check/rank0.json.gz");
        QVERIFY(nq);
        QVERIFY(find(analyze(*nq), FindingKind::BlockingH2dCopy));
        auto cpu = load("hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
        QVERIFY(cpu);
        const AnalysisResult rc = analyze(*cpu);
        QVERIFY(find(rc, FindingKind::GpuNotUsed));
        QCOMPARE(rc.findings.front().kind, FindingKind::GpuNotUsed);
    }

    void invariantsAndGoldenFindings() {
        const bool regen = qEnvironmentVariableIsSet("STALLSCOPE_REGEN_GOLDEN");
        const fs::path goldenDir = fs::path(STALLSCOPE_GOLDEN_DIR) / "findings";
        int checked = 0;
        size_t knownWrong = 0;
        for (const auto& path : realTraces()) {
            const std::string rel = fs::relative(path, test::sharedTraces()).generic_string();
            auto imported = importers::importFile(path);
            QVERIFY2(imported, rel.c_str());
            const model::Trace& t = *imported.value();
            for (WindowKind wk : {WindowKind::Steps, WindowKind::All}) {
                AnalysisOptions o;
                o.window.kind = wk;
                const AnalysisResult r = analyze(t, o);
                const std::string where = rel + (wk == WindowKind::All ? " (window all)" : "");
                for (const auto& d : r.devices) {
                    int64_t sum = 0;
                    for (const auto& c : d.idle.causes) sum += c.ns;
                    QVERIFY2(sum == d.idle.idleNs && d.idle.idleNs == d.idleNs, ("causes != idle: " + where).c_str());
                    QVERIFY2(d.busyNs + d.idleNs == r.window.length(), where.c_str());
                }
                // CPU-only traces with steps: the step thread's time, every ns charged once.
                QVERIFY2(r.hostOnly.has_value() == (r.devices.empty() && !r.steps.empty()), where.c_str());
                if (r.hostOnly) {
                    int64_t sum = 0;
                    for (const auto& c : r.hostOnly->time.causes) sum += c.ns;
                    QVERIFY2(sum == r.hostOnly->windowNs && r.hostOnly->windowNs == r.window.length(),
                             ("host-only causes != window: " + where).c_str());
                }
                for (const auto& f : r.findings) {
                    QVERIFY2(f.savingNs >= 0 && f.savingNs <= r.window.length(), (f.id + " saving: " + where).c_str());
                    for (const auto& rg : f.ranges)
                        QVERIFY2(rg.start >= r.window.startNs && rg.end <= r.window.endNs && rg.start <= rg.end,
                                 (f.id + " range outside the window: " + where).c_str());
                    for (const auto& e : f.evidence)
                        QVERIFY2(e.valid() && e.index() < t.slices().size(), (f.id + " evidence: " + where).c_str());
                    QVERIFY2(!f.title.empty() && !f.explanation.empty() && !f.fix.empty(), f.id.c_str());
                }
                if (wk != WindowKind::Steps) continue;
                std::string name = rel;
                std::replace(name.begin(), name.end(), '/', '_');
                const fs::path golden = goldenDir / (name + ".findings.txt");
                const std::string got = goldenDump(t, r, rel);
                const KnownWrong known = readKnownWrong(golden);
                if (regen) {
                    fs::create_directories(goldenDir);
                    test::writeFile(golden, known.lines + got);
                } else {
                    QVERIFY2(fs::exists(golden), ("missing golden " + golden.string()).c_str());
                    if (got != known.rest)
                        QFAIL(qPrintable(QString::fromStdString(rel + " differs from " + golden.string() + ":\n" + got)));
                }
                // Known-wrong findings stay until the analysis stops making them; then the
                // marker must go (the diagnosis was fixed: flip the golden, do not bless).
                for (const std::string& id : known.wrong) {
                    const bool present = std::any_of(r.findings.begin(), r.findings.end(),
                                                     [&](const Finding& f) { return f.id == id; });
                    QVERIFY2(present, (rel + ": the known-wrong finding " + id +
                                       " is gone; if the analysis was fixed, remove its marker from " + golden.string())
                                          .c_str());
                }
                for (const std::string& kind : known.missing) {
                    const bool present = std::any_of(r.findings.begin(), r.findings.end(), [&](const Finding& f) {
                        return std::string(findingKindName(f.kind)) == kind;
                    });
                    QVERIFY2(!present, (rel + ": the known-missing finding " + kind +
                                        " is now made; review it and remove its marker from " + golden.string())
                                           .c_str());
                }
                knownWrong += known.wrong.size() + known.missing.size();
            }
            ++checked;
        }
        QVERIFY(checked >= 40);
        QVERIFY(knownWrong >= 5);  // the graph-capture and serving traces, until issue 12 fixes them
    }
};

QTEST_GUILESS_MAIN(TestAnalysisReal)
#include "test_analysis_real.moc"
