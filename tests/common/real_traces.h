#pragma once
// The corpus's trace files, told apart by content as a user's file would be
// (importers::sniffPath): Chrome/Kineto JSON, plain or gzip. The corpus also holds allocator
// snapshots, Nsight and RPD databases, rocprofv3 JSON and memory timelines (MANIFEST.md), which
// the tests that walk every trace must not take for traces.
#include "test_support.h"

#include "stallscope/importers/format_sniffer.h"
#include "stallscope/importers/input_format.h"

#include <algorithm>
#include <filesystem>
#include <vector>

namespace stallscope::test {

inline bool isTraceFile(const std::filesystem::path& p) {
    const importers::InputFormat f = importers::sniffPath(p);
    return f == importers::InputFormat::ChromeJson || f == importers::InputFormat::Gzip;
}

/// Every Chrome/Kineto trace file under the corpus, sorted (documentation and scripts are
/// not JSON: they are left out by content too).
inline std::vector<std::filesystem::path> realTraceFiles() {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(sharedTraces()))
        if (e.is_regular_file() && isTraceFile(e.path())) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace stallscope::test
