// Ranks held in one file: see ranks_in_one_file.h.
#include "stallscope/importers/ranks_in_one_file.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>

namespace stallscope::importers {

using namespace model;

namespace {

/// "rank N" in a name or label (any case; ' ', '_', ':', '#', '=', '-' between), or -1.
int32_t rankInText(std::string_view text) {
    std::string low(text);
    for (char& c : low) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (size_t at = low.find("rank"); at != std::string::npos; at = low.find("rank", at + 1)) {
        if (at > 0 && std::isalpha(static_cast<unsigned char>(low[at - 1]))) continue; // "cranky"
        size_t i = at + 4;
        while (i < low.size() && std::string_view(" _:#=-").find(low[i]) != std::string_view::npos)
            ++i;
        int32_t r = -1;
        const auto [end, ec] = std::from_chars(low.data() + i, low.data() + low.size(), r);
        if (ec == std::errc() && end != low.data() + i && r >= 0) return r;
    }
    return -1;
}

/// "[TP03] 123": the tag's number (3) and the pid after it (123), else false.
bool bracketTag(std::string_view text, int32_t& tag, int64_t& pid) {
    if (text.size() < 4 || text[0] != '[') return false;
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    size_t d = close;
    while (d > 1 && std::isdigit(static_cast<unsigned char>(text[d - 1]))) --d;
    if (d == close) return false;
    if (std::from_chars(text.data() + d, text.data() + close, tag).ec != std::errc()) return false;
    size_t p = close + 1;
    while (p < text.size() && text[p] == ' ') ++p;
    pid = INT64_MIN;
    if (p < text.size()) {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data() + p, text.data() + text.size(), v);
        if (ec == std::errc() && end == text.data() + text.size()) pid = v;
    }
    return true;
}

} // namespace

RanksInFile ranksInOneTrace(const Trace& t) {
    RanksInFile out;
    const auto& procs = t.processes();
    std::vector<int32_t> rank(procs.size(), -1);
    std::vector<int64_t> textPid(procs.size(), INT64_MIN);
    bool byName = false;
    for (size_t i = 0; i < procs.size(); ++i) {
        const ProcessInfo& p = procs[i];
        int32_t r = rankInText(t.str(p.name));
        if (r < 0) r = rankInText(t.str(p.labels));
        if (p.key.isString()) {
            int32_t tag = -1;
            int64_t pid = INT64_MIN;
            if (bracketTag(t.str(p.key.text), tag, pid)) {
                textPid[i] = pid;
                if (r < 0) r = tag;
            } else if (r < 0) {
                r = rankInText(t.str(p.key.text));
            }
        }
        if (r >= 0) rank[i] = r, byName = true;
    }
    // Pid ranges: the largest power of ten under which every GPU row's pid leaves a small
    // device index, with at least two different multiples.
    // GPU rows are the processes with GPU streams (their pid may exceed a device index's
    // range, so not gpuDevice); the power of ten is at least 10^4, so that an ordinary host
    // pid (1234567) never reads as a device index above a multiple.
    int64_t unit = 0;
    std::vector<bool> gpu(procs.size(), false);
    for (const TrackInfo& tr : t.tracks())
        if (tr.kind == TrackKind::GpuStream) gpu[tr.process.index()] = true;
    {
        std::vector<int64_t> gpuPids;
        for (size_t i = 0; i < procs.size(); ++i)
            if (gpu[i] && !procs[i].key.isString() && procs[i].key.number >= 0)
                gpuPids.push_back(procs[i].key.number);
        for (int64_t m = 1'000'000'000'000'000; m >= 10'000 && !gpuPids.empty(); m /= 10) {
            std::set<int64_t> multiples;
            bool small = true;
            for (int64_t pid : gpuPids) {
                small &= pid % m < 1024;
                multiples.insert(pid / m);
            }
            if (small && multiples.size() >= 2) {
                unit = m;
                break;
            }
        }
    }
    if (unit > 0) {
        std::set<int64_t> gpuMultiples;
        for (size_t i = 0; i < procs.size(); ++i)
            if (gpu[i] && !procs[i].key.isString() && procs[i].key.number >= 0)
                gpuMultiples.insert(procs[i].key.number / unit);
        for (size_t i = 0; i < procs.size(); ++i) {
            const ProcessInfo& p = procs[i];
            if (rank[i] >= 0 || p.key.isString() || p.key.number < 0) continue;
            const int64_t m = p.key.number / unit;
            if (gpuMultiples.count(m) && m <= INT32_MAX) rank[i] = int32_t(m);
        }
    }
    std::map<int32_t, std::shared_ptr<PidSelection>> groups;
    for (size_t i = 0; i < procs.size(); ++i) {
        if (rank[i] < 0) {
            ++out.unplaced;
            continue;
        }
        auto& g = groups[rank[i]];
        if (!g) {
            g = std::make_shared<PidSelection>();
            // Pid ranges: the rank's offset comes off, so its GPUs keep their device index.
            if (unit > 0 && !byName) g->subtract = int64_t(rank[i]) * unit;
        }
        const ProcessInfo& p = procs[i];
        if (p.key.isString())
            g->texts.emplace(std::string(t.str(p.key.text)), textPid[i]);
        else
            g->numbers.insert(p.key.number);
    }
    // With names, an offset applies only when every numeric pid of the rank sits above it.
    if (byName && unit > 0)
        for (auto& [r, g] : groups) {
            bool above = !g->numbers.empty();
            for (int64_t pid : g->numbers) above &= pid / unit == r;
            if (above) g->subtract = int64_t(r) * unit;
        }
    if (groups.size() < 2) return RanksInFile{};
    for (auto& [r, g] : groups) out.ranks.push_back({r, std::move(g)});
    out.evidence = std::to_string(out.ranks.size()) + " ranks in one file, told apart by " +
                   (byName ? std::string("the processes' names (\"rank N\")")
                           : "pid ranges " + std::to_string(unit) + " apart");
    if (out.unplaced)
        out.evidence += "; " + std::to_string(out.unplaced) + " processes of no rank left out";
    return out;
}

} // namespace stallscope::importers
