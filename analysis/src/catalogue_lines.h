#pragma once
// The line format the analysis's data catalogues share (analysis/data/*.txt): one rule per
// line, blank lines and '#' comments skipped, the first words then the rest of the line.
#include <array>
#include <functional>
#include <string>
#include <string_view>

namespace stallscope::analysis::detail {

struct CatalogueLine {
    int number = 0;                          // 1-based line number
    std::array<std::string_view, 3> words{}; // the first words (empty when missing)
    std::string_view rest;                   // the rest of the line, trimmed
};

/// Calls `rule` for each rule line with its first `nWords` (at most 3) words and the rest.
/// `rule` returns an empty string to go on, or what is wrong with the line; parsing then
/// stops, `error` is "line N: <what>" and the result is false.
bool forEachCatalogueLine(std::string_view text, size_t nWords,
                          const std::function<std::string(const CatalogueLine&)>& rule,
                          std::string& error);

} // namespace stallscope::analysis::detail
