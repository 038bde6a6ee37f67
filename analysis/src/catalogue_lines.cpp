#include "catalogue_lines.h"

namespace stallscope::analysis::detail {

namespace {
std::string_view nextWord(std::string_view& s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) {
        s = {};
        return {};
    }
    size_t e = s.find_first_of(" \t", b);
    if (e == std::string_view::npos) e = s.size();
    const std::string_view w = s.substr(b, e - b);
    s.remove_prefix(e);
    return w;
}
} // namespace

bool forEachCatalogueLine(std::string_view text, size_t nWords,
                          const std::function<std::string(const CatalogueLine&)>& rule,
                          std::string& error) {
    int lineNo = 0;
    while (!text.empty()) {
        ++lineNo;
        const size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        const size_t first = line.find_first_not_of(" \t");
        if (first == std::string_view::npos || line[first] == '#') continue;
        CatalogueLine l;
        l.number = lineNo;
        std::string_view rest = line;
        for (size_t i = 0; i < nWords && i < l.words.size(); ++i) l.words[i] = nextWord(rest);
        const size_t p = rest.find_first_not_of(" \t");
        l.rest = p == std::string_view::npos ? std::string_view() : rest.substr(p);
        while (!l.rest.empty() && (l.rest.back() == ' ' || l.rest.back() == '\t'))
            l.rest.remove_suffix(1);
        const std::string what = rule(l);
        if (!what.empty()) {
            error = "line " + std::to_string(lineNo) + ": " + what;
            return false;
        }
    }
    return true;
}

} // namespace stallscope::analysis::detail
