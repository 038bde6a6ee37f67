#pragma once
// Several traces of one run (the ranks or workers of a TensorBoard folder) side by side.
#include "stallscope/model/trace.h"

#include <memory>
#include <string>
#include <vector>

namespace stallscope::model {

struct TraceEntry {
    std::shared_ptr<const Trace> trace;
    std::string label;     // worker name or file name
    std::string path;
    int32_t rank = -1;     // from distributedInfo, else the worker's position
    int32_t span = 0;      // index among the spans of one worker (tensorboard_trace_handler)
};

struct Session {
    std::string sourcePath;
    std::string sourceKind;  // "file", "tensorboard-folder"
    std::vector<TraceEntry> traces;
    /// Files of the folder that could not be loaded ("path: reason"), and other runs found
    /// next to the one loaded.
    std::vector<std::string> problems;
    std::vector<std::string> otherRuns;
    /// What the loader decided that the user should know ("8 ranks in one file, ...").
    std::vector<std::string> notes;
};

} // namespace stallscope::model
