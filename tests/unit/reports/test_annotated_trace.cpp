// The annotated trace (reports/annotated_trace.h): the original events plus a "Stallscope
// findings" process, read back by our importer and by Python's json module; hostile names;
// bare, unterminated, empty and baseTimeNanoseconds arrays; every real trace; atomic writes.
#include "gzip_text.h"
#include "real_traces.h"
#include "sanitizer.h"
#include "sqlite_file.h"
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/analysis/finding_kind.h"
#include "stallscope/importers/importer.h"
#include "stallscope/reports/annotated_trace.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <zlib.h>

#include <tuple>


using namespace stallscope;
namespace fs = std::filesystem;
using model::DiagnosticKind;
using reports::AnnotatedTraceOutcome;
using TracePtr = std::shared_ptr<const model::Trace>;

namespace {

const char* const kLoader = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
// As written in the file: quote, backslash, line break and NUL, all escaped.
const std::string kHostileJson = R"(<img src=x onerror=alert(1)>\"\\\n\u0000)";
const std::string kHostile = std::string("<img src=x onerror=alert(1)>\"\\\n") + '\0';

/// Four steps whose GPU waits 400 us of each 1020 us step for the DataLoader.
test::TraceText dataLoadingSteps(const std::string& kernelName = "k_compute") {
    test::TraceText t;
    for (int s = 0; s < 4; ++s) {
        const int64_t b = s * 1020;
        t.step(s, b, 1020);
        t.annotation(kLoader, b, 400);
        t.launch(kernelName, b + 400, 5, b + 410, 600);
    }
    return t;
}

/// The text of a file, inflated when it is gzip.
std::string readText(const fs::path& p) {
    const std::string bytes = test::readFile(p);
    if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f) return bytes;
    z_stream zs{};
    inflateInit2(&zs, 15 + 16);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs.avail_in = static_cast<uInt>(bytes.size());
    std::string out;
    char buf[1 << 16];
    int ret = Z_OK;
    while (ret == Z_OK) {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        ret = inflate(&zs, Z_NO_FLUSH);
        out.append(buf, sizeof buf - zs.avail_out);
    }
    inflateEnd(&zs);
    return ret == Z_STREAM_END ? out : std::string();
}

TracePtr load(const fs::path& p) {
    auto r = importers::importFile(p);
    if (!r) qWarning("%s: %s", p.c_str(), r.error().message.c_str());
    return r ? r.value() : nullptr;
}

/// (track name, start, dur, slice name), sorted.
using Range = std::tuple<std::string, int64_t, int64_t, std::string>;

std::vector<Range> expectedRanges(const analysis::AnalysisResult& a) {
    std::vector<Range> out;
    for (const auto& f : a.findings)
        for (const auto& r : f.ranges) out.emplace_back(f.id, r.start, r.length(), f.title);
    std::sort(out.begin(), out.end());
    return out;
}

const model::ProcessInfo* findingsProcess(const model::Trace& t) {
    const model::ProcessInfo* found = nullptr;
    for (const auto& p : t.processes()) {
        if (t.str(p.name) != reports::kFindingsProcessName) continue;
        if (found) return nullptr; // two would be a bug too
        found = &p;
    }
    return found;
}

std::string rowKey(const model::Trace& t, const model::RowKey& k) {
    return k.isString() ? "s:" + std::string(t.str(k.text)) : std::to_string(k.number);
}

/// Slices as (pid, tid, start, dur, name, category): of the findings process, or of all others.
using SliceRow = std::tuple<std::string, std::string, int64_t, int64_t, std::string, std::string>;
std::vector<SliceRow> sliceRows(const model::Trace& t, bool findings) {
    const model::ProcessInfo* fp = findingsProcess(t);
    std::vector<SliceRow> out;
    const auto& s = t.slices();
    for (size_t i = 0; i < s.size(); ++i) {
        const auto& tr = t.track(s.track[i]);
        const auto& p = t.process(tr.process);
        if ((fp && &p == fp) != findings) continue;
        out.emplace_back(
            rowKey(t, p.key), findings ? std::string(t.str(tr.name)) : rowKey(t, tr.key),
            s.start[i], s.dur[i], std::string(t.str(s.name[i])), std::string(t.str(s.category[i])));
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// The annotated trace read back: the original slices unchanged, one findings process whose
/// slices are exactly the findings' ranges; with the source copied, every original entry
/// and every diagnostic too.
void checkAnnotated(const model::Trace& orig, const analysis::AnalysisResult& a,
                    const model::Trace& back, const AnnotatedTraceOutcome& o) {
    const auto ranges = expectedRanges(a);
    const auto* fp = findingsProcess(back);
    QVERIFY2(fp, "one process named \"Stallscope findings\"");
    QVERIFY(!fp->key.isString());
    QCOMPARE(fp->key.number, o.findingsPid);
    QVERIFY(fp->hasSortIndex && fp->sortIndex == -1);
    QCOMPARE(back.processes().size(), orig.processes().size() + 1);
    std::vector<Range> got;
    for (const auto& [pid, track, start, dur, name, cat] : sliceRows(back, true)) {
        QCOMPARE(cat, std::string(reports::kFindingsCategory));
        got.emplace_back(track, start, dur, name);
    }
    QCOMPARE(got, ranges);
    QVERIFY(sliceRows(back, false) == sliceRows(orig, false));
    QCOMPARE(back.slices().size(), orig.slices().size() + ranges.size());
    for (size_t k = 0; k < static_cast<size_t>(DiagnosticKind::Count); ++k) {
        const auto kind = static_cast<DiagnosticKind>(k);
        const bool fixed =
            kind == DiagnosticKind::InvalidUtf8 || kind == DiagnosticKind::UnterminatedArray ||
            (kind == DiagnosticKind::TruncatedInput && !orig.metadata().eventsArrayClosed);
        if (fixed) {
            QCOMPARE(back.diagnostics().count(kind), uint64_t(0)); // now valid UTF-8, closed
        } else if (o.copiedSource) {
            QCOMPARE(back.diagnostics().count(kind), orig.diagnostics().count(kind));
        }
    }
    if (!o.copiedSource) return;
    const auto& ob = orig.importStats().byPhase;
    const auto& bb = back.importStats().byPhase;
    auto phase = [](const auto& m, const char* k) { return m.count(k) ? m.at(k) : uint64_t(0); };
    QCOMPARE(back.importStats().entries, orig.importStats().entries + o.addedEvents);
    QCOMPARE(phase(bb, "X"), phase(ob, "X") + ranges.size());
    QCOMPARE(phase(bb, "M"), phase(ob, "M") + (o.addedEvents - ranges.size()));
    QCOMPARE(back.metadata().baseTimeNs, orig.metadata().baseTimeNs);
    QCOMPARE(back.metadata().devices.size(), orig.metadata().devices.size());
    QCOMPARE(back.startNs(),
             std::min(orig.startNs(), ranges.empty() ? orig.startNs() : std::get<1>(ranges[0])));
}

struct Annotated {
    TracePtr orig, back;
    analysis::AnalysisResult analysis;
    AnnotatedTraceOutcome outcome;
};

/// Imports `in`, analyses, writes `out`, reads it back and checks it.
Annotated annotate(const fs::path& in, const fs::path& out) {
    Annotated r;
    r.orig = load(in);
    if (!r.orig) return r;
    r.analysis = analysis::analyze(*r.orig);
    std::string error;
    if (!test::okOr(reports::writeAnnotatedTrace(*r.orig, r.analysis, out, &r.outcome), error)) {
        qWarning("%s: %s", out.c_str(), error.c_str());
        return r;
    }
    r.back = load(out);
    if (r.back) checkAnnotated(*r.orig, r.analysis, *r.back, r.outcome);
    return r;
}

/// Python's json module parses `path` (strictly: UTF-8, no raw control characters) and
/// finds the findings process; returns "entries slices" or "" when Python is absent.
/// `mustHaveName`, as JSON text, must be the name of some event.
QString pythonCheck(const fs::path& path, const std::string& mustHaveName = "\"\"") {
    const QString python = QStandardPaths::findExecutable("python3");
    if (python.isEmpty()) return {};
    const char* script = R"(
import gzip, json, sys
raw = open(sys.argv[1], 'rb').read()
if raw[:2] == b'\x1f\x8b': raw = gzip.decompress(raw)
doc = json.loads(raw)
ev = doc['traceEvents'] if isinstance(doc, dict) else doc
pids = [e['pid'] for e in ev if e.get('ph') == 'M' and e.get('name') == 'process_name'
        and e['args'].get('name') == 'Stallscope findings']
assert len(pids) == 1, pids
sl = [e for e in ev if e.get('ph') == 'X' and e.get('pid') == pids[0]]
assert all(e['cat'] == 'stallscope' and 'fix' in e['args'] and 'saving_ms' in e['args'] for e in sl)
want = json.loads(sys.argv[2])
assert want == '' or any(e.get('name') == want for e in ev), 'name not found'
print(len(ev), len(sl))
)";
    QProcess p;
    p.start(python, {"-c", script, QString::fromStdString(path.string()),
                     QString::fromStdString(mustHaveName)});
    if (!p.waitForFinished(120000)) return "python timed out";
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return "python failed: " + QString::fromUtf8(p.readAllStandardError());
    return QString::fromUtf8(p.readAllStandardOutput()).trimmed();
}

QString expectedPython(const Annotated& r) {
    return QString("%1 %2")
        .arg(r.orig->importStats().entries + r.outcome.addedEvents)
        .arg(expectedRanges(r.analysis).size());
}

bool hasPython() {
    return !QStandardPaths::findExecutable("python3").isEmpty();
}

} // namespace

class TestAnnotatedTrace : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void splicesIntoTheOriginalText();
    void gzipInAndOut();
    void pythonParsesTheOutput();
    void hostileTextStaysInsideStrings();
    void arrayShapes();
    void baseTimeNanoseconds();
    void writtenFromTheModelWhenNoSourceCanBeCopied();
    void anotherProfilersFileCopiesItsKinetoForm();
    void everyRealTrace();
    void failedWritesLeaveTheTargetAlone();
    void readOnlyTargetIsRefused();
};

void TestAnnotatedTrace::splicesIntoTheOriginalText() {
    QTemporaryDir dir;
    const fs::path in = dir.filePath("steps.json").toStdString(),
                   out = dir.filePath("annotated.json").toStdString();
    const std::string text = dataLoadingSteps().json();
    test::writeFile(in, text);
    const Annotated r = annotate(in, out);
    QVERIFY(r.back);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(r.outcome.copiedSource, r.outcome.fromModelReason.c_str());
    bool dataLoading = false;
    for (const auto& f : r.analysis.findings)
        dataLoading |= f.kind == analysis::FindingKind::DataLoading;
    QVERIFY(dataLoading);
    QVERIFY(!expectedRanges(r.analysis).empty());
    // Byte-exact: the original text up to the array's ']' and from it on.
    const std::string written = test::readFile(out);
    const size_t end = r.orig->metadata().eventsArrayEnd;
    QVERIFY(r.orig->metadata().eventsArrayClosed);
    QCOMPARE(text[end], ']');
    QVERIFY(written.compare(0, end, text, 0, end) == 0);
    QVERIFY(written.ends_with(text.substr(end)));
    QVERIFY(written.find("\"Stallscope findings\"") != std::string::npos);
    // Deterministic: the same export twice gives the same bytes.
    std::string error;
    const fs::path again = dir.filePath("again.json").toStdString();
    QVERIFY(test::okOr(reports::writeAnnotatedTrace(*r.orig, r.analysis, again), error));
    QCOMPARE(test::readFile(again), written);
}

void TestAnnotatedTrace::gzipInAndOut() {
    QTemporaryDir dir;
    const std::string text = dataLoadingSteps().json();
    const fs::path plain = dir.filePath("steps.json").toStdString(),
                   gz = dir.filePath("steps.json.gz").toStdString();
    test::writeFile(plain, text);
    test::writeFile(gz, test::gzipText(text));
    const fs::path outPlain = dir.filePath("a.json").toStdString(),
                   outGz = dir.filePath("a.json.gz").toStdString();
    const fs::path outGz2 = dir.filePath("b.json.gz").toStdString();
    const Annotated a = annotate(plain, outPlain);
    const Annotated b = annotate(gz, outGz);
    const Annotated c = annotate(plain, outGz2);
    QVERIFY(a.back && b.back && c.back);
    QVERIFY(b.orig->metadata().compressed && b.outcome.copiedSource && c.outcome.copiedSource);
    const std::string gzBytes = test::readFile(outGz);
    QVERIFY(gzBytes.size() > 2 && static_cast<unsigned char>(gzBytes[0]) == 0x1f &&
            static_cast<unsigned char>(gzBytes[1]) == 0x8b);
    // The same text whichever way it was stored.
    const std::string expected = test::readFile(outPlain);
    QCOMPARE(readText(outGz), expected);
    QCOMPARE(readText(outGz2), expected);
}

void TestAnnotatedTrace::pythonParsesTheOutput() {
    if (!hasPython()) QSKIP("python3 is not installed");
    QTemporaryDir dir;
    const fs::path in = dir.filePath("steps.json").toStdString();
    test::writeFile(in, dataLoadingSteps().json());
    for (const char* name : {"a.json", "a.json.gz"}) {
        const fs::path out = dir.filePath(name).toStdString();
        const Annotated r = annotate(in, out);
        QVERIFY(r.back);
        QCOMPARE(pythonCheck(out), expectedPython(r));
    }
}

void TestAnnotatedTrace::hostileTextStaysInsideStrings() {
    QTemporaryDir dir;
    test::TraceText t = dataLoadingSteps(kHostileJson);
    t.add(R"({"ph": "M", "name": "thread_name", "pid": 100, "tid": 1, "args": {"name": ")" +
          kHostileJson + "\"}}");
    t.add(R"({"ph": "X", "cat": "cpu_op", "name": "latin1 caf)"
          "\xe9\xff"
          R"( ]}", "pid": 100, "tid": 2, "ts": 3, "dur": 4, "args": {")" +
          kHostileJson + "\": \"" + kHostileJson + "\xc3\"}}");
    const std::string text = t.json();
    const fs::path in = dir.filePath("hostile.json").toStdString();
    test::writeFile(in, text);
    for (const char* name : {"copied.json", "copied.json.gz"}) {
        const fs::path out = dir.filePath(name).toStdString();
        const Annotated r = annotate(in, out);
        QVERIFY(r.back);
        QVERIFY(r.outcome.copiedSource);
        QVERIFY(r.orig->diagnostics().count(DiagnosticKind::InvalidUtf8) == 3);
        QVERIFY(r.orig->strings().find(kHostile).valid() &&
                r.back->strings().find(kHostile).valid());
        QVERIFY(r.back->strings().find("latin1 caf?? ]}").valid());
        // The hostile text is carried through as written; the bytes that are not UTF-8 are
        // replaced one for one, as the importer saw them.
        const std::string written = readText(out);
        QVERIFY(written.find(R"("name": ")" + kHostileJson + "\"") != std::string::npos);
        QVERIFY(written.find("\"" + kHostileJson + "?\"}}") != std::string::npos);
        QVERIFY(written.find('\xff') == std::string::npos &&
                written.find('\xe9') == std::string::npos);
        if (hasPython()) QCOMPARE(pythonCheck(out, "\"" + kHostileJson + "\""), expectedPython(r));
    }
    // From the model (no file to copy): names written back with escapes.
    auto mem = importers::importBuffer(text);
    QVERIFY(mem);
    const auto a = analysis::analyze(*mem.value());
    const fs::path out = dir.filePath("model.json").toStdString();
    std::string error;
    AnnotatedTraceOutcome o;
    QVERIFY2(test::okOr(reports::writeAnnotatedTrace(*mem.value(), a, out, &o), error),
             error.c_str());
    QVERIFY(!o.copiedSource);
    const TracePtr back = load(out);
    QVERIFY(back);
    checkAnnotated(*mem.value(), a, *back, o);
    QVERIFY(back->strings().find(kHostile).valid());
    QVERIFY(test::readFile(out).find(kHostile) == std::string::npos); // never raw
    if (hasPython())
        QVERIFY(pythonCheck(out, "\"" + kHostileJson + "\"")
                    .endsWith(QString::number(expectedRanges(a).size())));
}

void TestAnnotatedTrace::arrayShapes() {
    QTemporaryDir dir;
    const std::string text = dataLoadingSteps().json();
    const size_t open = text.find('[', text.find("\"traceEvents\"")) + 1;
    const std::string events = text.substr(open, text.rfind(']') - open);
    struct Case {
        const char* name;
        std::string text;
        bool closed, bare;
    };
    const std::vector<Case> cases = {
        {"bare.json", "[" + events + "]\n", true, true},
        {"bare-unterminated.json", "[" + events, false, true},
        {"bare-unterminated-comma.json", "[" + events.substr(0, events.rfind('}') + 1) + ",\n",
         false, true},
        {"empty.json", "{\"traceEvents\": [], \"displayTimeUnit\": \"ms\"}", true, false},
        {"empty-bare.json", "[ ]", true, true},
        {"keys-after.json", "{\"traceEvents\": [" + events + "],\n\"traceName\": \"x\"}\n", true,
         false},
        {"truncated.json", text.substr(0, text.rfind("{\"ph\"") + 40), false, false},
    };
    for (const auto& c : cases) {
        const fs::path in = dir.filePath(c.name).toStdString();
        const fs::path out = dir.filePath(QString("out-") + c.name).toStdString();
        test::writeFile(in, c.text);
        const Annotated r = annotate(in, out);
        QVERIFY2(r.back, c.name);
        QCOMPARE(r.orig->metadata().eventsArrayClosed, c.closed);
        QCOMPARE(r.orig->metadata().bareArray, c.bare);
        QVERIFY2(r.outcome.copiedSource, c.name);
        QVERIFY2(r.back->metadata().eventsArrayClosed, c.name);
        if (hasPython()) QCOMPARE(pythonCheck(out), expectedPython(r));
        if (QTest::currentTestFailed()) qWarning("case %s", c.name);
    }
}

void TestAnnotatedTrace::baseTimeNanoseconds() {
    QTemporaryDir dir;
    const int64_t base = 1'716'423'322'123'456'789; // not a whole microsecond
    std::string text = dataLoadingSteps().json();
    text.replace(text.rfind("]}"), 2, "],\n\"baseTimeNanoseconds\": " + std::to_string(base) + "}");
    const fs::path in = dir.filePath("relative.json").toStdString(),
                   out = dir.filePath("a.json").toStdString();
    test::writeFile(in, text);
    const Annotated r = annotate(in, out);
    QVERIFY(r.back);
    QCOMPARE(r.orig->metadata().baseTimeNs, std::optional<int64_t>(base));
    QVERIFY(!expectedRanges(r.analysis).empty());
    QCOMPARE(std::get<1>(expectedRanges(r.analysis).front()), base); // absolute in the model
    // In the file the slices are relative, like the trace's own events.
    QVERIFY(readText(out).find(R"("ts":0.000,"dur":400.000)") != std::string::npos);
}

void TestAnnotatedTrace::writtenFromTheModelWhenNoSourceCanBeCopied() {
    QTemporaryDir dir;
    const std::string text = dataLoadingSteps().json();
    const fs::path in = dir.filePath("steps.json").toStdString();
    // Memory, a source that changed since the import, a source that is gone.
    auto mem = importers::importBuffer(text);
    QVERIFY(mem);
    test::writeFile(in, text);
    const TracePtr changed = load(in);
    QVERIFY(changed);
    test::writeFile(in, text + "\n\n");
    const fs::path in2 = dir.filePath("gone.json").toStdString();
    test::writeFile(in2, text);
    const TracePtr gone = load(in2);
    QVERIFY(gone);
    fs::remove(in2);
    // Same size, different content: found while copying, written from the model instead.
    const fs::path in3 = dir.filePath("edited.json").toStdString();
    test::writeFile(in3, text);
    const TracePtr edited = load(in3);
    QVERIFY(edited);
    std::string shifted = text;
    shifted.replace(shifted.rfind("]}"), 2, "}]");
    test::writeFile(in3, shifted);
    int i = 0;
    for (const TracePtr& t : {mem.value(), changed, gone, edited}) {
        const auto a = analysis::analyze(*t);
        const fs::path out = dir.filePath(QString("out%1.json").arg(i++)).toStdString();
        std::string error;
        AnnotatedTraceOutcome o;
        QVERIFY2(test::okOr(reports::writeAnnotatedTrace(*t, a, out, &o), error), error.c_str());
        QVERIFY(!o.copiedSource && !o.fromModelReason.empty());
        const TracePtr back = load(out);
        QVERIFY(back);
        checkAnnotated(*t, a, *back, o);
        if (hasPython())
            QVERIFY(pythonCheck(out).endsWith(QString::number(expectedRanges(a).size())));
    }
    // The abandoned copy of the edited source left no temporary file behind.
    for (const auto& e : fs::directory_iterator(dir.path().toStdString()))
        QVERIFY2(!e.path().filename().string().starts_with("."), e.path().c_str());
}

// An Nsight Systems export is read through its Kineto form: the annotated trace copies that
// form (every event with its args: the kernel's correlation, grid, graph id), not the model.
void TestAnnotatedTrace::anotherProfilersFileCopiesItsKinetoForm() {
    const std::string db = test::sqliteFromSql(R"SQL(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'gemm_kernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 3000, 83886085, 1, 1);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
  gridX INTEGER, graphId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (3500, 4500, 0, 7, 1, 83886080, 2, 64, 12);
)SQL");
    QVERIFY(!db.empty());
    QTemporaryDir dir;
    const fs::path in = dir.filePath("report1.sqlite").toStdString();
    test::writeFile(in, db);
    const TracePtr t = load(in);
    QVERIFY(t);
    const auto a = analysis::analyze(*t);
    const fs::path out = dir.filePath("report1.trace.json").toStdString();
    std::string error;
    AnnotatedTraceOutcome o;
    QVERIFY2(test::okOr(reports::writeAnnotatedTrace(*t, a, out, &o), error), error.c_str());
    QVERIFY2(o.copiedSource, o.fromModelReason.c_str());
    const std::string text = test::readFile(out);
    QVERIFY2(text.find(R"("correlation":1)") != std::string::npos, text.c_str());
    QVERIFY(text.find(R"("graph id":12)") != std::string::npos);
    // Read back as Kineto JSON: the kernel still linked to its call (the translation's own
    // notes, what the export lacked, are the source's, not the copy's).
    const TracePtr back = load(out);
    QVERIFY(back);
    bool linked = false;
    for (uint32_t i = 0; i < back->slices().size(); ++i)
        if (back->str(back->slices().name[i]) == "gemm_kernel")
            linked = back->launchOf(model::SliceId(i)).valid();
    QVERIFY(linked);
}

void TestAnnotatedTrace::everyRealTrace() {
    STALLSCOPE_REQUIRE_SHARED_TRACES();
    QTemporaryDir dir;
    std::vector<fs::path> paths = test::realTraceFiles();
    QVERIFY(paths.size() >= 20);
    if (STALLSCOPE_TEST_ASAN) {     // every other trace: the sanitizers' time (the fuzz target
        std::vector<fs::path> half; //  annotated_trace reads slices of all of them)
        for (size_t k = 0; k < paths.size(); k += 2) half.push_back(paths[k]);
        paths = std::move(half);
    }
    size_t withRanges = 0, baseTime = 0, bare = 0, i = 0;
    for (const auto& p : paths) {
        const fs::path out =
            dir.filePath(QString("real%1.json%2").arg(i).arg(i % 2 ? ".gz" : "")).toStdString();
        ++i;
        const Annotated r = annotate(p, out);
        QVERIFY2(r.back, p.c_str());
        QVERIFY2(r.outcome.copiedSource, (p.string() + ": " + r.outcome.fromModelReason).c_str());
        // The stdlib reader's check of each file is the release build's: under the sanitizers
        // (the same output, three times slower to read back) the C++ checks run on every file.
        if (hasPython() && !STALLSCOPE_TEST_ASAN) QCOMPARE(pythonCheck(out), expectedPython(r));
        if (QTest::currentTestFailed()) {
            qWarning("%s", p.c_str());
            return;
        }
        const bool any = !expectedRanges(r.analysis).empty();
        withRanges += any;
        baseTime += any && r.orig->metadata().baseTimeNs.has_value();
        bare += r.orig->metadata().bareArray;
    }
    QVERIFY(withRanges >= (STALLSCOPE_TEST_ASAN ? 5u : 10u));
    if (!STALLSCOPE_TEST_ASAN) {
        QVERIFY(baseTime >= 1); // the nccl trace: relative timestamps line up too
        QVERIFY(bare >=
                3); // the legacy export_chrome_trace.json and its TensorBoard copies, 2021-01
    }
}

void TestAnnotatedTrace::failedWritesLeaveTheTargetAlone() {
    QTemporaryDir dir;
    const fs::path in = dir.filePath("steps.json").toStdString();
    test::writeFile(in, dataLoadingSteps().json());
    const TracePtr t = load(in);
    QVERIFY(t);
    const auto a = analysis::analyze(*t);
    std::string error;
    // A folder that does not exist.
    QVERIFY(!test::okOr(
        reports::writeAnnotatedTrace(*t, a, dir.filePath("missing/out.json").toStdString()),
        error));
    QVERIFY2(error.find("no such folder") != std::string::npos, error.c_str());
    // A target that is a folder: the rename fails, the folder stays, no temporary file is left.
    const fs::path folder = dir.filePath("taken.json").toStdString();
    fs::create_directory(folder);
    test::writeFile(folder / "keep", "x");
    error.clear();
    QVERIFY(!test::okOr(reports::writeAnnotatedTrace(*t, a, folder), error));
    QVERIFY(!error.empty());
    QVERIFY(fs::is_directory(folder) && test::readFile(folder / "keep") == "x");
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path().toStdString())) ++files;
    QCOMPARE(files, size_t(2)); // steps.json and taken.json
}

void TestAnnotatedTrace::readOnlyTargetIsRefused() {
    QTemporaryDir dir;
    const fs::path in = dir.filePath("steps.json").toStdString(),
                   out = dir.filePath("old.json").toStdString();
    test::writeFile(in, dataLoadingSteps().json());
    test::writeFile(out, "old bytes");
    fs::permissions(out, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    const TracePtr t = load(in);
    QVERIFY(t);
    std::string error;
    const bool ok = test::okOr(reports::writeAnnotatedTrace(*t, analysis::analyze(*t), out), error);
    QVERIFY(!ok);
    QVERIFY2(error.find("read-only") != std::string::npos, error.c_str());
    QCOMPARE(test::readFile(out), std::string("old bytes"));
}

QTEST_GUILESS_MAIN(TestAnnotatedTrace)
#include "test_annotated_trace.moc"
