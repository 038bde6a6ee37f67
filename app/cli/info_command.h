#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace stallscope::cli {

struct InfoOptions {
    bool json = false;
    unsigned threads = 0;
    std::vector<std::string> paths;
};

/// `stallscope-cli info`: returns the process exit code (0 ok, 1 unreadable input).
int runInfo(const InfoOptions& options, std::ostream& out, std::ostream& err);

} // namespace stallscope::cli
