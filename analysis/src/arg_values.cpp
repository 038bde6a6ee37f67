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

std::vector<std::string> parseStrings(std::string_view j) {
    std::vector<std::string> out;
    size_t at = j.find('[');
    if (at == std::string_view::npos) return out;
    for (++at; at < j.size(); ++at) {
        const char ch = j[at];
        if (ch == ']') break;
        if (ch == ',' || ch == ' ' || ch == '\n') continue;
        if (ch != '"') {
            out.emplace_back(); // a non-string item
            while (at + 1 < j.size() && j[at + 1] != ',' && j[at + 1] != ']') ++at;
            continue;
        }
        std::string v;
        for (++at; at < j.size() && j[at] != '"'; ++at) {
            if (j[at] == '\\' && at + 1 < j.size()) ++at; // \" and \\ keep the character
            v += j[at];
        }
        out.push_back(std::move(v));
    }
    return out;
}

std::string compactJson(std::string_view j) {
    std::string out;
    out.reserve(j.size());
    bool inString = false;
    for (char ch : j) {
        if (ch == '"') inString = !inString;
        if (!inString && (ch == ' ' || ch == '\n' || ch == '\t')) continue;
        out += ch;
        if (!inString && ch == ',') out += ' ';
    }
    return out;
}

} // namespace stallscope::analysis::detail
