// Rank summaries: see rank_summary.h.
#include "stallscope/workspace/rank_summary.h"

#include "stallscope/analysis/analysis_json.h"
#include "stallscope/importers/tensorboard_folder.h"

#include <simdjson.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace stallscope::workspace {

using namespace analysis;
using base::Error;
using base::ErrorKind;
namespace dom = simdjson::dom;

namespace {

struct Reader {
    std::string problem; // the first missing or mistyped field

    bool fail(std::string_view what) {
        if (problem.empty()) problem = std::string(what);
        return false;
    }
    template <class T> bool get(dom::object o, std::string_view key, T& out) {
        auto v = o[key];
        if (v.error()) return fail("no \"" + std::string(key) + "\"");
        if constexpr (std::is_same_v<T, std::string>) {
            std::string_view s;
            if (v.get(s)) return fail("\"" + std::string(key) + "\" is not a string");
            out = std::string(s);
        } else if constexpr (std::is_same_v<T, double>) {
            double d;
            if (v.get(d)) return fail("\"" + std::string(key) + "\" is not a number");
            out = d;
        } else {
            int64_t i;
            if (v.get(i)) return fail("\"" + std::string(key) + "\" is not an integer");
            if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max())
                return fail("\"" + std::string(key) + "\" is out of range");
            out = static_cast<T>(i);
        }
        return true;
    }
    bool causes(dom::object o, std::string_view key, CauseArray& out) {
        dom::object c;
        if (o[key].get(c)) return fail("no object \"" + std::string(key) + "\"");
        for (size_t k = 0; k < kIdleCauseCount; ++k) {
            // Summaries written before the allocator/setup/jit causes existed lack them.
            const auto cause = static_cast<IdleCause>(k);
            if (k > static_cast<size_t>(IdleCause::GpuDependency) &&
                c[idleCauseName(cause)].error() == simdjson::NO_SUCH_FIELD) {
                out[k] = 0;
                continue;
            }
            if (!get(c, idleCauseName(cause), out[k])) return false;
        }
        return true;
    }
    bool array(dom::object o, std::string_view key, dom::array& out) {
        if (o[key].get(out)) return fail("no array \"" + std::string(key) + "\"");
        return true;
    }
};

} // namespace

std::string absoluteTracePath(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(path, ec);
    return ec ? path : abs.lexically_normal().string();
}

std::vector<RankInput> rankInputs(const Workspace& ws) {
    std::vector<RankInput> out;
    out.reserve(ws.series.size());
    for (const RankSeries& s : ws.series) {
        const Capture& c = s.summarisedBy();
        if (c.trace >= ws.traces.size()) continue;
        const AnalysedTrace& at = ws.traces[c.trace];
        // Without a rank (-1): its position, as a folder's files are numbered.
        out.push_back({at.entry.rank >= 0 ? at.entry.rank : int32_t(out.size()), at.entry.label,
                       at.entry.trace.get(), at.analysis.get(), absoluteTracePath(at.entry.path)});
    }
    return out;
}

std::string rankSummaryJson(const RankDigest& digest) {
    base::JsonWriter w(true);
    writeRankDigestJson(w, digest);
    return w.str() + "\n";
}

namespace {

base::Result<RankDigest> parseDigest(dom::object o) {
    std::string schema;
    Reader r;
    if (!r.get(o, "schema", schema) || schema != kRankSummarySchema)
        return Error{ErrorKind::InvalidStructure, "not a Stallscope rank summary (schema " +
                                                      std::string(kRankSummarySchema) +
                                                      " expected)"};
    RankDigest d;
    r.get(o, "rank", d.rank) && r.get(o, "label", d.label) && r.get(o, "path", d.path) &&
        r.get(o, "device", d.device) && r.get(o, "device_name", d.deviceName) &&
        r.get(o, "window_start_ns", d.windowStartNs) && r.get(o, "window_end_ns", d.windowEndNs) &&
        r.get(o, "utilization", d.utilization) && r.causes(o, "idle", d.idle);
    dom::array steps, collectives, findings;
    if (r.problem.empty() && r.array(o, "steps", steps))
        for (dom::element e : steps) {
            dom::object so;
            if (e.get(so)) {
                r.fail("a step is not an object");
                break;
            }
            DigestStep s;
            if (!(r.get(so, "number", s.number) && r.get(so, "label", s.label) &&
                  r.get(so, "start_ns", s.startNs) && r.get(so, "end_ns", s.endNs) &&
                  r.get(so, "busy_ns", s.busyNs) && r.causes(so, "idle", s.idle)))
                break;
            d.steps.push_back(std::move(s));
        }
    if (r.problem.empty() && r.array(o, "collectives", collectives))
        for (dom::element e : collectives) {
            dom::object co;
            if (e.get(co)) {
                r.fail("a collective is not an object");
                break;
            }
            DigestCollective c;
            if (!(r.get(co, "name", c.name) && r.get(co, "start_ns", c.startNs) &&
                  r.get(co, "end_ns", c.endNs) && r.get(co, "step", c.step) &&
                  r.get(co, "phase", c.phase) && r.get(co, "before_busy_ns", c.beforeBusyNs) &&
                  r.causes(co, "before_idle", c.beforeIdle)))
                break;
            // Kineto's NCCL Seq and process group: in summaries of traces that have them.
            if (!co["seq"].error() &&
                !(r.get(co, "seq", c.seq) && r.get(co, "process_group", c.group)))
                break;
            if (c.step >= int32_t(d.steps.size())) {
                r.fail("a collective's \"step\" is past the steps");
                break;
            }
            d.collectives.push_back(std::move(c));
        }
    if (r.problem.empty() && r.array(o, "findings", findings))
        for (dom::element e : findings) {
            dom::object fo;
            if (e.get(fo)) {
                r.fail("a finding is not an object");
                break;
            }
            DigestFinding f;
            std::string kind;
            if (!(r.get(fo, "kind", kind) && r.get(fo, "saving_share", f.savingShare) &&
                  r.get(fo, "title", f.title)))
                break;
            if (!findingKindFromName(kind, f.kind)) {
                r.fail("unknown finding kind \"" + kind + "\"");
                break;
            }
            d.findings.push_back(std::move(f));
        }
    if (!r.problem.empty()) return Error{ErrorKind::InvalidStructure, "rank summary: " + r.problem};
    // Times as the model keeps them: 0 <= start <= end < 2^62 ns, durations and shares >= 0.
    constexpr int64_t kMax = int64_t(1) << 62;
    auto span = [&](int64_t a, int64_t b) { return a >= 0 && a <= b && b < kMax; };
    auto causes = [](const CauseArray& c) {
        for (int64_t v : c)
            if (v < 0 || v >= kMax) return false;
        return true;
    };
    // A window or step of at most 2^50 ns (13 days), its idle causes summing to no more than
    // its length: so that sums over thousands of ranks stay far inside int64 (a hostile
    // summary once made `merge` print -4611686018.427 s).
    constexpr int64_t kMaxLength = int64_t(1) << 50;
    auto within = [&](const CauseArray& c, int64_t length) {
        int64_t sum = 0;
        for (int64_t v : c) {
            sum += v; // each < 2^62 and at most a dozen: no overflow before the check
            if (sum > length) return false;
        }
        return true;
    };
    std::string bad;
    if (!span(d.windowStartNs, d.windowEndNs) || d.windowEndNs - d.windowStartNs > kMaxLength)
        bad = "the window is not 0 <= start <= end < 2^62 ns, at most 2^50 ns long";
    else if (!(d.utilization >= 0 && d.utilization <= 1))
        bad = "\"utilization\" is not in [0, 1]";
    else if (!causes(d.idle) || !within(d.idle, d.windowEndNs - d.windowStartNs))
        bad = "an idle time is negative, or the idle times add up to more than the window";
    for (const DigestStep& st : d.steps)
        if (bad.empty() && (!span(st.startNs, st.endNs) || st.endNs - st.startNs > kMaxLength ||
                            st.busyNs < 0 || st.busyNs > st.endNs - st.startNs ||
                            !causes(st.idle) || !within(st.idle, st.endNs - st.startNs)))
            bad = "step " + std::to_string(st.number) + " has impossible times";
    for (const DigestCollective& c : d.collectives)
        if (bad.empty() &&
            (!span(c.startNs, c.endNs) || c.beforeBusyNs < 0 || !causes(c.beforeIdle)))
            bad = "a collective has impossible times";
    for (const DigestFinding& f : d.findings)
        if (bad.empty() && !(f.savingShare >= 0 && f.savingShare <= 1))
            bad = "a finding's saving is not in [0, 1]";
    if (!bad.empty()) return Error{ErrorKind::InvalidStructure, "rank summary: " + bad};
    return d;
}

base::Result<dom::object> parseRoot(dom::parser& parser, std::string_view json) {
    dom::element root;
    if (auto e = parser.parse(json.data(), json.size()).get(root))
        return Error{ErrorKind::InvalidJson,
                     std::string("not JSON: ") + simdjson::error_message(e)};
    dom::object o;
    if (root.get(o)) return Error{ErrorKind::InvalidStructure, "not a JSON object"};
    return o;
}

std::string fileText(const std::string& path, base::Error& error) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        error = Error{ErrorKind::NotFound, path + ": no such file"};
        return {};
    }
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!f && !f.eof()) error = Error{ErrorKind::Unreadable, path + ": cannot be read"};
    return ss.str();
}

} // namespace

base::Result<RankDigest> parseRankSummary(std::string_view json) {
    dom::parser parser;
    auto o = parseRoot(parser, json);
    if (!o) return o.error();
    return parseDigest(o.value());
}

base::Result<std::vector<RankDigest>> parseRankSummaries(std::string_view json) {
    dom::parser parser;
    auto o = parseRoot(parser, json);
    if (!o) return o.error();
    std::string_view schema;
    if (!o.value()["schema"].get(schema) && schema == kRankSummariesSchema) {
        dom::array ranks;
        if (o.value()["ranks"].get(ranks))
            return Error{ErrorKind::InvalidStructure, "rank summaries: no array \"ranks\""};
        std::vector<RankDigest> out;
        for (dom::element e : ranks) {
            dom::object one;
            if (e.get(one))
                return Error{ErrorKind::InvalidStructure,
                             "rank summaries: a rank is not an object"};
            auto d = parseDigest(one);
            if (!d) return d.error();
            out.push_back(std::move(d.value()));
        }
        return out;
    }
    auto d = parseDigest(o.value());
    if (!d) return d.error();
    return std::vector<RankDigest>{std::move(d.value())};
}

std::string rankSummariesJson(const std::vector<RankDigest>& digests) {
    base::JsonWriter w(true);
    w.beginObject();
    w.key("schema").value(kRankSummariesSchema);
    w.key("ranks").beginArray();
    for (const RankDigest& d : digests) writeRankDigestJson(w, d);
    w.endArray();
    w.endObject();
    return w.str() + "\n";
}

base::Result<std::vector<RankDigest>> readRankSummaries(const std::string& path) {
    base::Error error{ErrorKind::NotFound, ""};
    const std::string text = fileText(path, error);
    if (!error.message.empty()) return error;
    auto r = parseRankSummaries(text);
    if (!r) return Error{r.error().kind, path + ": " + r.error().message};
    return r;
}

base::Result<RankDigest> readRankSummary(const std::string& path) {
    base::Error error{ErrorKind::NotFound, ""};
    const std::string text = fileText(path, error);
    if (!error.message.empty()) return error;
    auto r = parseRankSummary(text);
    if (!r) return Error{r.error().kind, path + ": " + r.error().message};
    return r;
}

bool isRankSummaryFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    char head[512] = {};
    f.read(head, sizeof head - 1);
    const std::string_view text(head, size_t(f.gcount()));
    // The writer puts "schema" first; allow whitespace and a few keys before it.
    if (text.find('{') == std::string_view::npos) return false;
    for (std::string_view schema : {kRankSummarySchema, kRankSummariesSchema})
        if (text.find(std::string("\"schema\": \"") + std::string(schema) + "\"") !=
            std::string_view::npos)
            return true;
    return false;
}

std::vector<std::string> rankSummaryFiles(const std::string& path) {
    std::vector<std::string> out;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
            const std::string name = e.path().filename().string();
            if (e.is_regular_file(ec) && name.size() > 13 &&
                name.compare(name.size() - 13, 13, ".summary.json") == 0)
                out.push_back(e.path().string());
        }
        std::sort(out.begin(), out.end());
    } else if (isRankSummaryFile(path)) {
        out.push_back(path);
    }
    return out;
}

size_t rankTraceFileCount(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_directory(path, ec)) return 0;
    const auto runs = importers::findTensorBoardRuns(path);
    return runs.empty() ? 0 : runs.front().files.size();
}

base::Result<RankSet> digestRanks(const std::string& path, const LoadOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    RankSet set;
    auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    if (const std::vector<std::string> summaries = rankSummaryFiles(path); !summaries.empty()) {
        set.fromSummaries = true;
        for (size_t i = 0; i < summaries.size(); ++i) {
            if (options.cancel && options.cancel->load())
                return Error{ErrorKind::Cancelled, "cancelled"};
            auto d = readRankSummaries(summaries[i]);
            if (!d)
                set.problems.push_back(d.error().message);
            else
                for (RankDigest& one : d.value()) set.digests.push_back(std::move(one));
            if (options.progress)
                options.progress(double(i + 1) / double(summaries.size()),
                                 "rank summary " + std::to_string(i + 1) + " of " +
                                     std::to_string(summaries.size()));
        }
    } else {
        const auto runs = importers::findTensorBoardRuns(path);
        if (runs.empty() || runs.front().files.empty())
            return Error{ErrorKind::NoTraces, path + ": no rank summaries or trace files"};
        const auto& files = runs.front().files;
        // A worker's position (its rank without distributedInfo) and each file's place among
        // its worker's captures, as the importer numbers them (importer.cpp).
        std::map<std::string, int32_t> workerIndex;
        std::vector<int32_t> spanOf(files.size());
        {
            std::map<std::string, int32_t> spans;
            for (size_t i = 0; i < files.size(); ++i) {
                workerIndex.emplace(files[i].worker, int32_t(workerIndex.size()));
                spanOf[i] = spans[files[i].worker]++;
            }
        }
        struct Digested {
            RankDigest digest;
            Capture capture;
        };
        std::vector<std::vector<Digested>> out(files.size());
        std::vector<std::string> problems(files.size());
        std::atomic<size_t> next{0}, done{0};
        std::mutex progressMutex;
        LoadOptions one = options;
        one.analysisThreads = 1;
        one.threads = 1;
        one.progress = nullptr;
        one.timelineIndex = false;
        one.partial = nullptr;
        auto work = [&] {
            for (size_t i; (i = next++) < files.size();) {
                if (options.cancel && options.cancel->load()) return;
                auto ws = loadAndAnalyse(files[i].path.string(), one);
                if (!ws)
                    problems[i] = files[i].path.filename().string() + ": " + ws.error().message;
                else
                    // Every rank of the file (a file may hold several: ranks_in_one_file.h).
                    for (const AnalysedTrace& at : ws.value().traces) {
                        const bool several = ws.value().traces.size() > 1;
                        const bool ranked =
                            several ||
                            (at.entry.trace->metadata().distributed.present && at.entry.rank >= 0);
                        Digested d{
                            digestRank({ranked ? at.entry.rank : workerIndex.at(files[i].worker),
                                        several ? files[i].worker + " · rank " +
                                                      std::to_string(at.entry.rank)
                                                : files[i].worker,
                                        at.entry.trace.get(), at.analysis.get(),
                                        absoluteTracePath(files[i].path.string())}),
                            describeCapture(*at.entry.trace, *at.analysis)};
                        d.capture.span = spanOf[i];
                        d.capture.path = d.digest.path;
                        d.capture.tag = files[i].spanTag;
                        out[i].push_back(std::move(d));
                    }
                const size_t n = ++done;
                if (options.progress) {
                    std::lock_guard<std::mutex> lock(progressMutex);
                    options.progress(double(n) / double(files.size()),
                                     "rank " + std::to_string(n) + " of " +
                                         std::to_string(files.size()));
                }
            }
        };
        const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
        const unsigned threads = std::min<unsigned>(
            options.analysisThreads ? options.analysisThreads : hw, unsigned(files.size()));
        // The ranks loaded at once share the memory budget.
        one.memoryBudgetBytes = memoryBudgetOf(options);
        if (one.memoryBudgetBytes) one.memoryBudgetBytes /= std::max(1u, threads);
        std::vector<std::thread> pool;
        for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
        work();
        for (auto& t : pool) t.join();
        if (options.cancel && options.cancel->load())
            return Error{ErrorKind::Cancelled, "cancelled"};
        // Each rank once: its captures in time order, represented by the latest steady one
        // (capture_series.h), never a warm-up capture when a steady one exists.
        std::map<int32_t, std::vector<Digested>> byRank;
        for (size_t i = 0; i < files.size(); ++i) {
            for (Digested& d : out[i]) byRank[d.digest.rank].push_back(std::move(d));
            if (!problems[i].empty()) set.problems.push_back(problems[i]);
        }
        for (auto& [rank, captures] : byRank) {
            std::stable_sort(
                captures.begin(), captures.end(), [](const Digested& a, const Digested& b) {
                    return a.capture.span != b.capture.span ? a.capture.span < b.capture.span
                                                            : a.capture.startNs < b.capture.startNs;
                });
            RankSeries s;
            s.rank = rank;
            s.label = captures.front().digest.label;
            for (const Digested& d : captures) s.captures.push_back(d.capture);
            s.representative = representativeCapture(s.captures);
            set.digests.push_back(std::move(captures[s.representative].digest));
            set.series.push_back(std::move(s));
        }
    }
    if (set.digests.empty())
        return Error{
            ErrorKind::NoTraces,
            path + ": no rank could be read" +
                (set.problems.empty() ? std::string() : " (" + set.problems.front() + ")")};
    std::stable_sort(set.digests.begin(), set.digests.end(),
                     [](const RankDigest& a, const RankDigest& b) { return a.rank < b.rank; });
    set.seconds = seconds();
    return set;
}

} // namespace stallscope::workspace
