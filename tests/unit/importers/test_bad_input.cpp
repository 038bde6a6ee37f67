// The bad-input table: every input gets a clear error or a counted diagnostic, never a
// crash, a hang or silent loss.
#include "bad_input_table.h"
#include "gzip_text.h"
#include "test_support.h"

#include "stallscope/importers/importer.h"
#include "stallscope/importers/memory_budget.h"

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
    void missingPathAndEmptyFolder();
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
