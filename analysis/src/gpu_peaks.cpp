#include "stallscope/analysis/gpu_peaks.h"

#include "catalogue_lines.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace stallscope::analysis {

namespace detail {
extern const char* const kGpuPeaksText;
} // namespace detail

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& ch : out) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool number(std::string_view s, double& out) {
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0;
}

/// One "key=value" of a line into `g`; the error text, or "" when it was read.
std::string readValue(std::string_view key, std::string_view value, GpuPeaks& g) {
    double v = 0;
    if (key == "source") {
        if (value.substr(0, 8) != "https://" && value.substr(0, 7) != "http://")
            return "source= takes a URL";
        g.source = std::string(value);
        return {};
    }
    if (key == "cc") {
        const size_t dot = value.find('.');
        double major = 0, minor = 0;
        if (dot == std::string_view::npos || !number(value.substr(0, dot), major) ||
            !number(value.substr(dot + 1), minor))
            return "cc= takes MAJOR.MINOR";
        g.ccMajor = int(major);
        g.ccMinor = int(minor);
        return {};
    }
    if (!number(value, v)) return "a number expected for " + std::string(key);
    if (key == "sms")
        g.sms = int(v);
    else if (key == "mem_gb")
        g.memGb = v;
    else if (key == "bw_tbps")
        g.bandwidthTbps = v;
    else {
        for (size_t p = 1; p < size_t(Precision::Count); ++p)
            if (precisionName(Precision(p)) == key) {
                g.tflops[p] = v;
                return {};
            }
        return "unknown key '" + std::string(key) + "'";
    }
    return {};
}

} // namespace

std::optional<GpuPeakTable> GpuPeakTable::parse(std::string_view text, std::string& error) {
    GpuPeakTable t;
    const bool ok = detail::forEachCatalogueLine(
        text, 2,
        [&](const detail::CatalogueLine& l) -> std::string {
            if (l.words[0] != "gpu") return "a line starts with 'gpu KEY |'";
            GpuPeaks g;
            g.key = std::string(l.words[1]);
            g.line = l.number;
            std::string_view rest = l.rest;
            if (rest.empty() || rest.front() != '|') return "'|' expected after the key";
            rest.remove_prefix(1);
            size_t field = 0;
            while (!rest.empty() || field == 0) {
                const size_t bar = rest.find('|');
                const std::string_view f = trim(rest.substr(0, bar));
                rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
                if (field++ == 0) { // MATCH: substrings joined by '&'
                    std::string_view m = f;
                    while (!m.empty()) {
                        const size_t amp = m.find('&');
                        const std::string_view part = trim(m.substr(0, amp));
                        if (!part.empty()) g.match.push_back(lower(part));
                        m = amp == std::string_view::npos ? std::string_view() : m.substr(amp + 1);
                    }
                    if (g.match.empty()) return "a MATCH is needed";
                    continue;
                }
                std::string_view kvs = f;
                while (!kvs.empty()) {
                    const size_t sp = kvs.find(' ');
                    const std::string_view kv = kvs.substr(0, sp);
                    kvs = sp == std::string_view::npos ? std::string_view()
                                                       : trim(kvs.substr(sp + 1));
                    const size_t eq = kv.find('=');
                    if (eq == std::string_view::npos)
                        return "KEY=VALUE expected, not '" + std::string(kv) + "'";
                    if (std::string e = readValue(kv.substr(0, eq), kv.substr(eq + 1), g);
                        !e.empty())
                        return e;
                }
            }
            if (g.source.empty()) return "every GPU cites its source (source=URL)";
            if (g.bandwidthTbps <= 0) return "bw_tbps= is needed";
            t.m_gpus.push_back(std::move(g));
            return {};
        },
        error);
    if (!ok) return std::nullopt;
    return t;
}

const GpuPeakTable& GpuPeakTable::builtIn() {
    static const GpuPeakTable t = [] {
        std::string error;
        auto parsed = parse(detail::kGpuPeaksText, error);
        return parsed ? std::move(*parsed) : GpuPeakTable();
    }();
    return t;
}

const GpuPeaks* GpuPeakTable::match(const model::DeviceProperties& d) const {
    if (d.name.empty()) return nullptr;
    const std::string name = lower(d.name);
    for (const GpuPeaks& g : m_gpus) {
        const bool all = std::all_of(g.match.begin(), g.match.end(), [&](const std::string& m) {
            return name.find(m) != std::string::npos;
        });
        if (!all) continue;
        if (d.computeMajor > 0 && g.ccMajor > 0 && d.computeMajor != g.ccMajor) continue;
        // A name shared by variants (an MI250X's and an MI250's GCD, an A10 and an A10G, an
        // RTX 3090 and a 3090 Ti) is told apart by the multiprocessor count.
        if (d.numSms > 0 && g.sms > 0 && d.numSms != g.sms) continue;
        return &g;
    }
    return nullptr;
}

} // namespace stallscope::analysis
