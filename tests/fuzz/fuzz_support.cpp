#include "fuzz_support.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <system_error>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace stallscope::fuzz {

[[noreturn]] void fail(const char* target, const std::string& what) {
    std::fprintf(stderr, "\n==stallscope fuzz oracle== %s: %s\n", target, what.c_str());
    std::fflush(stderr);
    std::abort();
}

namespace {

constexpr const char* kTarget = "fuzz_support";
constexpr std::string_view kScratchPrefix = "stallscope-fuzz-";

fs::path scratchRoot() {
    // /dev/shm when it has room (a container's is often 64 MB, shared by the targets running
    // side by side: a full one would fail the oracles for want of space, not for a bug).
    constexpr uintmax_t kRoom = uintmax_t(1) << 30;
    std::error_code ec;
    if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) {
        const fs::space_info space = fs::space("/dev/shm", ec);
        if (!ec && space.available >= kRoom) return "/dev/shm";
    }
    return fs::temp_directory_path(ec);
}

/// Scratch folders of processes that no longer run (a crash skips the exit handler).
void removeStaleScratch(const fs::path& root) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(kScratchPrefix, 0) != 0) continue;
        const std::string pid = name.substr(kScratchPrefix.size());
        if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code e2;
        if (!fs::exists(fs::path("/proc") / pid, e2)) fs::remove_all(it->path(), e2);
    }
}

fs::path g_scratch;

void removeScratch() {
    std::error_code ec;
    if (!g_scratch.empty()) fs::remove_all(g_scratch, ec);
}

} // namespace

const fs::path& scratchDir() {
    if (g_scratch.empty()) {
        const fs::path root = scratchRoot();
        removeStaleScratch(root);
        const fs::path dir = root / (std::string(kScratchPrefix) + std::to_string(::getpid()));
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir, ec);
        if (ec) fail(kTarget, "cannot create the scratch folder " + dir.string() + ": " + ec.message());
        g_scratch = dir;
        std::atexit(removeScratch);
    }
    return g_scratch;
}

void writeFile(const fs::path& path, std::string_view bytes) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) fail(kTarget, "cannot write " + path.string());
}

std::string gzipText(std::string_view text, int level) {
    z_stream zs{};
    if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) fail(kTarget, "deflateInit2");
    std::string out(deflateBound(&zs, static_cast<uLong>(text.size())) + 64, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    zs.avail_in = static_cast<uInt>(text.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = static_cast<uInt>(out.size());
    const int r = deflate(&zs, Z_FINISH);
    out.resize(zs.total_out);
    deflateEnd(&zs);
    if (r != Z_STREAM_END) fail(kTarget, "deflate did not finish");
    return out;
}

uint64_t inputHash(std::string_view bytes) {
    uint64_t h = 1469598103934665603ull;
    for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
}

// ---------------------------------------------------------------- JSON validator

JsonShape jsonShape(std::string_view s) {
    size_t i = 0;
    const size_t n = s.size();
    if (s.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
    auto ws = [&] {
        while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    };
    auto digits = [&] {
        const size_t from = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
        return i - from;
    };
    // Returns Valid when a scalar was read whole, Prefix when the input ends inside it.
    auto scalar = [&]() -> JsonShape {
        const char c = s[i];
        if (c == '"') {
            for (++i; i < n; ++i) {
                const auto u = static_cast<unsigned char>(s[i]);
                if (u == '"') return ++i, JsonShape::Valid;
                if (u < 0x20) return JsonShape::Invalid;
                if (u != '\\') continue;
                if (++i >= n) return JsonShape::Prefix;
                if (std::string_view("\"\\/bfnrt").find(s[i]) != std::string_view::npos) continue;
                if (s[i] != 'u') return JsonShape::Invalid;
                for (int k = 0; k < 4; ++k) {
                    if (++i >= n) return JsonShape::Prefix;
                    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return JsonShape::Invalid;
                }
            }
            return JsonShape::Prefix;
        }
        for (const std::string_view lit : {std::string_view("true"), std::string_view("false"), std::string_view("null")}) {
            if (c != lit[0]) continue;
            const size_t have = std::min(lit.size(), n - i);
            if (s.substr(i, have) != lit.substr(0, have)) return JsonShape::Invalid;
            i += have;
            return have == lit.size() ? JsonShape::Valid : JsonShape::Prefix;
        }
        if (c != '-' && !(c >= '0' && c <= '9')) return JsonShape::Invalid;
        if (c == '-') ++i;
        if (i >= n) return JsonShape::Prefix;
        if (s[i] == '0') ++i;
        else if (!digits()) return JsonShape::Invalid;
        if (i < n && s[i] == '.') {
            ++i;
            if (!digits()) return i >= n ? JsonShape::Prefix : JsonShape::Invalid;
        }
        if (i < n && (s[i] == 'e' || s[i] == 'E')) {
            ++i;
            if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
            if (!digits()) return i >= n ? JsonShape::Prefix : JsonShape::Invalid;
        }
        return i >= n ? JsonShape::Prefix : JsonShape::Valid;  // more digits could follow
    };
    enum class Want { Value, KeyOrEnd, Key, Colon, CommaOrEnd };
    std::vector<char> stack;
    Want want = Want::Value;
    while (true) {
        ws();
        if (i >= n) return stack.empty() && want == Want::CommaOrEnd ? JsonShape::Valid : JsonShape::Prefix;
        const char c = s[i];
        switch (want) {
        case Want::Value:
        case Want::KeyOrEnd:
            if (want == Want::KeyOrEnd && c == '}') {
                ++i, stack.pop_back(), want = Want::CommaOrEnd;
                continue;
            }
            if (want == Want::KeyOrEnd && c != '"') return JsonShape::Invalid;
            if (want == Want::Value && c == '[') {
                ++i, stack.push_back('[');
                ws();
                if (i < n && s[i] == ']') ++i, stack.pop_back(), want = Want::CommaOrEnd;
                continue;
            }
            if (want == Want::Value && c == '{') {
                ++i, stack.push_back('{'), want = Want::KeyOrEnd;
                continue;
            }
            [[fallthrough]];
        case Want::Key: {
            if (want == Want::Key && c != '"') return JsonShape::Invalid;
            const bool key = want != Want::Value;
            const JsonShape r = scalar();
            if (r != JsonShape::Valid) return r;
            want = key ? Want::Colon : Want::CommaOrEnd;
            continue;
        }
        case Want::Colon:
            if (c != ':') return JsonShape::Invalid;
            ++i, want = Want::Value;
            continue;
        case Want::CommaOrEnd:
            if (stack.empty()) return JsonShape::Invalid;  // text after the top-level value
            if (c == ',') {
                ++i, want = stack.back() == '{' ? Want::Key : Want::Value;
                continue;
            }
            if (c != (stack.back() == '{' ? '}' : ']')) return JsonShape::Invalid;
            ++i, stack.pop_back();
            continue;
        }
    }
}

// ---------------------------------------------------------------- model invariants

void checkModel(const char* target, const model::Trace& t) {
    auto check = [&](bool ok, const std::string& what) {
        if (!ok) fail(target, "model invariant: " + what);
    };
    const auto& s = t.slices();
    const size_t n = s.size();
    const size_t strings = t.strings().size();
    check(s.dur.size() == n && s.track.size() == n && s.name.size() == n && s.category.size() == n &&
              s.parent.size() == n && s.srcOffset.size() == n && s.srcLength.size() == n &&
              s.correlation.size() == n && s.extra.size() == n && s.kind.size() == n && s.flags.size() == n &&
              s.depth.size() == n,
          "slice columns of different lengths");
    auto validString = [&](model::StringId id) { return !id.valid() || id.index() < strings; };
    for (const auto& p : t.processes()) {
        check(validString(p.name) && validString(p.labels) && validString(p.key.text), "process string id");
    }
    // Tracks partition the slice table in order.
    uint32_t nextSlice = 0, nextInstant = 0;
    for (size_t ti = 0; ti < t.tracks().size(); ++ti) {
        const auto& tr = t.tracks()[ti];
        check(tr.process.valid() && tr.process.index() < t.processes().size(), "track's process id");
        check(validString(tr.name) && validString(tr.key.text), "track string id");
        check(tr.sliceBegin == nextSlice && tr.sliceBegin <= tr.sliceEnd && tr.sliceEnd <= n,
              "track " + std::to_string(ti) + " slice range");
        check(tr.instantBegin == nextInstant && tr.instantBegin <= tr.instantEnd &&
                  tr.instantEnd <= t.instants().size(),
              "track " + std::to_string(ti) + " instant range");
        nextSlice = tr.sliceEnd;
        nextInstant = tr.instantEnd;
        uint16_t maxDepth = 0;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            const std::string at = "slice " + std::to_string(i) + " of track " + std::to_string(ti) + ": ";
            check(s.track[i].index() == ti, at + "track column");
            check(s.dur[i] >= 0, at + "negative duration");
            check(validString(s.name[i]) && validString(s.category[i]), at + "string id");
            if (i > tr.sliceBegin) {
                const bool sorted = s.start[i - 1] < s.start[i] ||
                                    (s.start[i - 1] == s.start[i] && s.dur[i - 1] >= s.dur[i]);
                check(sorted, at + "not sorted by (start asc, dur desc)");
            }
            const model::SliceId p = s.parent[i];
            if (p.valid()) {
                check(p.index() >= tr.sliceBegin && p.index() < i, at + "parent outside the track or after it");
                check(s.depth[i] == std::min<int>(s.depth[p.index()] + 1, UINT16_MAX), at + "depth != parent's + 1");
                check(s.start[p.index()] <= s.start[i], at + "starts before its parent");
            } else {
                check(s.depth[i] == 0, at + "depth without a parent");
            }
            maxDepth = std::max(maxDepth, s.depth[i]);
        }
        check(tr.maxDepth == maxDepth, "track " + std::to_string(ti) + " maxDepth");
        for (uint32_t i = tr.instantBegin; i < tr.instantEnd; ++i) {
            check(t.instants().track[i].index() == ti, "instant track column");
            if (i > tr.instantBegin) check(t.instants().ts[i - 1] <= t.instants().ts[i], "instants not sorted");
        }
    }
    check(nextSlice == n, "tracks do not cover every slice");
    check(nextInstant == t.instants().size(), "tracks do not cover every instant");
    check(t.displayOrder().size() == t.tracks().size(), "display order size");
    {
        std::vector<bool> seen(t.tracks().size(), false);
        for (model::TrackId id : t.displayOrder()) {
            check(id.index() < seen.size() && !seen[id.index()], "display order is not a permutation");
            seen[id.index()] = true;
        }
    }
    for (const auto& f : t.flows())
        check(f.from.valid() && f.to.valid() && f.from.index() < n && f.to.index() < n && validString(f.category),
              "flow endpoint out of range");
    const size_t samples = t.counterSamples().size();
    check(t.counterSamples().value.size() == samples, "counter columns");
    for (const auto& c : t.counterSeries())
        check(c.sampleBegin <= c.sampleEnd && c.sampleEnd <= samples && c.process.index() < t.processes().size(),
              "counter series range");
    for (const auto* index : {&t.launchIndex(), &t.gpuIndex()}) {
        check(std::is_sorted(index->begin(), index->end()), "correlation index not sorted");
        for (const auto& e : *index)
            check(e.slice.index() < n && s.correlation[e.slice.index()] == e.correlation, "correlation index entry");
    }
    if (n + t.instants().size() + samples + t.memorySamples().size() > 0) {
        check(t.startNs() <= t.endNs(), "start after end");
        for (size_t i = 0; i < n; ++i) check(s.start[i] >= t.startNs(), "a slice before the trace start");
        for (int64_t ts : t.instants().ts) check(ts >= t.startNs() && ts <= t.endNs(), "an instant outside the span");
    }
    for (model::SliceId sl : {model::SliceId(0), model::SliceId(static_cast<uint32_t>(n / 2))}) {
        if (sl.index() >= n) continue;
        (void)t.launchOf(sl);
        (void)t.gpuWorkOf(sl);
        (void)t.enclosingOp(sl);
    }
    for (size_t ti = 0; ti < t.tracks().size() && ti < 8; ++ti) {
        const model::TrackId id(static_cast<uint32_t>(ti));
        const auto [b, e] = t.sliceRange(id);
        for (int64_t probe : {t.startNs(), t.endNs(), (t.startNs() / 2) + (t.endNs() / 2)}) {
            const uint32_t first = t.firstSliceEndingAtOrAfter(id, probe);
            check(first >= b && first <= e, "firstSliceEndingAtOrAfter out of the track");
            const uint32_t after = t.firstSliceStartingAfter(id, probe);
            check(after >= b && after <= e, "firstSliceStartingAfter out of the track");
        }
    }
    (void)t.memoryBytes();
    (void)t.eventCount();
}

size_t readBackEvents(const char* target, const model::Trace& t, size_t maxSlices) {
    const size_t n = t.slices().size();
    if (n == 0 || maxSlices == 0) return 0;
    const size_t step = std::max<size_t>(1, n / maxSlices);
    size_t read = 0;
    std::vector<model::ArgValue> args;
    std::string text, error;
    for (size_t i = 0; i < n; i += step) {
        const model::SliceId id(static_cast<uint32_t>(i));
        error.clear();
        if (!t.sliceArgs(id, args, error)) {
            if (error.empty()) fail(target, "sliceArgs failed without a message");
        }
        error.clear();
        if (t.sliceRawText(id, text, error)) {
            if (text.empty() || text.front() != '{' || text.back() != '}')
                fail(target, "slice " + std::to_string(i) + "'s raw text is not an object: '" + text.substr(0, 80) + "'");
            ++read;
        } else if (error.empty()) {
            fail(target, "sliceRawText failed without a message");
        }
    }
    return read;
}

// ---------------------------------------------------------------- comparing two traces

namespace {

std::string rowKey(const model::Trace& t, const model::RowKey& k) {
    return k.isString() ? "s:" + std::string(t.str(k.text)) : std::to_string(k.number);
}

using SliceRow = std::tuple<std::string, std::string, int64_t, int64_t, std::string, std::string, int, uint32_t,
                            uint64_t, uint64_t, uint32_t>;

/// True for rows of the process left out of a comparison.
bool skipped(const model::ProcessInfo& p, const CompareOptions& o) {
    return o.skipPid && !p.key.isString() && p.key.number == o.pid;
}

std::vector<SliceRow> sliceRows(const model::Trace& t, const CompareOptions& o) {
    const bool offsets = o.srcOffsets;
    std::vector<SliceRow> out;
    const auto& s = t.slices();
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        const auto& tr = t.track(s.track[i]);
        if (skipped(t.process(tr.process), o)) continue;
        out.emplace_back(rowKey(t, t.process(tr.process).key), rowKey(t, tr.key), s.start[i], s.dur[i],
                         std::string(t.str(s.name[i])), std::string(t.str(s.category[i])),
                         static_cast<int>(s.kind[i]), s.correlation[i], s.extra[i], offsets ? s.srcOffset[i] : 0,
                         offsets ? s.srcLength[i] : 0);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string describe(const SliceRow& r) {
    return std::get<0>(r) + "/" + std::get<1>(r) + " ts " + std::to_string(std::get<2>(r)) + " dur " +
           std::to_string(std::get<3>(r)) + " '" + std::get<4>(r) + "' cat '" + std::get<5>(r) + "' kind " +
           std::to_string(std::get<6>(r)) + " corr " + std::to_string(std::get<7>(r)) + " extra " +
           std::to_string(std::get<8>(r)) + " @" + std::to_string(std::get<9>(r)) + "+" +
           std::to_string(std::get<10>(r));
}

using InstantRow = std::tuple<std::string, std::string, int64_t, std::string, std::string, char, uint64_t>;

std::vector<InstantRow> instantRows(const model::Trace& t, const CompareOptions& o) {
    const bool offsets = o.srcOffsets;
    std::vector<InstantRow> out;
    const auto& in = t.instants();
    for (size_t i = 0; i < in.size(); ++i) {
        const auto& tr = t.track(in.track[i]);
        if (skipped(t.process(tr.process), o)) continue;
        out.emplace_back(rowKey(t, t.process(tr.process).key), rowKey(t, tr.key), in.ts[i],
                         std::string(t.str(in.name[i])), std::string(t.str(in.category[i])), in.scope[i],
                         offsets ? in.srcOffset[i] : 0);
    }
    std::sort(out.begin(), out.end());
    return out;
}

using NameRow = std::tuple<std::string, std::string, std::string, std::string, std::string, int64_t, bool, int>;

std::vector<NameRow> trackNames(const model::Trace& t, const CompareOptions& o) {
    std::vector<NameRow> out;
    for (const auto& tr : t.tracks()) {
        const auto& p = t.process(tr.process);
        if (skipped(p, o)) continue;
        out.emplace_back(rowKey(t, p.key), rowKey(t, tr.key), std::string(t.str(p.name)), std::string(t.str(tr.name)),
                         std::string(t.str(p.labels)), tr.hasSortIndex ? tr.sortIndex : 0, tr.hasSortIndex,
                         static_cast<int>(tr.kind));
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::tuple<std::string, std::string, std::string, int64_t, bool, int>> processRows(const model::Trace& t, const CompareOptions& o) {
    std::vector<std::tuple<std::string, std::string, std::string, int64_t, bool, int>> out;
    for (const auto& p : t.processes())
        if (!skipped(p, o))
            out.emplace_back(rowKey(t, p.key), std::string(t.str(p.name)), std::string(t.str(p.labels)),
                         p.hasSortIndex ? p.sortIndex : 0, p.hasSortIndex, p.gpuDevice);
    std::sort(out.begin(), out.end());
    return out;
}

using FlowRow = std::tuple<int64_t, int64_t, int64_t, int64_t, std::string, int>;

std::vector<FlowRow> flowRows(const model::Trace& t) {
    std::vector<FlowRow> out;
    const auto& s = t.slices();
    for (const auto& f : t.flows())
        out.emplace_back(s.start[f.from.index()], s.dur[f.from.index()], s.start[f.to.index()], s.dur[f.to.index()],
                         std::string(t.str(f.category)), static_cast<int>(f.kind));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::tuple<std::string, std::string, std::string, int64_t, double>> counterRows(const model::Trace& t) {
    std::vector<std::tuple<std::string, std::string, std::string, int64_t, double>> out;
    for (const auto& c : t.counterSeries())
        for (uint32_t i = c.sampleBegin; i < c.sampleEnd; ++i) {
            const double v = t.counterSamples().value[i];
            out.emplace_back(rowKey(t, t.process(c.process).key), std::string(t.str(c.name)),
                             std::string(t.str(c.key)), t.counterSamples().ts[i], v == v ? v : -0.5);
        }
    std::sort(out.begin(), out.end());
    return out;
}

template <class Rows, class Describe>
std::string firstDifference(const char* what, const Rows& a, const Rows& b, Describe describeRow) {
    if (a.size() != b.size())
        return std::string(what) + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return std::string(what) + " " + std::to_string(i) + ": " + describeRow(a[i]) + " vs " + describeRow(b[i]);
    return {};
}

} // namespace

std::string compareTraces(const model::Trace& a, const model::Trace& b, const CompareOptions& o) {
    std::string d = firstDifference("slices", sliceRows(a, o), sliceRows(b, o), describe);
    if (!d.empty()) return d;
    auto none = [](const auto&) { return std::string("(row)"); };
    if (!(d = firstDifference("instants", instantRows(a, o), instantRows(b, o),
                              [](const InstantRow& r) {
                                  return std::get<0>(r) + "/" + std::get<1>(r) + " ts " + std::to_string(std::get<2>(r)) +
                                         " '" + std::get<3>(r) + "'";
                              }))
             .empty())
        return d;
    if (!(d = firstDifference("flows", flowRows(a), flowRows(b), none)).empty()) return d;
    if (!(d = firstDifference("counter samples", counterRows(a), counterRows(b), none)).empty()) return d;
    if (a.memorySamples().size() != b.memorySamples().size()) return "memory samples differ";
    if (!(d = firstDifference("processes", processRows(a, o), processRows(b, o), [](const auto& r) {
              return std::get<0>(r) + " '" + std::get<1>(r) + "' labels '" + std::get<2>(r) + "' sort " +
                     std::to_string(std::get<3>(r)) + " gpu " + std::to_string(std::get<5>(r));
          })).empty())
        return d;
    if (!(d = firstDifference("tracks", trackNames(a, o), trackNames(b, o), [](const NameRow& r) {
              return std::get<0>(r) + "/" + std::get<1>(r) + " '" + std::get<3>(r) + "' kind " +
                     std::to_string(std::get<7>(r));
          })).empty())
        return d;
    if (a.launchIndex().size() != b.launchIndex().size() || a.gpuIndex().size() != b.gpuIndex().size())
        return "correlation index sizes differ";
    const auto &ma = a.metadata(), &mb = b.metadata();
    if (ma.devices.size() != mb.devices.size()) return "device counts differ";
    for (size_t i = 0; i < ma.devices.size(); ++i) {
        const auto &x = ma.devices[i], &y = mb.devices[i];
        if (x.id != y.id || x.name != y.name || x.numSms != y.numSms || x.computeMajor != y.computeMajor ||
            x.computeMinor != y.computeMinor || x.totalGlobalMem != y.totalGlobalMem)
            return "device " + std::to_string(i) + " differs";
    }
    if (ma.baseTimeNs != mb.baseTimeNs) return "baseTimeNanoseconds differs";
    if (ma.distributed.present != mb.distributed.present || ma.distributed.rank != mb.distributed.rank ||
        ma.distributed.worldSize != mb.distributed.worldSize)
        return "distributedInfo differs";
    if (o.span && (a.startNs() != b.startNs() || a.endNs() != b.endNs()))
        return "span differs: " + std::to_string(a.startNs()) + ".." + std::to_string(a.endNs()) + " vs " +
               std::to_string(b.startNs()) + ".." + std::to_string(b.endNs());
    if (o.diagnostics)
        for (size_t k = 0; k < static_cast<size_t>(model::DiagnosticKind::Count); ++k) {
            const auto kind = static_cast<model::DiagnosticKind>(k);
            if (a.diagnostics().count(kind) != b.diagnostics().count(kind)) {
                auto examples = [&](const model::Trace& t) {
                    std::string e;
                    for (const auto& x : t.diagnostics().examples(kind))
                        e += " @" + std::to_string(x.byteOffset) + " '" + x.detail.substr(0, 40) + "'";
                    return e;
                };
                return "diagnostic " + std::string(model::diagnosticInfo(kind).id) + ": " +
                       std::to_string(a.diagnostics().count(kind)) + " vs " + std::to_string(b.diagnostics().count(kind)) +
                       " (first:" + examples(a) + "; second:" + examples(b) + ")";
            }
        }
    if (o.importCounts) {
        const auto &sa = a.importStats(), &sb = b.importStats();
        if (sa.entries != sb.entries)
            return "entries: " + std::to_string(sa.entries) + " vs " + std::to_string(sb.entries);
        if (sa.byPhase != sb.byPhase) return "entries by phase differ";
        if (sa.byCategory != sb.byCategory) return "entries by category differ";
        if (sa.textBytes != sb.textBytes)
            return "text bytes: " + std::to_string(sa.textBytes) + " vs " + std::to_string(sb.textBytes);
    }
    return {};
}

} // namespace stallscope::fuzz
