#include "arg_values.h"

namespace stallscope::analysis::detail {

std::vector<std::vector<int64_t>> parseDims(std::string_view j) {
    std::vector<std::vector<int64_t>> out;
    int depth = 0;
    int64_t num = -1;
    for (char ch : j) {
        if (ch == '[') {
            if (++depth == 2) out.emplace_back();
        } else if (ch == ']' || ch == ',') {
            if (num >= 0 && depth == 2 && !out.empty()) out.back().push_back(num);
            num = -1;
            if (ch == ']') --depth;
        } else if (ch >= '0' && ch <= '9') {
            num = (num < 0 ? 0 : num) * 10 + (ch - '0');
            if (num > (int64_t(1) << 40)) num = int64_t(1) << 40; // nonsense dims stay finite
        } else if (ch == '"') {
            // a string inside the list (never a shape): ends any number
            num = -1;
        }
    }
    return out;
}

std::optional<int64_t> argInteger(std::string_view j) {
    while (!j.empty() && (j.front() == ' ' || j.front() == '"')) j.remove_prefix(1);
    while (!j.empty() && (j.back() == ' ' || j.back() == '"')) j.remove_suffix(1);
    if (j.empty()) return std::nullopt;
    int64_t v = 0;
    size_t i = 0;
    for (; i < j.size() && j[i] >= '0' && j[i] <= '9'; ++i) {
        if (v > (int64_t(1) << 50)) return std::nullopt; // no message is this large
        v = v * 10 + (j[i] - '0');
    }
    if (i == 0) return std::nullopt;
    if (i < j.size()) { // "2049000.0" only
        if (j[i] != '.') return std::nullopt;
        for (++i; i < j.size(); ++i)
            if (j[i] != '0') return std::nullopt;
    }
    return v;
}

std::optional<std::string> argString(std::string_view j) {
    if (j.size() < 2 || j.front() != '"' || j.back() != '"') return std::nullopt;
    j = j.substr(1, j.size() - 2);
    if (j.find('\\') != std::string_view::npos) return std::nullopt;
    return std::string(j);
}

} // namespace stallscope::analysis::detail
