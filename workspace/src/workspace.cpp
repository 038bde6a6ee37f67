#include "stallscope/workspace/workspace.h"

#include "stallscope/workspace/memory_budget.h"

#include "stallscope/base/text_format.h"
#include "stallscope/importers/importer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

namespace stallscope::workspace {

std::optional<int64_t> partialReadEnd(const model::Trace& trace) {
    const model::SliceTable& s = trace.slices();
    std::optional<int64_t> gpuEnd, cpuEnd;
    for (const model::TrackInfo& tr : trace.tracks()) {
        if (tr.sliceBegin == tr.sliceEnd) continue;
        int64_t end = INT64_MIN;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i)
            end = std::max(end, s.start[i] + s.dur[i]);
        auto& slot = tr.kind == model::TrackKind::GpuStream ? gpuEnd : cpuEnd;
        slot = slot ? std::max(*slot, end) : end;
    }
    if (!gpuEnd) return std::nullopt;
    return cpuEnd ? std::min(*gpuEnd, *cpuEnd) : *gpuEnd;
}

namespace {

/// One partial trace of a progressive open, as the whole one would be given to the caller.
void publishPartial(const std::string& path, std::shared_ptr<const model::Trace> trace,
                    double fraction, const LoadOptions& options) {
    auto cancelled = [&] { return options.cancel && options.cancel->load(); };
    if (cancelled()) return;
    const auto t0 = std::chrono::steady_clock::now();
    Workspace ws;
    ws.path = path;
    ws.session.sourcePath = path;
    ws.session.sourceKind = "file";
    model::TraceEntry e;
    e.trace = std::move(trace);
    e.path = path;
    e.label = std::filesystem::path(path).filename().string();
    e.rank = e.trace->metadata().distributed.present ? e.trace->metadata().distributed.rank : 0;
    AnalysedTrace at;
    at.entry = e;
    const model::Trace& t = *e.trace;
    std::thread side;
    if (options.timelineIndex)
        side = std::thread([&] { at.timeline = scene::TimelineIndex::build(t); });
    if (options.analyse) {
        if (const auto end = partialReadEnd(t); end && *end > t.startNs()) {
            analysis::AnalysisOptions ao = options.analysis;
            ao.cancel = options.cancel;
            ao.window.kind = analysis::WindowKind::Range;
            ao.window.startNs = t.startNs();
            ao.window.endNs = *end;
            analysis::AnalysisResult r = analysis::analyze(t, ao);
            char span[64];
            std::snprintf(span, sizeof span, "the part read (its first %.2f s)",
                          double(*end - t.startNs()) / 1e9);
            r.window.description = span;
            at.analysis = std::make_shared<const analysis::AnalysisResult>(std::move(r));
        } else {
            ws.session.notes.push_back("no GPU work read yet: the findings come when it is");
            auto empty = std::make_shared<analysis::AnalysisResult>();
            empty->window.startNs = t.startNs();
            empty->window.endNs = t.endNs();
            empty->window.description = "no GPU work read yet";
            at.analysis = std::move(empty);
        }
    }
    if (side.joinable()) side.join();
    ws.session.traces.push_back(std::move(e));
    ws.traces.push_back(std::move(at));
    ws.series = rankSeries(ws.traces);
    ws.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ws.partial = true;
    ws.readFraction = fraction;
    if (!cancelled()) options.partial(std::move(ws));
}

} // namespace

uint64_t memoryBudgetOf(const LoadOptions& options) {
    return options.memoryBudgetBytes == kMachineMemoryBudget ? defaultMemoryBudget()
                                                             : options.memoryBudgetBytes;
}

base::Result<Workspace> loadAndAnalyse(const std::string& path, const LoadOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    auto cancelled = [&] { return options.cancel && options.cancel->load(); };
    importers::ImportOptions io;
    io.threads = options.threads;
    io.cancel = options.cancel;
    io.memoryBudgetBytes = memoryBudgetOf(options);
    // The caller's callback: one call at a time, never backwards (a folder's files are read
    // on several threads, each reporting its own bytes from 0).
    std::mutex progressMutex;
    double reported = 0;
    auto report = [&](double f, const std::string& what) {
        const std::lock_guard<std::mutex> lock(progressMutex);
        reported = std::max(reported, f);
        options.progress(reported, what);
    };
    if (options.progress)
        io.progress = [&](const importers::ImportProgress& p) {
            if (p.bytesTotal > 0)
                report(0.9 * double(p.bytesRead) / double(p.bytesTotal),
                       "Reading " + base::formatCount(p.events) + " events");
        };
    std::error_code ec;
    if (options.partial && std::filesystem::is_regular_file(path, ec)) {
        io.partialFirstMs = options.partialFirstMs;
        io.partial = [&](std::shared_ptr<const model::Trace> t,
                         const importers::ImportProgress& p) {
            publishPartial(path, std::move(t),
                           p.bytesTotal ? double(p.bytesRead) / double(p.bytesTotal) : 0.0,
                           options);
        };
    }
    auto imported = importers::importPath(path, io);
    if (!imported) return imported.error();
    Workspace ws;
    ws.path = path;
    ws.session = std::move(imported.value());
    const size_t n = ws.session.traces.size();
    ws.traces.resize(n);
    for (size_t i = 0; i < n; ++i) ws.traces[i].entry = ws.session.traces[i];

    // Each trace is analysed (and its timeline indexed) on its own; up to analysisThreads
    // traces at once, the index beside the analysis.
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const size_t workers =
        std::min<size_t>(n, options.analysisThreads ? options.analysisThreads : hw);
    std::atomic<size_t> next{0}, done{0};
    analysis::AnalysisOptions ao = options.analysis;
    ao.cancel = options.cancel;
    auto work = [&] {
        for (size_t i = next++; i < n; i = next++) {
            if (cancelled()) return;
            AnalysedTrace& at = ws.traces[i];
            const model::Trace& trace = *at.entry.trace;
            std::thread side;
            if (options.timelineIndex)
                side = std::thread([&] { at.timeline = scene::TimelineIndex::build(trace); });
            if (options.analyse)
                at.analysis =
                    std::make_shared<const analysis::AnalysisResult>(analysis::analyze(trace, ao));
            if (side.joinable()) side.join();
            const size_t finished = ++done;
            if (options.progress) report(0.9 + 0.1 * double(finished) / double(n), "Analysing");
        }
    };
    if (options.progress && (options.analyse || options.timelineIndex) && n)
        report(0.9, "Analysing");
    if (workers <= 1) {
        work();
    } else {
        std::vector<std::thread> pool;
        for (size_t k = 0; k < workers; ++k) pool.emplace_back(work);
        for (auto& t : pool) t.join();
    }
    if (cancelled()) return base::Error{base::ErrorKind::Cancelled, "cancelled"};
    ws.series = rankSeries(ws.traces);
    ws.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return ws;
}

} // namespace stallscope::workspace
