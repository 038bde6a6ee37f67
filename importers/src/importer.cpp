#include "stallscope/importers/importer.h"

#include "byte_stream.h"
#include "chrome_trace_importer.h"
#include "memory_snapshot_importer.h"

#include "stallscope/base/text_format.h"
#include "stallscope/importers/content_probe.h"
#include "stallscope/importers/file_formats.h"
#include "stallscope/importers/format_sniffer.h"
#include "stallscope/importers/input_format.h"
#include "stallscope/importers/memory_budget.h"
#include "stallscope/importers/ranks_in_one_file.h"
#include "stallscope/importers/tensorboard_folder.h"

#include <algorithm>
#include <map>
#include <system_error>

namespace fs = std::filesystem;

namespace stallscope::importers {

Result<std::shared_ptr<const model::Trace>> importFile(const fs::path& path, const ImportOptions& options) {
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        return Error{ErrorKind::NotFound, path.string() + ": no such file or folder", UINT64_MAX};
    if (fs::is_directory(st))
        return Error{ErrorKind::UnknownFormat, path.string() + " is a folder, not a trace file", UINT64_MAX};
    if (std::string why = notAFileMessage(path, st); !why.empty())
        return Error{ErrorKind::Unreadable, std::move(why), UINT64_MAX};
    // The format from the content (never the name): the table says how to read it, or what
    // the file is and what to do when Stallscope recognises it without reading it.
    auto probe = ContentProbe::ofFile(path);
    if (!probe) return probe.error();
    if (probe.value().stored().empty())
        return Error{ErrorKind::Empty, path.string() + ": the file is empty", 0};
    const FileFormat* f = recogniseContent(probe.value());
    if (!f) {
        // Content no row knows. An Nsight Systems report's layout is not documented, so it is
        // not told by content; its name only adds what to do to the line.
        std::string message = unknownFormatMessage(probe.value());
        const std::string ext = path.extension().string();
        if (ext == ".nsys-rep" || ext == ".qdrep")
            message += "; if this is an Nsight Systems report (" + ext +
                       "), export it with `nsys export --type sqlite " + path.filename().string() +
                       "` and open the .sqlite file";
        return Error{ErrorKind::UnknownFormat, std::move(message), 0};
    }
    if (f->import) return f->import(path, options);
    return Error{ErrorKind::UnknownFormat, unsupportedMessage(*f, probe.value()), 0};
}

Result<std::shared_ptr<const model::Trace>> importBuffer(std::string bytes, const ImportOptions& options) {
    if (bytes.empty()) return Error{ErrorKind::Empty, "the input is empty", 0};
    auto data = std::make_shared<const std::string>(std::move(bytes));
    // What the format table recognises as something other than a trace is refused as a file
    // of it would be; any other bytes are read as Chrome/Kineto JSON (the reader says why not).
    {
        const ContentProbe probe = ContentProbe::ofMemory(data);
        const FileFormat* f = recogniseContent(probe);
        if (f && !f->import)
            return Error{ErrorKind::UnknownFormat, unsupportedMessage(*f, probe), 0};
        if (f && f->format == InputFormat::MemorySnapshot) return importSnapshotBytes(data);
        if (f && f->import && f->format != InputFormat::Gzip &&
            f->format != InputFormat::ChromeJson)
            return Error{ErrorKind::UnknownFormat,
                         "this is a " + std::string(f->name) +
                             ": it is read from a file — save it and open the file",
                         0};
    }
    ChromeInput in;
    if (looksGzip(data->data(), data->size())) {
        auto gz = std::make_unique<GzipByteStream>(std::make_unique<MemoryByteStream>(data), false);
        in.gzip = gz.get();
        in.stream = std::move(gz);
        ImportOptions o = options;
        o.keepEventSource = false;  // nothing on disk to read back from
        return importChromeTrace(std::move(in), o);
    }
    in.stream = std::make_unique<MemoryByteStream>(data);
    in.memory = data;
    return importChromeTrace(std::move(in), options);
}

Result<model::Session> importPath(const fs::path& path, const ImportOptions& options) {
    std::error_code ec;
    model::Session session;
    session.sourcePath = path.string();
    if (!fs::is_directory(path, ec)) { // a file: its format is told by importFile
        auto r = importFile(path, options);
        if (!r) return r.error();
        session.sourceKind = "file";
        // Several ranks in one file: each rank imported on its own (its processes only), so
        // every rank is analysed apart and compared, as the ranks of a folder are.
        RanksInFile inFile = ranksInOneTrace(*r.value());
        if (inFile.ranks.size() > kMaxRanksInOneFile) {
            // Each rank is a read of the whole file: thousands of them would take the file's
            // time (and its tables' memory) thousands of times. Shown as one trace, and said.
            session.notes.push_back(std::to_string(inFile.ranks.size()) + " ranks in one file (" +
                                    inFile.evidence + "), more than the " +
                                    std::to_string(kMaxRanksInOneFile) +
                                    " Stallscope splits a file into: shown as one trace");
        } else if (inFile.ranks.size() >= 2) {
            r.value().reset();
            session.notes.push_back(inFile.evidence);
            uint64_t used = 0; // the ranks read so far share the memory budget
            for (const RankGroup& g : inFile.ranks) {
                if (options.cancel && options.cancel->load())
                    return Error{ErrorKind::Cancelled, "import cancelled", UINT64_MAX};
                ImportOptions o = options;
                o.pids = g.pids;
                o.partial = nullptr; // the first pass showed the whole file progressively
                if (o.memoryBudgetBytes) {
                    if (used >= o.memoryBudgetBytes)
                        return Error{ErrorKind::OverMemoryBudget,
                                     path.string() + ": the first " +
                                         std::to_string(session.traces.size()) + " of its " +
                                         std::to_string(inFile.ranks.size()) +
                                         " ranks already take " + base::formatMemory(used) +
                                         ", the memory budget",
                                     UINT64_MAX};
                    o.memoryBudgetBytes -= used;
                }
                auto one = importFile(path, o);
                if (!one) return one.error();
                used += one.value()->memoryBytes();
                session.traces.push_back(
                    {one.value(), path.filename().string(), path.string(), g.rank, 0});
            }
            return session;
        }
        const auto& di = r.value()->metadata().distributed;
        // A worker's file of a TensorBoard folder is labelled as in its folder ("worker3"),
        // so a rank analysed alone (`analyze --summary` per rank) keeps its name.
        const TraceFileName name = parseTraceFileName(path.filename().string());
        session.traces.push_back(
            {r.value(),
             name.matches && !name.worker.empty() ? name.worker : path.filename().string(),
             path.string(), di.present ? di.rank : 0, 0});
        return session;
    }
    // A folder that cannot be listed is not "a folder without traces": said as what it is.
    if (fs::directory_iterator probe(path, ec); ec)
        return Error{ErrorKind::Unreadable,
                     "cannot read the folder " + path.string() + ": " + ec.message(), UINT64_MAX};
    const auto runs = findTensorBoardRuns(path);
    if (runs.empty())
        return Error{ErrorKind::NoTraces,
                     path.string() +
                         ": no trace files (*.pt.trace.json[.gz], else *.json[.gz]) in this "
                         "folder or its sub-folders",
                     UINT64_MAX};
    session.sourceKind = "tensorboard-folder";
    for (size_t i = 1; i < runs.size(); ++i) session.otherRuns.push_back(runs[i].folder.string());
    const TensorBoardRun& run = runs.front();
    std::map<std::string, int> workerIndex;
    for (const auto& f : run.files) workerIndex.emplace(f.worker, static_cast<int>(workerIndex.size()));
    std::map<std::string, int> spanCount;
    uint64_t used = 0;  // the ranks already read share the budget
    for (const auto& f : run.files) {
        if (options.cancel && options.cancel->load()) return Error{ErrorKind::Cancelled, "import cancelled", UINT64_MAX};
        ImportOptions o = options;
        o.partial = nullptr; // progressive open is for one file
        if (o.memoryBudgetBytes) {
            if (used >= o.memoryBudgetBytes)
                return Error{
                    ErrorKind::OverMemoryBudget,
                    path.string() + ": the first " + std::to_string(session.traces.size()) +
                        " of " + std::to_string(run.files.size()) + " trace files already take " +
                        base::formatMemory(used) +
                        ", the memory budget; open fewer ranks (a single file of the folder)",
                    UINT64_MAX};
            o.memoryBudgetBytes -= used;
        }
        auto r = importFile(f.path, o);
        if (!r) {
            if (r.error().kind == ErrorKind::Cancelled) return r.error();
            if (r.error().kind == ErrorKind::OverMemoryBudget)
                return Error{ErrorKind::OverMemoryBudget,
                             f.path.filename().string() + " (file " +
                                 std::to_string(session.traces.size() + 1) + " of " +
                                 std::to_string(run.files.size()) +
                                 " in the folder; the files before it take " +
                                 base::formatMemory(used) + "): " + r.error().message,
                             UINT64_MAX};
            session.problems.push_back(f.path.filename().string() + ": " + r.error().message);
            continue;
        }
        const auto& di = r.value()->metadata().distributed;
        model::TraceEntry e;
        e.trace = r.value();
        used += e.trace->memoryBytes();
        e.label = f.worker;
        e.path = f.path.string();
        e.rank = di.present && di.rank >= 0 ? di.rank : workerIndex[f.worker];
        e.span = spanCount[f.worker]++;
        session.traces.push_back(std::move(e));
    }
    if (session.traces.empty())
        return Error{ErrorKind::NoTraces,
                     path.string() + ": none of the trace files could be read (" +
                         session.problems.front() + ")",
                     UINT64_MAX};
    std::stable_sort(session.traces.begin(), session.traces.end(), [](const auto& a, const auto& b) {
        return a.rank != b.rank ? a.rank < b.rank : a.span < b.span;
    });
    return session;
}

} // namespace stallscope::importers
