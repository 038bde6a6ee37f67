#pragma once
// TensorBoard log folders as torch.profiler.tensorboard_trace_handler writes them:
// {worker}.{epoch_ms}.pt.trace.json[.gz] per worker (rank) and span.
#include <filesystem>
#include <string>
#include <vector>

namespace stallscope::importers {

struct TraceFileName {
    std::string worker;    // "{hostname}_{pid}" by default
    std::string spanTag;   // the epoch-ms part, may be empty
    bool matches = false;
};

/// Splits a file name by ^(.*?)(\.\d+)?\.pt\.trace\.json(\.gz)?$ .
TraceFileName parseTraceFileName(const std::string& fileName);

struct TensorBoardRun {
    std::filesystem::path folder;
    struct File {
        std::filesystem::path path;
        std::string worker;
        std::string spanTag;
    };
    std::vector<File> files;  // sorted by worker, then span
};

/// Runs under `root`: the folder itself when it holds trace files, else its sub-folders
/// that do (newest first); a folder with neither is one run of its own *.json[.gz] files
/// (a folder of per-rank traces named any other way).
std::vector<TensorBoardRun> findTensorBoardRuns(const std::filesystem::path& root);

} // namespace stallscope::importers
