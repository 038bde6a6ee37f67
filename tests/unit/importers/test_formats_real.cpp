// Every file of the real corpus (../shared/traces), opened as a user would (importPath): the
// allocator snapshots (and the memory viewer's page holding one) and the memory timeline import
// as memory; the files that are not traces (the corpus' own notes) each get the one line that
// says what they are; every other file imports as a trace with events, the Nsight Systems
// exports, RPD databases and rocprofv3 JSON too (their counts: test_foreign_formats_import). What
// each file is comes from MANIFEST.md, by path: the importer never sees a name.
#include "test_support.h"

#include "stallscope/importers/importer.h"

#include <QTest>

#include <algorithm>
#include <vector>

using namespace stallscope;
namespace fs = std::filesystem;

namespace {

struct Expected {
    const char* folder; // the file's folder, relative to the corpus ("" for any)
    const char* suffix; // the end of its name
    const char* line;   // the start of the importer's message
};

// What MANIFEST.md says the files that are not traces are (the Nsight, RPD and rocprofv3
// files are read).
const Expected kNotTraces[] = {
    {"", "MANIFEST.md", "byte 0: not a trace Stallscope can read"},
    {"", ".py", "byte 0: not a trace Stallscope can read"},
};

const Expected* expectedFor(const fs::path& rel) {
    const std::string folder = rel.parent_path().generic_string();
    const std::string name = rel.filename().string();
    for (const Expected& e : kNotTraces)
        if ((!*e.folder || folder == e.folder) && name.ends_with(e.suffix)) return &e;
    return nullptr;
}

} // namespace

class TestFormatsReal : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFileOfTheCorpus() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        std::vector<fs::path> files;
        for (const auto& e : fs::recursive_directory_iterator(test::sharedTraces()))
            if (e.is_regular_file()) files.push_back(fs::relative(e.path(), test::sharedTraces()));
        std::sort(files.begin(), files.end());
        int traces = 0, others = 0, snapshots = 0;
        for (const fs::path& rel : files) {
            const std::string name = rel.generic_string();
            auto r = importers::importPath(test::sharedTraces() / rel);
            if (const Expected* e = expectedFor(rel)) {
                ++others;
                QVERIFY2(!r, qPrintable(QString::fromStdString(
                                 name + ": imported, expected: " + e->line)));
                const std::string& m = r.error().message;
                QVERIFY2(r.error().kind == importers::ErrorKind::UnknownFormat,
                         qPrintable(QString::fromStdString(name + ": " + m)));
                QVERIFY2(m.starts_with(e->line),
                         qPrintable(
                             QString::fromStdString(name + ": " + m + "\n  expected: " + e->line)));
                QVERIFY2(m.find('\n') == std::string::npos,
                         qPrintable(QString::fromStdString(name + ": " + m)));
                continue;
            }
            if (rel.parent_path().generic_string() == "memory/timeline") {
                // export_memory_timeline_raw's rows: read as memory by category.
                ++snapshots;
                QVERIFY2(r, qPrintable(QString::fromStdString(name + ": " +
                                                              (r ? "" : r.error().message))));
                const model::Trace& t = *r.value().traces.front().trace;
                QVERIFY2(!t.memorySamples().empty() && t.memorySamples().front().category != 0,
                         qPrintable(QString::fromStdString(name + ": no categories")));
                continue;
            }
            if (rel.parent_path().generic_string() == "memory/snapshots") {
                // Allocator snapshots (and the viewer's page holding one): read as memory.
                ++snapshots;
                QVERIFY2(r, qPrintable(QString::fromStdString(name + ": " +
                                                              (r ? "" : r.error().message))));
                const model::Trace& t = *r.value().traces.front().trace;
                QVERIFY2(t.allocatorSnapshot() && !t.allocatorSnapshot()->segments.empty() &&
                             !t.memorySamples().empty(),
                         qPrintable(QString::fromStdString(name + ": no allocator state")));
                continue;
            }
            ++traces;
            QVERIFY2(
                r, qPrintable(QString::fromStdString(name + ": " + (r ? "" : r.error().message))));
            size_t events = 0;
            for (const auto& t : r.value().traces) events += t.trace->slices().size();
            QVERIFY2(events > 0,
                     qPrintable(QString::fromStdString(name + ": a trace without slices")));
        }
        // The corpus as MANIFEST.md describes it: 10 allocator snapshots (one in a page) and a
        // memory timeline, 2 other files that are not traces, the rest traces.
        QCOMPARE(snapshots, 11);
        QVERIFY2(others >= 2, qPrintable(QString("only %1 files that are not traces").arg(others)));
        QVERIFY2(traces >= 45, qPrintable(QString("only %1 traces").arg(traces)));
        qInfo("%d traces imported, %d other files each given their line", traces, others);
    }
};

QTEST_GUILESS_MAIN(TestFormatsReal)
#include "test_formats_real.moc"
