// The one loader: a path imported and every trace analysed (in parallel for folders), the
// caller's per-trace work beside the analysis, progress, cancel and errors.
#include "test_support.h"

#include "stallscope/workspace/workspace.h"

#include <QTest>

#include <atomic>
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

    void perTraceWorkRunsBesideTheAnalysis() {
        workspace::LoadOptions o;
        std::atomic<int> calls{0};
        o.perTrace = [&](const model::Trace& t) -> std::shared_ptr<const void> {
            ++calls;
            return std::make_shared<const size_t>(t.slices().size());
        };
        auto r = workspace::loadAndAnalyse(dataTrace("launch_bound_steps.json"), o);
        QVERIFY(r);
        QCOMPARE(calls.load(), 1);
        const auto n = std::static_pointer_cast<const size_t>(r.value().traces[0].extra);
        QVERIFY(n);
        QCOMPARE(*n, r.value().traces[0].entry.trace->slices().size());
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
};

QTEST_GUILESS_MAIN(TestWorkspace)
#include "test_workspace.moc"
