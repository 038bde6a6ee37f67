// Golden summaries of every real trace in ../shared/traces: a canonical text dump of what
// the model holds. STALLSCOPE_REGEN_GOLDEN=1 rewrites the files (review the diff).
// The counts are cross-checked independently by tests/tools/independent_summary.py.
#include "real_traces.h"
#include "test_support.h"

#include "stallscope/analysis/trace_summary.h"
#include "stallscope/importers/importer.h"

#include <QTest>

#include <sstream>

using namespace stallscope;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> realTraces() {
    return test::realTraceFiles();
}

std::string dump(const model::Trace& t, const std::string& rel) {
    using namespace model;
    std::ostringstream o;
    const auto s = analysis::summarize(t);
    o << "file: " << rel << "\n";
    o << "format: " << s.format << "\n";
    o << "events: " << s.events << "\n";
    for (const auto& [k, v] : s.byPhase) o << "phase " << k << ": " << v << "\n";
    for (const auto& [k, v] : s.byCategory) o << "category " << k << ": " << v << "\n";
    o << "gpu: kernel " << s.kernels << ", memcpy " << s.memcpys << ", memset " << s.memsets << "\n";
    o << "profiler_steps: " << s.profilerSteps << "\n";
    o << "span_ns: " << s.startNs << " .. " << s.endNs << "\n";
    for (const auto& d : s.devices) {
        if (!d.hasWork) continue;
        o << "device " << d.device << ": busy_ns " << d.busyNs << ", first " << d.firstNs << ", last " << d.lastNs
          << ", kernels " << d.kernels << ", memcpys " << d.memcpys << ", memsets " << d.memsets << ", streams "
          << d.streams << "\n";
    }
    for (const auto& d : t.metadata().devices)
        o << "device_properties " << d.id << ": " << d.name << ", sm_" << d.computeMajor << d.computeMinor << ", "
          << d.numSms << " SMs, " << d.totalGlobalMem << " bytes\n";
    if (t.metadata().distributed.present)
        o << "distributed: rank " << s.rank << " of " << s.worldSize << " (" << s.backend << ")\n";
    o << "rows: processes " << s.processes << ", cpu_threads " << s.cpuThreads << ", gpu_streams " << s.gpuStreams
      << ", other " << s.otherTracks << "\n";
    uint16_t maxDepth = 0;
    for (const auto& tr : t.tracks()) maxDepth = std::max(maxDepth, tr.maxDepth);
    size_t launchFlows = 0, fwdbwd = 0, otherFlows = 0;
    for (const auto& f : t.flows())
        (f.kind == FlowKind::Launch ? launchFlows : f.kind == FlowKind::ForwardBackward ? fwdbwd : otherFlows)++;
    size_t linked = 0, gpuWork = 0;
    const auto& sl = t.slices();
    for (uint32_t i = 0; i < sl.size(); ++i) {
        if (!isGpuWork(sl.kind[i])) continue;
        ++gpuWork;
        if (t.launchOf(SliceId(i)).valid()) ++linked;
    }
    o << "slices: " << sl.size() << ", max_depth " << maxDepth << ", instants " << t.instants().size()
      << ", memory_samples " << t.memorySamples().size() << ", counter_series " << t.counterSeries().size()
      << ", counter_samples " << t.counterSamples().size() << "\n";
    o << "flows: launch " << launchFlows << ", fwdbwd " << fwdbwd << ", other " << otherFlows << "\n";
    o << "correlation: gpu_work " << gpuWork << ", with_launch " << linked << ", launch_calls "
      << t.launchIndex().size() << "\n";
    for (size_t k = 0; k < static_cast<size_t>(DiagnosticKind::Count); ++k) {
        const auto kind = static_cast<DiagnosticKind>(k);
        if (t.diagnostics().count(kind))
            o << "diagnostic " << diagnosticInfo(kind).id << ": " << t.diagnostics().count(kind) << "\n";
    }
    return o.str();
}

} // namespace

class TestGoldenReal : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyRealTraceMatchesItsGolden() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const bool regen = qEnvironmentVariableIsSet("STALLSCOPE_REGEN_GOLDEN");
        const fs::path goldenDir = STALLSCOPE_GOLDEN_DIR;
        int checked = 0;
        for (const auto& path : realTraces()) {
            const std::string rel = fs::relative(path, test::sharedTraces()).generic_string();
            auto r = importers::importFile(path);
            QVERIFY2(r, qPrintable(QString::fromStdString(rel + ": " + (r ? "" : r.error().message))));
            const std::string got = dump(*r.value(), rel);
            std::string name = rel;
            std::replace(name.begin(), name.end(), '/', '_');
            const fs::path golden = goldenDir / (name + ".summary.txt");
            if (regen) {
                test::writeFile(golden, got);
                continue;
            }
            QVERIFY2(fs::exists(golden), qPrintable(QString::fromStdString("missing golden " + golden.string() +
                                                                            " (run with STALLSCOPE_REGEN_GOLDEN=1)")));
            const std::string want = test::readFile(golden);
            if (got != want) {
                std::istringstream a(want), b(got);
                std::string la, lb, diff;
                while (true) {
                    const bool ea = !std::getline(a, la), eb = !std::getline(b, lb);
                    if (ea && eb) break;
                    if (la != lb) diff += "\n  golden: " + la + "\n  now:    " + lb;
                    la.clear();
                    lb.clear();
                }
                QFAIL(qPrintable(QString::fromStdString(rel + " differs from its golden:" + diff)));
            }
            ++checked;
        }
        if (!regen) QVERIFY(checked >= 27);
    }
};

QTEST_GUILESS_MAIN(TestGoldenReal)
#include "test_golden_real.moc"
