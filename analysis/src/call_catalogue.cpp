#include "stallscope/analysis/call_catalogue.h"

#include "catalogue_lines.h"

#include <array>
#include <cstdlib>

namespace stallscope::analysis {

namespace detail {
extern const char* const kCallCatalogueText; // generated from analysis/data/call_catalogue.txt
}

namespace {
constexpr std::array<std::string_view, size_t(CallFamily::Count)> kNames{
    "none",     "launch", "copy", "copy_sync", "stream",  "sync", "alloc",
    "resource", "module", "jit",  "compile",   "capture", "query"};
} // namespace

std::string_view callFamilyName(CallFamily f) {
    return kNames[std::min<size_t>(size_t(f), kNames.size() - 1)];
}

std::optional<CallCatalogue> CallCatalogue::parse(std::string_view text, std::string& error) {
    CallCatalogue cat;
    const bool ok = detail::forEachCatalogueLine(
        text, 2,
        [&](const detail::CatalogueLine& l) -> std::string {
            if (l.rest.empty()) return "expected FAMILY MATCH PATTERN";
            Rule r{};
            r.line = l.number;
            size_t f = 1;
            while (f < kNames.size() && kNames[f] != l.words[0]) ++f;
            if (f == kNames.size()) return "unknown family '" + std::string(l.words[0]) + "'";
            r.family = CallFamily(f);
            if (l.words[1] == "exact")
                r.match = Rule::Match::Exact;
            else if (l.words[1] == "prefix")
                r.match = Rule::Match::Prefix;
            else if (l.words[1] == "contains")
                r.match = Rule::Match::Contains;
            else
                return "unknown match '" + std::string(l.words[1]) +
                       "' (exact, prefix or contains)";
            r.pattern = std::string(l.rest);
            cat.m_rules.push_back(std::move(r));
            return {};
        },
        error);
    if (!ok) return std::nullopt;
    return cat;
}

const CallCatalogue& CallCatalogue::builtIn() {
    static const CallCatalogue cat = [] {
        std::string error;
        auto c = parse(detail::kCallCatalogueText, error);
        if (!c) std::abort(); // the built-in file is checked by test_call_catalogue
        return std::move(*c);
    }();
    return cat;
}

CallFamily CallCatalogue::classify(std::string_view name) const {
    for (const Rule& r : m_rules) {
        const bool hit = r.match == Rule::Match::Exact ? name == r.pattern
                         : r.match == Rule::Match::Prefix
                             ? name.starts_with(r.pattern)
                             : name.find(r.pattern) != std::string_view::npos;
        if (hit) return r.family;
    }
    return CallFamily::None;
}

CallFamily classifyCall(std::string_view name) {
    return CallCatalogue::builtIn().classify(name);
}

} // namespace stallscope::analysis
