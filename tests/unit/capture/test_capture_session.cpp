// CaptureSession in-process: the fake training loop becomes a Kineto-style trace that
// re-imports equal, that the analysis reads like a torch.profiler file, whose args are
// readable; string tables, sequence gaps, drops, bad string ids, renumbered correlations,
// hostile names, a log left by a crash, and snapshots taken while sources stream.
#include "capture_test_util.h"
#include "test_support.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/capture/fake_source.h"
#include "stallscope/importers/importer.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <chrono>
#include <thread>

using namespace stallscope;
using namespace stallscope::capture;
using capture_test::SourceSink;

namespace {

std::shared_ptr<const model::Trace> importOk(const std::filesystem::path& p) {
    auto r = importers::importFile(p);
    if (!r) qWarning("%s", r.error().message.c_str());
    return r ? r.value() : nullptr;
}

std::string argOf(const model::Trace& t, size_t slice, const std::string& key) {
    std::vector<model::ArgValue> args;
    std::string error;
    if (!t.sliceArgs(model::SliceId(uint32_t(slice)), args, error)) return "<" + error + ">";
    for (const auto& a : args)
        if (a.key == key) return a.json;
    return {};
}

size_t firstOfKind(const model::Trace& t, model::EventKind k, std::string_view prefix = {}) {
    for (size_t i = 0; i < t.slices().size(); ++i)
        if (t.slices().kind[i] == k && t.str(t.slices().name[i]).substr(0, prefix.size()) == prefix) return i;
    return SIZE_MAX;
}

pb::Envelope batch(uint64_t seq, std::vector<std::string> strings, std::vector<uint32_t> names) {
    pb::Envelope e;
    e.mutable_batch()->set_sequence(seq);
    for (auto& s : strings) e.mutable_batch()->add_new_strings(s);
    int64_t t = 1'700'000'000'000'000'000 + int64_t(seq) * 1000000;
    for (uint32_t n : names) {
        pb::Activity& a = *e.mutable_batch()->add_activities();
        a.set_kind(pb::Activity::CPU_OP);
        a.set_name_id(n);
        a.set_pid(10), a.set_tid(11);
        a.set_start_ns(t), a.set_end_ns(t + 500);
        a.set_sequence_number(-1);
        t += 1000;
    }
    return e;
}

} // namespace

class TestCaptureSession : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::filesystem::path path(const char* name) const { return m_dir.filePath(name).toStdString(); }

private Q_SLOTS:
    void fakeLoopReimportsEqual() {
        CaptureSession s(path("loop.json"));
        std::string error;
        QVERIFY2(test::okOr(s.open(), error), error.c_str());
        FakeSourceOptions o;
        o.steps = 3;
        o.recordsPerBatch = 37;  // batches cut across steps
        const FakeSourceResult r = FakeSource(o).play(s);
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(r.steps, uint64_t(3));
        const SessionStats st = s.stats();
        QCOMPARE(st.records, r.recordsSent);
        QCOMPARE(st.sources, uint64_t(1));
        QCOMPARE(st.batches, r.batchesSent);
        QCOMPARE(st.badMessages, uint64_t(0));
        QCOMPARE(st.gpuActivities, r.kernels + r.copies);
        auto trace = test::valueOr(s.finish(path("loop.json")), error); // in place
        QVERIFY2(trace, error.c_str());
        auto again = importOk(path("loop.json"));
        QVERIFY(again);
        QString why;
        QVERIFY2(capture_test::sameTrace(*trace, *again, why), qPrintable(why));
        QCOMPARE(again->slices().size(), size_t(r.recordsSent));
        QCOMPARE(capture_test::linkedGpuWork(*again), size_t(r.kernels + r.copies));
        QVERIFY(again->flows().size() > 0);
        QCOMPARE(again->diagnostics().total(), uint64_t(0));
        QCOMPARE(again->metadata().devices.size(), size_t(1));
        QCOMPARE(again->metadata().devices[0].numSms, 108);
        QVERIFY(again->metadata().baseTimeNs.has_value());
        // Finishing twice returns the same trace; later envelopes are refused.
        QCOMPARE(test::valueOr(s.finish(path("loop.json")), error).get(), trace.get());
        QVERIFY(!s.receive(0, batch(99, {"late"}, {1})));
    }

    void analysisReadsItLikeTorchProfiler() {
        CaptureSession s(path("analysis.json.partial"));
        std::string error;
        QVERIFY(test::okOr(s.open(), error));
        FakeSourceOptions o;
        o.steps = 5;
        QVERIFY(FakeSource(o).play(s).ok);
        auto trace = test::valueOr(s.finish(path("analysis.json")), error); // renamed
        QVERIFY2(trace, error.c_str());
        QVERIFY(!std::filesystem::exists(path("analysis.json.partial")));
        const size_t kernel = firstOfKind(*trace, model::EventKind::Kernel);  // args through the renamed file
        QVERIFY(kernel != SIZE_MAX);
        QCOMPARE(argOf(*trace, kernel, "device"), std::string("0"));
        const analysis::AnalysisResult res = analysis::analyze(*trace);
        QCOMPARE(res.steps.size(), size_t(5));
        QCOMPARE(res.devices.size(), size_t(1));
        bool dataLoading = false, blockingCopy = false;
        for (const auto& f : res.findings) {
            dataLoading |= f.kind == analysis::FindingKind::DataLoading;
            blockingCopy |= f.kind == analysis::FindingKind::BlockingH2dCopy;
        }
        QVERIFY(dataLoading);
        QVERIFY(blockingCopy);
        QCOMPARE(res.findings.front().kind, analysis::FindingKind::DataLoading);
    }

    void argsAreKinetos() {
        CaptureSession s(path("args.json"));
        std::string error;
        QVERIFY(test::okOr(s.open(), error));
        FakeSourceOptions o;
        o.steps = 1;
        QVERIFY(FakeSource(o).play(s).ok);
        for (int pass = 0; pass < 2; ++pass) {  // the snapshot (log) and the final trace (output)
            auto t =
                pass == 0 ? s.snapshot() : test::valueOr(s.finish(path("args.json.gz")), error);
            QVERIFY2(t, error.c_str());
            const size_t conv = firstOfKind(*t, model::EventKind::Kernel, "sm80_xmma_fprop");
            QVERIFY(conv != SIZE_MAX);
            QCOMPARE(argOf(*t, conv, "grid"), std::string("[196, 1, 1]"));
            QCOMPARE(argOf(*t, conv, "registers per thread"), std::string("252"));
            // 196 blocks on 108 SMs; 2 resident blocks (registers and shared memory) of 128 threads.
            QCOMPARE(argOf(*t, conv, "blocks per SM").substr(0, 6), std::string("1.8148"));
            QCOMPARE(argOf(*t, conv, "est. achieved occupancy %"), std::string("11"));
            QCOMPARE(argOf(*t, conv, "stream"), std::string("7"));
            QVERIFY(model::SliceExtra::estOccupancyPct(t->slices().extra[conv]) == 11.0f);
            const size_t copy = firstOfKind(*t, model::EventKind::Memcpy, "Memcpy HtoD (Pageable -> Device)");
            QVERIFY(copy != SIZE_MAX);
            QCOMPARE(argOf(*t, copy, "bytes"), std::to_string(32ull * 3 * 224 * 224 * 4));
            QCOMPARE(t->slices().extra[copy], uint64_t(32ull * 3 * 224 * 224 * 4));
            const size_t launch = t->launchOf(model::SliceId(uint32_t(conv))).index();
            QCOMPARE(std::string(t->str(t->slices().name[launch])), std::string("cudaLaunchKernel"));
            QCOMPARE(argOf(*t, launch, "correlation"), argOf(*t, conv, "correlation"));
            const size_t op = firstOfKind(*t, model::EventKind::CpuOp, "aten::copy_");
            const std::string dims = argOf(*t, op, "Input Dims");
            QVERIFY2(dims == "[[32, 3, 224, 224], []]", dims.c_str());
            QVERIFY(!argOf(*t, op, "Sequence number").empty());
            const size_t sync = firstOfKind(*t, model::EventKind::CudaSync);
            QCOMPARE(argOf(*t, sync, "cuda_sync_kind"), std::string("\"Stream Sync\""));
        }
        QFile gz(m_dir.filePath("args.json.gz"));
        QVERIFY(gz.open(QIODevice::ReadOnly));
        QCOMPARE(gz.read(2), QByteArray("\x1f\x8b"));
        QVERIFY(!std::filesystem::exists(path("args.json")));  // the log was compressed and removed
    }

    void stringTablesAndBadIds() {
        CaptureSession s(path("strings.json"));
        std::string error;
        QVERIFY(test::okOr(s.open(), error));
        QVERIFY(s.receive(0, batch(0, {"", "aten::add"}, {1})));
        QVERIFY(s.receive(0, batch(1, {"aten::mul"}, {2, 1, 7, 2})));  // 7 was never sent
        QVERIFY(s.receive(0, batch(2, {}, {1})));
        const SessionStats st = s.stats();
        QCOMPARE(st.records, uint64_t(5));
        QCOMPARE(st.badMessages, uint64_t(1));
        QVERIFY(!st.problems.empty());
        QVERIFY2(st.problems[0].find("string 7 of 3") != std::string::npos, st.problems[0].c_str());
        auto t = test::valueOr(s.finish(path("strings.json")), error);
        QVERIFY(t);
        std::vector<std::string> names;
        for (auto id : t->slices().name) names.emplace_back(t->str(id));
        std::sort(names.begin(), names.end());
        QCOMPARE(names, (std::vector<std::string>{"aten::add", "aten::add", "aten::add", "aten::mul", "aten::mul"}));
        QVERIFY(s.receive(7, batch(0, {}, {})) == false);  // an unknown source
    }

    void gapsDropsAndTheStatsObject() {
        CaptureSession s(path("gaps.json"));
        std::string error;
        QVERIFY(test::okOr(s.open(), error));
        FakeSourceOptions o;
        o.steps = 3;
        o.recordsPerBatch = 50;
        o.skipBatch = 2;
        o.droppedPerBatch = 3;
        o.corruptAfterBatch = 0;  // in-process: an envelope without a body
        const FakeSourceResult r = FakeSource(o).play(s);
        QVERIFY(r.ok);
        const SessionStats st = s.stats();
        QCOMPARE(st.missingBatches, uint64_t(1));
        QCOMPARE(st.droppedBySources, 3 * r.batchesSent);
        QCOMPARE(st.badMessages, uint64_t(1));
        QCOMPARE(st.records, r.recordsSent);
        auto t = test::valueOr(s.finish(path("gaps.json")), error);
        QVERIFY(t);
        std::string stats;
        const auto again = importOk(path("gaps.json"));
        QVERIFY(again);
        for (const auto& [k, v] : again->metadata().other)
            if (k == "stallscope") stats = v;
        QVERIFY2(stats.find("\"missing_batches\":1") != std::string::npos, stats.c_str());
        QVERIFY(stats.find("\"dropped_by_sources\":" + std::to_string(3 * r.batchesSent)) != std::string::npos);
        QVERIFY(stats.find("fake source: buffer full") != std::string::npos);
        QVERIFY(stats.find("never arrived") != std::string::npos);
    }

    void correlationsOfTwoProcessesStayApart() {
        CaptureSession s(path("two.json"));
        std::string error;
        QVERIFY(test::okOr(s.open(), error));
        const uint32_t a = s.addSource(), b = s.addSource();
        for (auto [src, pid, dev] : {std::tuple{a, 1000, 0}, std::tuple{b, 2000, 1}}) {
            FakeSourceOptions o;
            o.steps = 2, o.pid = pid, o.device = dev;  // the same correlation ids in both
            SourceSink sink(s, src);
            QVERIFY(FakeSource(o).play(sink).ok);
        }
        auto t = test::valueOr(s.finish(path("two.json")), error);
        QVERIFY(t);
        size_t checked = 0;
        for (size_t i = 0; i < t->slices().size(); ++i) {
            if (!model::isGpuWork(t->slices().kind[i])) continue;
            const model::SliceId l = t->launchOf(model::SliceId(uint32_t(i)));
            QVERIFY(l.valid());
            const int64_t device = t->process(t->track(t->slices().track[i]).process).key.number;
            const int64_t pid = t->process(t->track(t->slices().track[l.index()]).process).key.number;
            QCOMPARE(pid, device == 0 ? int64_t(1000) : int64_t(2000));
            ++checked;
        }
        QVERIFY(checked > 50);
        QString why;
        QVERIFY2(capture_test::sameTrace(*t, *importOk(path("two.json")), why), qPrintable(why));
    }

    void hostileNamesStayText() {
        CaptureSession s(path("names.json"));
        std::string error;
        QVERIFY(test::okOr(s.open(), error));
        const std::string evil = std::string("a\"b\\c\nd\te\x01 \xff\xfe end ") + "\xe2\x82\xac";
        pb::Envelope e = batch(0, {"", evil, "ok"}, {1, 2});
        pb::Envelope t;
        t.mutable_thread_name()->set_pid(10);
        t.mutable_thread_name()->set_tid(11);
        t.mutable_thread_name()->set_name("worker \"1\"");
        QVERIFY(s.receive(0, t));
        QVERIFY(s.receive(0, e));
        auto trace = test::valueOr(s.finish(path("names.json")), error);
        QVERIFY(trace);
        auto again = importOk(path("names.json"));
        QVERIFY(again);
        QString why;
        QVERIFY2(capture_test::sameTrace(*trace, *again, why), qPrintable(why));
        QCOMPARE(again->diagnostics().total(), uint64_t(0));
        bool found = false;
        for (auto id : again->slices().name) found |= again->str(id).find("a\"b\\c\nd") == 0;
        QVERIFY(found);
    }

    void crashLeavesAReadableLog() {
        auto s = std::make_unique<CaptureSession>(path("crash.json"));
        std::string error;
        QVERIFY(s->open());
        FakeSourceOptions o;
        o.steps = 2;
        const FakeSourceResult r = FakeSource(o).play(*s);
        auto snap = s->snapshot();
        s.reset();  // no finish: what a recorder that dies leaves behind
        auto t = importOk(path("crash.json"));
        QVERIFY(t);
        QCOMPARE(t->slices().size(), size_t(r.recordsSent));
        QCOMPARE(t->slices().size(), snap->slices().size());
        QVERIFY(t->diagnostics().count(model::DiagnosticKind::UnterminatedArray) +
                    t->diagnostics().count(model::DiagnosticKind::TruncatedInput) >
                0);
    }

    void snapshotsWhileSourcesStream() {
        CaptureSession s(path("live.json"));
        std::string error;
        QVERIFY(test::okOr(s.open(), error));
        std::atomic<int> running{3};
        std::vector<std::thread> sources;
        std::vector<FakeSourceResult> results(3);
        for (int i = 0; i < 3; ++i) {
            const uint32_t id = s.addSource();
            sources.emplace_back([&, i, id] {
                FakeSourceOptions o;
                o.steps = 40, o.pid = 100 + i, o.device = i, o.recordsPerBatch = 16;
                SourceSink sink(s, id);
                results[size_t(i)] = FakeSource(o).play(sink);
                --running;
            });
        }
        size_t snapshots = 0, last = 0;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        while (running > 0 || std::chrono::steady_clock::now() < until) {
            auto t = s.snapshot();
            QVERIFY(t->slices().size() >= last);
            last = t->slices().size();
            ++snapshots;
        }
        for (auto& th : sources) th.join();
        uint64_t sent = 0;
        for (auto& r : results) {
            QVERIFY(r.ok);
            sent += r.recordsSent;
        }
        QVERIFY(snapshots > 3);
        QCOMPARE(s.stats().records, sent);
        auto t = test::valueOr(s.finish(path("live.json")), error);
        QVERIFY(t);
        QCOMPARE(t->slices().size(), size_t(sent));
        QCOMPARE(s.stats().sources, uint64_t(3));
    }
};

QTEST_GUILESS_MAIN(TestCaptureSession)
#include "test_capture_session.moc"
