// The bad-input table: every input gets a clear error or a counted diagnostic, never a
// crash, a hang or silent loss.
#include "bad_input_table.h"
#include "gzip_text.h"
#include "sqlite_file.h"
#include "test_support.h"

#include "stallscope/importers/importer.h"
#include "stallscope/importers/memory_budget.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

using namespace stallscope;
using importers::ErrorKind;
using model::DiagnosticKind;

using test::bad_input_detail::deepArgs;
using test::bad_input_detail::manyEvents;

Q_DECLARE_METATYPE(ErrorKind)
Q_DECLARE_METATYPE(DiagnosticKind)

class TestBadInput : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void table_data();
    void table();
    void recognisedFormats_data();
    void recognisedFormats();
    void missingPathAndEmptyFolder();
    void nsightReportGetsTheExportCommand();
    void deepArgsReadBack();
    void truncatedJsonKeepsEverythingBeforeTheCut();
    void invalidEscapesBecomeQuestionMarks();
    void tracesOverTheMemoryBudgetAreRefusedWithTheirSize();
};

// Definitions are hidden from moc: Qt 6.4's moc cannot tokenize raw strings with
// delimiters, which the inline traces need.
#ifndef Q_MOC_RUN
void TestBadInput::table_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<bool>("expectOk");
    QTest::addColumn<ErrorKind>("error");              // when !expectOk
    QTest::addColumn<DiagnosticKind>("diagnostic");    // when expectOk (Count = none expected)
    QTest::addColumn<QString>("fragment");             // in the error message / first example
    QTest::addColumn<int>("slices");                   // when expectOk

    for (const test::BadInput& b : test::badInputTable())
        QTest::newRow(b.name.c_str()) << QByteArray(b.bytes.data(), static_cast<int>(b.bytes.size())) << b.ok << b.error
                                      << b.diagnostic << QString::fromStdString(b.fragment) << b.slices;
}

void TestBadInput::table() {
    QFETCH(QByteArray, bytes);
    QFETCH(bool, expectOk);
    QFETCH(ErrorKind, error);
    QFETCH(DiagnosticKind, diagnostic);
    QFETCH(QString, fragment);
    QFETCH(int, slices);
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "input.bin";
    test::writeFile(path, std::string(bytes.constData(), static_cast<size_t>(bytes.size())));
    for (unsigned threads : {1u, 2u}) {
        importers::ImportOptions o;
        o.threads = threads;
        auto r = importers::importPath(path, o);
        if (!expectOk) {
            QVERIFY2(!r.ok(), "import should fail");
            QCOMPARE(r.error().kind, error);
            QVERIFY2(QString::fromStdString(r.error().message).contains(fragment),
                     qPrintable(QString::fromStdString(r.error().message)));
            continue;
        }
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const auto& t = *r.value().traces.front().trace;
        if (slices >= 0) QCOMPARE(static_cast<int>(t.slices().size()), slices);
        else QVERIFY(t.slices().size() > 0);
        if (diagnostic == DiagnosticKind::Count) {
            QVERIFY2(t.diagnostics().empty(), "no diagnostics expected");
            continue;
        }
        QVERIFY2(t.diagnostics().count(diagnostic) > 0,
                 qPrintable(QString("expected diagnostic %1").arg(model::diagnosticInfo(diagnostic).id.data())));
        if (!fragment.isEmpty()) {
            bool found = false;
            for (const auto& ex : t.diagnostics().examples(diagnostic))
                found |= QString::fromStdString(ex.detail).contains(fragment);
            QVERIFY2(found, qPrintable("no example mentions " + fragment));
        }
    }
}

namespace {

using namespace std::string_literals;

/// A pickle of protocol 4 as Python writes it: PROTO, FRAME (its length), the body.
std::string pickle4(const std::string& body) {
    std::string frame = "\x80\x04\x95"s;
    for (int k = 0; k < 8; ++k) frame += static_cast<char>((body.size() >> (8 * k)) & 0xff);
    return frame + body;
}

/// SHORT_BINUNICODE and MEMOIZE, as protocol 4 writes a short string.
std::string shortString(const std::string& s) {
    return "\x8c"s + static_cast<char>(s.size()) + s + "\x94"s;
}

} // namespace

// Files a user may bring that are not Chrome/Kineto traces, each written by the test: one
// line saying what the file is and what to do, the same through importPath (a file on disk)
// and importBuffer (in memory); a database is only read, nothing is written beside it.
void TestBadInput::recognisedFormats_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<ErrorKind>("error");
    QTest::addColumn<QStringList>("fragments"); // all in the message
    QTest::addColumn<bool>("sameInMemory");     // importBuffer gives the same error
    auto row = [](const char* name, const std::string& b, ErrorKind k, const QStringList& f,
                  bool memory = true) {
        QTest::newRow(name) << QByteArray(b.data(), static_cast<int>(b.size())) << k << f << memory;
    };
    const auto U = ErrorKind::UnknownFormat;

    // SQLite databases, told apart by their tables.
    const std::string nsight =
        test::sqliteDatabase({"StringIds", "TARGET_INFO_GPU", "CUPTI_ACTIVITY_KIND_KERNEL",
                              "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS"});
    const std::string rpd =
        test::sqliteDatabase({"rocpd_op", "rocpd_api", "rocpd_string", "rocpd_metadata"});
    QVERIFY(!nsight.empty() && !rpd.empty());
    // Read now (test_foreign_formats_import on the real files); empty, they say so.
    const auto S = ErrorKind::InvalidStructure;
    const QStringList emptyNsight{"this Nsight Systems SQLite export holds no kernels, copies, "
                                  "CUDA calls, NVTX ranges or OS runtime calls"};
    row("Nsight Systems SQLite export", nsight, S, emptyNsight, false);
    row("Nsight export with NVTX only",
        test::sqliteDatabase({"StringIds", "NVTX_EVENTS", "ThreadNames"}), S, emptyNsight, false);
    row("Nsight export in WAL mode", test::sqliteDatabase({"StringIds", "TARGET_INFO_GPU"}, true),
        S, emptyNsight, false);
    row("RPD profile", rpd, S, {"this RPD profile holds no GPU operations or HIP calls"}, false);
    row("SQLite of unknown schema", test::sqliteDatabase({"users", "orders"}), U,
        {"this is an SQLite database of unknown schema (tables: orders, users)", "not a trace"});
    row("SQLite without tables", test::sqliteDatabase({}), U,
        {"this is an SQLite database without tables"});
    row("SQLite header and garbage", "SQLite format 3\0"s + std::string(200, 'x'), U,
        {"this is an SQLite database whose tables could not be read"});
    row("gzip of an Nsight export", test::gzipText(nsight), S, emptyNsight, false);
    row("gzip of an RPD profile", test::gzipText(rpd), S,
        {"this RPD profile holds no GPU operations or HIP calls"}, false);
    row("rocprofv3 rocpd database",
        test::sqliteDatabase({"rocpd_info_agent_0", "rocpd_kernel_dispatch_0", "rocpd_string_0"}),
        ErrorKind::Unsupported, {"this is a rocprofv3 rocpd database", "--output-format json"},
        false);
    // A database whose pages past the schema are overwritten: SQLite's own words, the table.
    std::string corrupt = test::sqliteKernelTable(2000);
    QVERIFY(corrupt.size() > 8 * 1024);
    for (size_t i = 4 * 1024; i < corrupt.size() - 1024; ++i) corrupt[i] = '\xff';
    row("corrupted Nsight export", corrupt, S, {"CUPTI_ACTIVITY_KIND_KERNEL: "}, false);

    // Python pickles that are not allocator snapshots (those are read: test_memory_snapshot).
    row("another pickle", pickle4("}\x94("s + shortString("model") + shortString("resnet") + "u."s),
        U, {"this is a Python pickle (protocol 4)", "never unpickles"});
    row("torch.save's legacy pickle",
        "\x80\x02\x8a\x0al\xfc\x9c"s + "F\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.\x80\x02}q\x00."s, U,
        {"this is a Python pickle (protocol 2)"});

    // HTML pages.
    row("Stallscope report",
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta "
        "name=\"generator\" "
        "content=\"Stallscope\">\n<title>t</title></head><body></body></html>",
        U, {"this is a Stallscope HTML report", "the trace it was made from"});
    row("an HTML page", "<html><body><p>hello</p></body></html>", U,
        {"this is an HTML page", "not a trace"});

    // JSON that is not a trace: told by its shape, never read as an empty trace.
    // (export_memory_timeline_raw's rows are read: test_memory_snapshot.) Its plot data is not.
    row("memory timeline ([times, sizes])", "[[0.0, 12.5, 30.25], [[0, 1024, 0], [2048, 0, 0]]]",
        ErrorKind::Unsupported,
        {"export_memory_timeline's plot data", "export_memory_timeline_raw"}, false);
    const std::string rocprof =
        R"J({"rocprofiler-sdk-tool":[{"metadata":{"pid":908,"init_time":1},"agents":[],"buffer_records":{"kernel_dispatch":[]}}]})J";
    const QStringList emptyRocprof{
        "this rocprofv3 JSON holds no kernel dispatches, copies, HIP calls or markers"};
    row("rocprofv3 JSON", rocprof, S, emptyRocprof, false);
    row("gzip of a rocprofv3 JSON", test::gzipText(rocprof), S, emptyRocprof, false);
    row("truncated rocprofv3 JSON", rocprof.substr(0, rocprof.size() / 2), ErrorKind::InvalidJson,
        {"a rocprofv3 JSON that does not parse"}, false);
    row("an object of something else", R"J({"schema": "1.0.1", "pid": 7, "nodes": [{"id": 1}]})J",
        ErrorKind::InvalidStructure,
        {"no \"traceEvents\" key; its keys: \"schema\", \"pid\", \"nodes\")"});
    row("XPlane protobuf", "\x0a\x04\x08\x01\x12\x00"s, U, {"this is an XPlane protobuf"});
    row("gzip of plain text", test::gzipText("hello, world\n"), U,
        {"this is gzip-compressed data that is not a trace"}, false);
}

void TestBadInput::recognisedFormats() {
    QFETCH(QByteArray, bytes);
    QFETCH(ErrorKind, error);
    QFETCH(QStringList, fragments);
    QFETCH(bool, sameInMemory);
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "input.bin";
    const std::string written(bytes.constData(), static_cast<size_t>(bytes.size()));
    test::writeFile(path, written);
    auto r = importers::importPath(path);
    QVERIFY2(!r.ok(), "import should fail");
    const QString message = QString::fromStdString(r.error().message);
    QCOMPARE(r.error().kind, error);
    for (const QString& f : fragments)
        QVERIFY2(message.contains(f), qPrintable(message + "\n  lacks: " + f));
    QVERIFY2(!message.contains('\n'), qPrintable(message));
    // Read only: the file as it was and nothing beside it (no journal, WAL or lock file).
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot),
             QStringList{"input.bin"});
    QVERIFY(test::readFile(path) == written);
    auto m = importers::importBuffer(written);
    QVERIFY2(!m.ok(), "importBuffer should fail too");
    if (sameInMemory) {
        QCOMPARE(m.error().kind, error);
        QCOMPARE(QString::fromStdString(m.error().message), message);
    }
}

void TestBadInput::missingPathAndEmptyFolder() {
    auto r = importers::importPath("/nonexistent/trace.json");
    QVERIFY(!r);
    QCOMPARE(r.error().kind, ErrorKind::NotFound);
    QTemporaryDir dir;
    test::writeFile(std::filesystem::path(dir.path().toStdString()) / "notes.txt", "hello");
    auto f = importers::importPath(dir.path().toStdString());
    QVERIFY(!f);
    QCOMPARE(f.error().kind, ErrorKind::NoTraces);
}

// An .nsys-rep's layout is not documented: unknown content, and its name adds the export
// command to the line (a .json of the same bytes does not get it).
void TestBadInput::nsightReportGetsTheExportCommand() {
    QTemporaryDir dir;
    const auto report = std::filesystem::path(dir.path().toStdString()) / "report1.nsys-rep";
    test::writeFile(report, std::string("\x00\x01QDSTRM bytes of a report", 25));
    auto r = importers::importPath(report);
    QVERIFY(!r);
    QCOMPARE(r.error().kind, ErrorKind::UnknownFormat);
    QVERIFY2(QString::fromStdString(r.error().message)
                 .contains("export it with `nsys export --type sqlite report1.nsys-rep`"),
             r.error().message.c_str());
    const auto other = std::filesystem::path(dir.path().toStdString()) / "report1.bin";
    test::writeFile(other, std::string("\x00\x01QDSTRM bytes of a report", 25));
    auto o = importers::importPath(other);
    QVERIFY(!o && o.error().message.find("nsys") == std::string::npos);
}

void TestBadInput::deepArgsReadBack() {
    auto r = importers::importBuffer(deepArgs(5000));
    QVERIFY(r);
    std::vector<model::ArgValue> args;
    std::string err;
    QVERIFY2(r.value()->sliceArgs(model::SliceId(0), args, err), err.c_str());
    QCOMPARE(args.size(), size_t(1));
    QCOMPARE(args[0].json.size(), size_t(10000));
}

void TestBadInput::truncatedJsonKeepsEverythingBeforeTheCut() {
    const std::string good = manyEvents(200);
    // Cut inside event #150: exactly the 150 complete events before it survive.
    const size_t eventStart = good.rfind("  {", good.find("\"External id\": 150"));
    auto r = importers::importBuffer(good.substr(0, eventStart + 20));
    QVERIFY(r);
    QCOMPARE(r.value()->slices().size(), size_t(150));
    const auto& ex = r.value()->diagnostics().examples(DiagnosticKind::TruncatedInput);
    QVERIFY(!ex.empty());
    QCOMPARE(ex.front().byteOffset, uint64_t(eventStart + 2));
}
void TestBadInput::invalidEscapesBecomeQuestionMarks() {
    // In every field read as a string: name, cat, ph, a string pid and a string ts.
    const std::string text = R"J([{"ph": "X", "name": "a\udc80b\u00e9", "cat": "k\qx", "pid": "p\ud800", "tid": 1, "ts": "1", "dur": 2},
        {"ph": "X", "name": "\ud83d\ude00\n", "pid": 1, "tid": 1, "ts": "5\u", "dur": 1}])J";
    auto r = importers::importBuffer(text);
    QVERIFY2(r, r ? "" : r.error().message.c_str());
    const model::Trace& t = *r.value();
    QCOMPARE(t.slices().size(), size_t(1));  // the second: ts "5?" is not a number
    QCOMPARE(t.str(t.slices().name[0]), std::string_view("a?b\u00e9"));
    QCOMPARE(t.str(t.slices().category[0]), std::string_view("k?x"));
    QCOMPARE(t.str(t.process(t.track(t.slices().track[0]).process).key.text), std::string_view("p?"));
    // 4 strings repaired: name, cat, pid, ts of the second event (its name is valid).
    QCOMPARE(t.diagnostics().count(DiagnosticKind::InvalidEscape), uint64_t(4));
    QCOMPARE(t.diagnostics().count(DiagnosticKind::NotANumber), uint64_t(1));
}

void TestBadInput::tracesOverTheMemoryBudgetAreRefusedWithTheirSize() {
    QTemporaryDir dir;
    const std::filesystem::path root(dir.path().toStdString());
    const std::string text = manyEvents(4000);  // ~600 kB of JSON
    test::writeFile(root / "plain.json", text);
    test::writeFile(root / "packed.json.gz", test::gzipText(manyEvents(40000)));
    importers::ImportOptions o;
    // A plain file: refused from its size before anything is read.
    o.memoryBudgetBytes = 50'000;
    auto r = importers::importPath(root / "plain.json", o);
    QVERIFY(!r);
    QCOMPARE(r.error().kind, ErrorKind::OverMemoryBudget);
    QVERIFY2(QString::fromStdString(r.error().message).contains("kB of JSON) needs about"), r.error().message.c_str());
    QVERIFY2(QString::fromStdString(r.error().message).contains("50 kB"), r.error().message.c_str());
    // Compressed: refused while reading, with what the whole would need.
    o.memoryBudgetBytes = 400'000;
    r = importers::importPath(root / "packed.json.gz", o);
    QVERIFY(!r);
    QCOMPARE(r.error().kind, ErrorKind::OverMemoryBudget);
    QVERIFY2(QString::fromStdString(r.error().message).contains("events in the first"), r.error().message.c_str());
    // Within the budget: read as usual.
    o.memoryBudgetBytes = 64'000'000;
    QVERIFY(importers::importPath(root / "plain.json", o));
    QVERIFY(importers::importPath(root / "packed.json.gz", o));
    // A folder: the ranks share the budget; the file that passes it is named.
    const auto run = root / "run";
    std::filesystem::create_directories(run);
    test::writeFile(run / "host_1.1.pt.trace.json", text);
    test::writeFile(run / "host_2.1.pt.trace.json", text);
    auto one = importers::importPath(run / "host_1.1.pt.trace.json");
    QVERIFY(one);
    const uint64_t firstTakes = one.value().traces.front().trace->memoryBytes();
    o.memoryBudgetBytes = std::max<uint64_t>(firstTakes, 4000 * importers::kPeakBytesPerEvent) + 50'000;
    auto s = importers::importPath(run, o);
    QVERIFY(!s);
    QCOMPARE(s.error().kind, ErrorKind::OverMemoryBudget);
    QVERIFY2(QString::fromStdString(s.error().message).contains("file 2 of 2"), s.error().message.c_str());
}
#endif

QTEST_GUILESS_MAIN(TestBadInput)
#include "test_bad_input.moc"
