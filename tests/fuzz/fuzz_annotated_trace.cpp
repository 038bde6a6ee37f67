// Fuzz target: the annotated-trace round trip. The input is trace text; it is imported
// (from a plain file, a gzip file, or memory: chosen by the input's hash), analysed, given
// two findings of its own made from the trace's names and times (hostile text and extreme
// times reach the writer even when the analysis finds nothing), written with
// writeAnnotatedTrace (plain or gzip) and imported again.
// Promises (a difference aborts, so libFuzzer reports it as a crash):
//  * the write succeeds and the output imports;
//  * the output has one "Stallscope findings" process at the promised pid, sorted first,
//    whose slices are exactly the findings' ranges (thread = finding id, name = title,
//    category "stallscope") but those whose times the file cannot hold (counted);
//  * the original's slices come back unchanged: with the source copied, every slice,
//    instant, flow, counter, name, device and diagnostic (but those the copy repairs:
//    invalid UTF-8, an unclosed array) and every entry plus the added ones; written from
//    the model (a trace from memory), every slice's row, start, duration, name and category.
#include "fuzz_support.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/base/utf8.h"
#include "stallscope/importers/importer.h"
#include "stallscope/importers/source_text.h"
#include "stallscope/reports/annotated_trace.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace stallscope;
namespace fs = std::filesystem;
using model::DiagnosticKind;

namespace {

constexpr const char* kTarget = "annotated_trace";

std::string clean(std::string_view s) {
    std::string c(s);
    base::replaceInvalidUtf8InPlace(c.data(), c.size());
    return c;
}

/// Two findings of our own: the first slice's name in the id and the last one's as title,
/// ranges at the first and last slices (or the span).
void addOwnFindings(const model::Trace& t, analysis::AnalysisResult& a) {
    const auto& s = t.slices();
    analysis::Finding f;
    f.kind = analysis::FindingKind::LowUtilization;
    f.severity = analysis::FindingSeverity::Note;
    f.id = "fuzz/" + (s.size() ? std::string(t.str(s.name[0])) : std::string("none"));  // a thread name: never empty
    f.title = s.size() ? std::string(t.str(s.name[s.size() - 1])) : "no slices";
    f.fix = s.size() ? std::string(t.str(s.category[0])) : "";
    f.snippet = "x = \"\\\\\"\n\t</script>";
    f.savingNs = s.size() ? s.dur[0] : 0;
    f.savingShare = 0.5;
    if (s.size()) f.ranges.push_back({s.start[0], s.end(0)});
    a.findings.push_back(f);
    analysis::Finding g = f;
    g.id = "fuzz/span";
    g.ranges = {{t.startNs(), t.endNs()}};
    a.findings.push_back(g);
}

using Range = std::tuple<std::string, int64_t, int64_t, std::string>;

/// The findings' ranges the file can hold (relative to `baseNs`, ts + dur within int64 ns);
/// `skipped` counts the others.
std::vector<Range> expectedRanges(const analysis::AnalysisResult& a, int64_t baseNs, uint64_t& skipped) {
    std::vector<Range> out;
    skipped = 0;
    for (const auto& f : a.findings)
        for (const auto& r : f.ranges) {
            const int64_t length = r.end > r.start ? model::satSub(r.end, r.start) : 0;
            int64_t rel = 0, relEnd = 0;
            if (__builtin_sub_overflow(r.start, baseNs, &rel) || __builtin_add_overflow(rel, length, &relEnd)) {
                ++skipped;
                continue;
            }
            out.emplace_back(clean(f.id), r.start, length, clean(f.title));
        }
    std::sort(out.begin(), out.end());
    return out;
}

/// Slices as (pid, tid, start, dur, name, category) outside the process `pid`.
using Row = std::tuple<std::string, std::string, int64_t, int64_t, std::string, std::string>;
std::vector<Row> rowsOutside(const model::Trace& t, int64_t pid) {
    std::vector<Row> out;
    const auto& s = t.slices();
    auto key = [&](const model::RowKey& k) {
        return k.isString() ? "s:" + std::string(t.str(k.text)) : std::to_string(k.number);
    };
    for (size_t i = 0; i < s.size(); ++i) {
        const auto& tr = t.track(s.track[i]);
        const auto& p = t.process(tr.process);
        if (!p.key.isString() && p.key.number == pid) continue;
        out.emplace_back(key(p.key), key(tr.key), s.start[i], s.dur[i], std::string(t.str(s.name[i])),
                         std::string(t.str(s.category[i])));
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string describe(const Row& r) {
    return std::get<0>(r) + "/" + std::get<1>(r) + " ts " + std::to_string(std::get<2>(r)) + " dur " +
           std::to_string(std::get<3>(r)) + " '" + std::get<4>(r) + "' cat '" + std::get<5>(r) + "'";
}

void checkRows(const std::vector<Row>& want, const std::vector<Row>& got) {
    STALLSCOPE_FUZZ_CHECK(want.size() == got.size(), "the original's slices: " + std::to_string(want.size()) +
                                                          " before, " + std::to_string(got.size()) + " after");
    for (size_t i = 0; i < want.size(); ++i)
        STALLSCOPE_FUZZ_CHECK(want[i] == got[i], "slice " + std::to_string(i) + ": " + describe(want[i]) +
                                                     " came back as " + describe(got[i]));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    if (text.empty()) return 0;
    const uint64_t hash = fuzz::inputHash(text);
    const unsigned mode = hash % 4;  // 0 plain file, 1 plain file + gzip output, 2 gzip file, 3 memory
    const fs::path dir = fuzz::scratchDir();
    importers::ImportOptions options;
    options.threads = 1;

    importers::Result<std::shared_ptr<const model::Trace>> in = importers::Error{};
    if (mode == 3) {
        in = importers::importBuffer(text, options);
    } else {
        const fs::path src = dir / (mode == 2 ? "annotate-in.json.gz" : "annotate-in.json");
        fuzz::writeFile(src, mode == 2 ? fuzz::gzipText(text, 1) : text);
        in = importers::importFile(src, options);
    }
    if (!in) return 0;
    const model::Trace& orig = *in.value();
    analysis::AnalysisResult a = analysis::analyze(orig);
    addOwnFindings(orig, a);

    const fs::path out = dir / (mode == 1 || mode == 2 ? "annotated.json.gz" : "annotated.json");
    reports::AnnotatedTraceOutcome o;
    const base::Status written = reports::writeAnnotatedTrace(orig, a, out, &o);
    STALLSCOPE_FUZZ_CHECK(written.ok(),
                          "the write failed: " +
                              (written.ok() ? std::string() : written.error().message));
    // From memory the model is written; from a file the text is copied unless the writer says
    // why not (e.g. the text after the event array was cut short).
    STALLSCOPE_FUZZ_CHECK(!(mode == 3 && o.copiedSource), "a trace from memory was copied from a file");
    STALLSCOPE_FUZZ_CHECK(o.copiedSource || !o.fromModelReason.empty(), "written from the model without a reason");
    auto re = importers::importFile(out, options);
    STALLSCOPE_FUZZ_CHECK(re, "the annotated trace does not import: " + re.error().message);
    const model::Trace& back = *re.value();
    fuzz::checkModel(kTarget, back);

    // The findings process.
    const model::ProcessInfo* fp = nullptr;
    for (const auto& p : back.processes())
        if (!p.key.isString() && p.key.number == o.findingsPid) fp = &p;
    STALLSCOPE_FUZZ_CHECK(fp, "no process at the findings pid " + std::to_string(o.findingsPid));
    STALLSCOPE_FUZZ_CHECK(back.str(fp->name) == reports::kFindingsProcessName,
                          "the findings process is named '" + std::string(back.str(fp->name)) + "'");
    STALLSCOPE_FUZZ_CHECK(fp->hasSortIndex && fp->sortIndex == -1, "the findings process is not sorted first");
    for (const auto& p : orig.processes())
        STALLSCOPE_FUZZ_CHECK(p.key.isString() || p.key.number != o.findingsPid,
                              "the findings pid " + std::to_string(o.findingsPid) + " is one of the trace's");
    std::vector<Range> got;
    const auto& bs = back.slices();
    for (size_t i = 0; i < bs.size(); ++i) {
        const auto& tr = back.track(bs.track[i]);
        if (&back.process(tr.process) != fp) continue;
        STALLSCOPE_FUZZ_CHECK(back.str(bs.category[i]) == reports::kFindingsCategory, "a finding slice's category");
        got.emplace_back(std::string(back.str(tr.name)), bs.start[i], bs.dur[i], std::string(back.str(bs.name[i])));
    }
    std::sort(got.begin(), got.end());
    uint64_t skipped = 0;
    const std::vector<Range> want =
        expectedRanges(a, o.copiedSource ? orig.metadata().baseTimeNs.value_or(0) : 0, skipped);
    STALLSCOPE_FUZZ_CHECK(o.skippedRanges == skipped, "skipped ranges: " + std::to_string(o.skippedRanges) +
                                                          ", expected " + std::to_string(skipped));
    auto list = [](const std::vector<Range>& v) {
        std::string out;
        for (const auto& [track, start, dur, name] : v)
            out += " ['" + track + "' " + std::to_string(start) + "+" + std::to_string(dur) + "]";
        return out;
    };
    STALLSCOPE_FUZZ_CHECK(got.size() == want.size(), "finding slices: written" + list(want) + ", read back" + list(got));
    for (size_t i = 0; i < want.size(); ++i)
        STALLSCOPE_FUZZ_CHECK(got[i] == want[i],
                              "finding range " + std::to_string(i) + ": '" + std::get<0>(want[i]) + "' " +
                                  std::to_string(std::get<1>(want[i])) + "+" + std::to_string(std::get<2>(want[i])) +
                                  " came back as '" + std::get<0>(got[i]) + "' " + std::to_string(std::get<1>(got[i])) +
                                  "+" + std::to_string(std::get<2>(got[i])));

    // The original's events.
    checkRows(rowsOutside(orig, o.findingsPid), rowsOutside(back, o.findingsPid));
    if (!o.copiedSource) return 0;
    fuzz::CompareOptions cmp;
    cmp.skipPid = true;
    cmp.pid = o.findingsPid;
    cmp.diagnostics = false;
    cmp.importCounts = false;
    cmp.span = false;
    const std::string diff = fuzz::compareTraces(orig, back, cmp);
    STALLSCOPE_FUZZ_CHECK(diff.empty(), "the copied trace differs from the original: " + diff);
    for (size_t k = 0; k < static_cast<size_t>(DiagnosticKind::Count); ++k) {
        const auto kind = static_cast<DiagnosticKind>(k);
        const uint64_t before = orig.diagnostics().count(kind), after = back.diagnostics().count(kind);
        const char* id = model::diagnosticInfo(kind).id.data();
        if (kind == DiagnosticKind::InvalidUtf8 || kind == DiagnosticKind::UnterminatedArray ||
            (kind == DiagnosticKind::TruncatedInput && !orig.metadata().eventsArrayClosed)) {
            STALLSCOPE_FUZZ_CHECK(after == 0, std::string(id) + " is not repaired by the copy");
        } else if (kind == DiagnosticKind::CrossingSlices) {
            STALLSCOPE_FUZZ_CHECK(after >= before && after - before <= want.size(), std::string(id) + " changed");
        } else {
            STALLSCOPE_FUZZ_CHECK(after == before, std::string(id) + ": " + std::to_string(before) + " before, " +
                                                       std::to_string(after) + " after");
        }
    }
    const auto &sb = orig.importStats(), &sa = back.importStats();
    auto phase = [](const auto& m, const char* k) { return m.count(k) ? m.at(k) : uint64_t(0); };
    STALLSCOPE_FUZZ_CHECK(sa.entries == sb.entries + o.addedEvents, "entries: " + std::to_string(sb.entries) + " + " +
                                                                        std::to_string(o.addedEvents) + " != " +
                                                                        std::to_string(sa.entries));
    STALLSCOPE_FUZZ_CHECK(phase(sa.byPhase, "X") == phase(sb.byPhase, "X") + want.size(), "X entries");
    STALLSCOPE_FUZZ_CHECK(phase(sa.byPhase, "M") == phase(sb.byPhase, "M") + (o.addedEvents - want.size()), "M entries");
    STALLSCOPE_FUZZ_CHECK(back.metadata().baseTimeNs == orig.metadata().baseTimeNs, "baseTimeNanoseconds");
    bool have = orig.slices().size() + orig.instants().size() + orig.counterSamples().size() +
                    orig.memorySamples().size() > 0;
    int64_t lo = orig.startNs();
    for (const auto& r : want) lo = have ? std::min(lo, std::get<1>(r)) : std::get<1>(r), have = true;
    STALLSCOPE_FUZZ_CHECK(back.startNs() == lo, "the span's start: " + std::to_string(back.startNs()) + " vs " +
                                                    std::to_string(lo));
    return 0;
}
