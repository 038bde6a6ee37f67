#include "stallscope/importers/tensorboard_folder.h"

#include <algorithm>
#include <system_error>

namespace fs = std::filesystem;

namespace stallscope::importers {

TraceFileName parseTraceFileName(const std::string& name) {
    TraceFileName r;
    std::string stem;
    for (const char* suffix : {".pt.trace.json.gz", ".pt.trace.json"}) {
        const std::string s(suffix);
        if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
            stem = name.substr(0, name.size() - s.size());
            r.matches = true;
            break;
        }
    }
    if (!r.matches) return r;
    // Optional ".<digits>" span tag at the end of the stem (the regex's lazy group 1).
    const auto dot = stem.rfind('.');
    if (dot != std::string::npos && dot + 1 < stem.size() &&
        std::all_of(stem.begin() + static_cast<long>(dot) + 1, stem.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
        r.worker = stem.substr(0, dot);
        r.spanTag = stem.substr(dot + 1);
    } else {
        r.worker = stem;
    }
    return r;
}

namespace {
TensorBoardRun scanFolder(const fs::path& folder) {
    TensorBoardRun run;
    run.folder = folder;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        if (!entry.is_regular_file(ec)) continue;
        const TraceFileName n = parseTraceFileName(entry.path().filename().string());
        if (n.matches) run.files.push_back({entry.path(), n.worker, n.spanTag});
    }
    std::sort(run.files.begin(), run.files.end(), [](const auto& a, const auto& b) {
        if (a.worker != b.worker) return a.worker < b.worker;
        if (a.spanTag.size() != b.spanTag.size()) return a.spanTag.size() < b.spanTag.size();
        return a.spanTag < b.spanTag;
    });
    return run;
}
} // namespace

std::vector<TensorBoardRun> findTensorBoardRuns(const fs::path& root) {
    std::vector<TensorBoardRun> runs;
    TensorBoardRun self = scanFolder(root);
    if (!self.files.empty()) {
        runs.push_back(std::move(self));
        return runs;
    }
    std::error_code ec;
    std::vector<std::pair<fs::file_time_type, TensorBoardRun>> found;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
        if (!entry.is_directory(ec)) continue;
        TensorBoardRun r = scanFolder(entry.path());
        if (r.files.empty()) continue;
        fs::file_time_type newest{};
        for (const auto& f : r.files) newest = std::max(newest, fs::last_write_time(f.path, ec));
        found.emplace_back(newest, std::move(r));
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second.folder < b.second.folder;
    });
    for (auto& [t, r] : found) runs.push_back(std::move(r));
    if (!runs.empty()) return runs;
    // Not a TensorBoard log: the folder's own *.json / *.json.gz files are the ranks
    // ("sampled_rank-0.json.gz", "rank3.json"), each named by its file name without the
    // extension; a file that is not a trace is skipped with its reason when imported.
    // Rank summaries (*.summary.json) are not traces.
    TensorBoardRun plain;
    plain.folder = root;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
        if (!entry.is_regular_file(ec)) continue;
        const std::string name = entry.path().filename().string();
        auto endsWith = [&](std::string_view suffix) {
            return name.size() > suffix.size() &&
                   name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
        };
        if (endsWith(".summary.json")) continue;
        for (std::string_view ext : {".json.gz", ".json"})
            if (endsWith(ext)) {
                plain.files.push_back({entry.path(), name.substr(0, name.size() - ext.size()), {}});
                break;
            }
    }
    std::sort(plain.files.begin(), plain.files.end(),
              [](const auto& a, const auto& b) { return a.worker < b.worker; });
    if (!plain.files.empty()) runs.push_back(std::move(plain));
    return runs;
}

} // namespace stallscope::importers
