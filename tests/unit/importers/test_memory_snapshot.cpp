// Allocator snapshots: the restricted pickle reader (builtins only; every opcode that would
// import, construct or call is refused with its offset) and the snapshot's replay into
// memory samples, on tiny pickles written here byte by byte.
#include "gzip_text.h"
#include "test_support.h"

#include "pickle_reader.h"

#include "stallscope/importers/importer.h"

#include <QTemporaryDir>
#include <QTest>

using namespace stallscope;
using namespace std::string_literals;
using importers::ErrorKind;

namespace {

std::string le64(uint64_t v) {
    std::string s;
    for (int k = 0; k < 8; ++k) s += static_cast<char>((v >> (8 * k)) & 0xff);
    return s;
}

/// A pickle of protocol 4 as Python writes it: PROTO, FRAME (its length), the body.
std::string pickle4(const std::string& body) {
    return "\x80\x04\x95"s + le64(body.size()) + body;
}

/// SHORT_BINUNICODE (+ MEMOIZE), as protocol 4 writes a short string.
std::string str(const std::string& s) {
    return "\x8c"s + static_cast<char>(s.size()) + s + "\x94"s;
}

/// BININT (4 bytes, signed) or LONG1 (8 bytes) for an int.
std::string integer(int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {
        std::string s = "J"s;
        for (int k = 0; k < 4; ++k) s += static_cast<char>((uint64_t(v) >> (8 * k)) & 0xff);
        return s;
    }
    return "\x8a\x08"s + le64(uint64_t(v));
}

/// A dict of (key, value-pickle) pairs.
std::string dict(const std::vector<std::pair<std::string, std::string>>& kv) {
    std::string s = "}\x94("s;
    for (const auto& [k, v] : kv) s += str(k) + v;
    return s + "u";
}

std::string list(const std::vector<std::string>& items) {
    std::string s = "]\x94("s;
    for (const auto& i : items) s += i;
    return s + "e";
}

std::string frame(const std::string& name, const std::string& file, int line) {
    return dict({{"name", str(name)}, {"filename", str(file)}, {"line", integer(line)}});
}

std::string entry(const std::string& action, uint64_t addr, int64_t size, int64_t us,
                  const std::string& frames = list({})) {
    return dict({{"action", str(action)},
                 {"addr", integer(int64_t(addr))},
                 {"size", integer(size)},
                 {"stream", integer(0)},
                 {"time_us", integer(us)},
                 {"frames", frames}});
}

/// One 20 MiB segment at 0x1000000: a 2 MiB block allocated, the rest free; a history that
/// frees a block allocated before it began (1 MiB at 0x9000000), maps a segment and allocates
/// and frees a block of it.
std::string tinySnapshot() {
    const std::string seg = dict({
        {"device", integer(0)},
        {"address", integer(0x1000000)},
        {"total_size", integer(20 << 20)},
        {"allocated_size", integer(2 << 20)},
        {"active_size", integer(2 << 20)},
        {"requested_size", integer(2 << 20)},
        {"stream", integer(0)},
        {"segment_type", str("large")},
        {"is_expandable", "\x89"s},
        {"frames", list({})},
        {"blocks", list({dict({{"address", integer(0x1000000)},
                               {"size", integer(2 << 20)},
                               {"requested_size", integer(2 << 20)},
                               {"state", str("active_allocated")},
                               {"frames", list({})}}),
                         dict({{"address", integer(0x1200000)},
                               {"size", integer(18 << 20)},
                               {"requested_size", integer(0)},
                               {"state", str("inactive")},
                               {"frames", list({})}})})},
    });
    const std::string stack =
        list({frame("torch::unwind::unwind()", "??", 0),
              frame("linear", "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", 125),
              frame("forward", "/home/me/model.py", 42)});
    const std::string traces = list({list({
        entry("free_requested", 0x9000000, 1 << 20, 10),
        entry("free_completed", 0x9000000, 1 << 20, 11),
        entry("segment_alloc", 0x1000000, 20 << 20, 20),
        entry("alloc", 0x1000000, 2 << 20, 21, stack),
        entry("alloc", 0x1200000, 4 << 20, 30, stack),
        entry("free_requested", 0x1200000, 4 << 20, 40),
        entry("free_completed", 0x1200000, 4 << 20, 41),
    })});
    return pickle4(dict({{"segments", list({seg})},
                         {"device_traces", traces},
                         {"allocator_settings", dict({{"expandable_segments", "\x89"s}})},
                         {"external_annotations", list({})}}) +
                   ".");
}

importers::Result<std::shared_ptr<const model::Trace>> importBytes(const std::string& b) {
    return importers::importBuffer(b);
}

} // namespace

class TestMemorySnapshot : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readerBuildsBuiltins();
    void snapshotReplaysIntoSamples();
    void snapshotFromFileGzipAndPage();
    void hostilePickles_data();
    void hostilePickles();
    void everyPrefixIsAnErrorNotACrash();
    void memoryTimelineRows();
};

void TestMemorySnapshot::readerBuildsBuiltins() {
    // Protocol 2 with BINPUT/BINGET, a shared list, a tuple, a float, a big int, bytes.
    // (A hex escape is cut before a letter that is a hex digit: "\x00" "a".)
    const std::string p = "\x80\x02}q\x00(X\x01\x00\x00\x00"
                          "aq\x01]q\x02(K\x01K\x02"
                          "eX\x01\x00"
                          "\x00\x00"
                          "bh\x02X\x01\x00\x00\x00"
                          "cG?\xf8\x00\x00\x00\x00\x00\x00"
                          "X\x01\x00\x00\x00"
                          "d\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01"
                          "X\x01\x00\x00\x00"
                          "eC\x02hi\x85u."s;
    auto data = std::make_shared<const std::string>(p);
    importers::MemoryByteStream in(data);
    auto doc = importers::pickle::readPickle(in);
    QVERIFY2(doc, doc ? "" : doc.error().message.c_str());
    using importers::pickle::Kind;
    const auto& d = doc.value();
    const auto a = d.get(d.root(), "a"), b = d.get(d.root(), "b");
    QVERIFY(a && b);
    QCOMPARE(*a, *b); // the memo shares one list, as Python does
    QCOMPARE(d.items(*a).size(), size_t(2));
    QCOMPARE(*d.integer(d.items(*a)[1]), int64_t(2));
    QCOMPARE(*d.number(*d.get(d.root(), "c")), 1.5);
    QCOMPARE(d.kind(*d.get(d.root(), "d")), Kind::BigInt); // 2^64: beyond int64, kept as such
    QVERIFY(!d.integer(*d.get(d.root(), "d")));
    const auto e = *d.get(d.root(), "e");
    QCOMPARE(d.kind(e), Kind::Tuple);
    QCOMPARE(d.text(d.items(e)[0]), std::string_view("hi"));
    QCOMPARE(d.kind(d.items(e)[0]), Kind::Bytes);
}

void TestMemorySnapshot::snapshotReplaysIntoSamples() {
    auto r = importBytes(tinySnapshot());
    QVERIFY2(r, r ? "" : r.error().message.c_str());
    const model::Trace& t = *r.value();
    const model::AllocatorSnapshot* snap = t.allocatorSnapshot();
    QVERIFY(snap);
    QCOMPARE(snap->segments.size(), size_t(1));
    QCOMPARE(snap->blocks.size(), size_t(2));
    QCOMPARE(snap->entries.size(), size_t(7));
    QCOMPARE(snap->expandableSegments, std::optional<bool>(false));
    // Samples: free_completed, segment_alloc, alloc, alloc, free_completed (free_requested
    // changes nothing). Before the history: 1 MiB it freed without allocating; the 2 MiB block
    // active at the end was allocated by the history. Reserved before: 20 MiB - 20 MiB = 0.
    const auto& m = t.memorySamples();
    QCOMPARE(m.size(), size_t(5));
    const int64_t MiB = 1 << 20;
    const int64_t allocated[] = {0, 0, 2 * MiB, 6 * MiB, 2 * MiB};
    const int64_t reserved[] = {0, 20 * MiB, 20 * MiB, 20 * MiB, 20 * MiB};
    for (size_t i = 0; i < m.size(); ++i) {
        QCOMPARE(m[i].totalAllocated, allocated[i]);
        QCOMPARE(m[i].totalReserved, reserved[i]);
        QCOMPARE(m[i].deviceType, int16_t(1));
    }
    QCOMPARE(m[0].bytes, -MiB);
    QCOMPARE(m[3].ts, int64_t(30000)); // time_us x 1000
    // The allocation's stack: the program's frame is model.py, not torch's linear.py.
    const auto f = snap->userFrame(m[2].stack);
    QVERIFY(f);
    QCOMPARE(QString::fromStdString(snap->frameText(*f)), QString("forward (me/model.py:42)"));
    QVERIFY(t.diagnostics().empty());
}

void TestMemorySnapshot::snapshotFromFileGzipAndPage() {
    QTemporaryDir dir;
    const auto root = std::filesystem::path(dir.path().toStdString());
    const std::string p = tinySnapshot();
    test::writeFile(root / "a.pickle", p);
    test::writeFile(root / "b.pickle.gz", test::gzipText(p));
    // A _memory_viz page: the pickle in base64 (written here with Qt's encoder).
    const QByteArray b64 = QByteArray(p.data(), qsizetype(p.size())).toBase64();
    test::writeFile(root / "c.html",
                    "<!DOCTYPE html>\n<html><body><script type=\"module\">\nimport "
                    "{add_local_files} from \"https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/"
                    "torch/utils/viz/MemoryViz.js\"\nconst local_files = [{\"name\": "
                    "\"snapshot.pickle\", \"base64\": \"" +
                        b64.toStdString() + "\"}]\n</script></body></html>\n");
    for (const char* name : {"a.pickle", "b.pickle.gz", "c.html"}) {
        auto r = importers::importPath(root / name);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const model::Trace& t = *r.value().traces.front().trace;
        QVERIFY(t.allocatorSnapshot());
        QCOMPARE(t.memorySamples().size(), size_t(5));
        QVERIFY(t.metadata().formatName.starts_with("PyTorch allocator snapshot"));
    }
}

void TestMemorySnapshot::hostilePickles_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<ErrorKind>("error");
    QTest::addColumn<QString>("fragment");
    auto row = [](const char* name, const std::string& b, ErrorKind k, const char* f) {
        QTest::newRow(name) << QByteArray(b.data(), qsizetype(b.size())) << k << QString(f);
    };
    const auto refused = ErrorKind::Unsupported;
    const std::string head = "\x80\x04}\x94("s + str("segments");
    // Everything that would import, construct or call, each refused where it stands.
    row("GLOBAL os.system", head + "cos\nsystem\n"s, refused, "refused GLOBAL os.system at byte");
    row("STACK_GLOBAL", head + str("os") + str("system") + "\x93"s, refused, "STACK_GLOBAL");
    row("REDUCE", head + "]\x94)R"s, refused, "REDUCE (call a function)");
    row("BUILD", head + "]\x94}b"s, refused, "BUILD");
    row("INST", "\x80\x02(ios\nsystem\n"s, refused, "INST");
    row("OBJ", "\x80\x02(]o"s, refused, "OBJ");
    row("NEWOBJ", head + "]\x94)\x81"s, refused, "NEWOBJ");
    row("NEWOBJ_EX", head + "]\x94)}\x92"s, refused, "NEWOBJ_EX");
    row("PERSID", "\x80\x02P1\n."s, refused, "PERSID");
    row("BINPERSID", head + "K\x01Q"s, refused, "PERSID");
    row("EXT1", head + "\x82\x01"s, refused, "EXT");
    row("NEXT_BUFFER", "\x80\x05\x97."s, refused, "out-of-band buffer");
    row("a set", head + "\x8f\x94."s, refused, "a set");
    // Malformed: each a clear error at its byte, never a crash, a hang or a huge allocation.
    row("empty", "", ErrorKind::Empty, "empty");
    row("truncated string", head.substr(0, head.size() - 3), ErrorKind::Truncated,
        "the file ends inside the opcode");
    row("a 2^62-byte string", "\x80\x04\x8d"s + le64(uint64_t(1) << 62) + "abc"s,
        ErrorKind::InvalidStructure, "a string of");
    row("a 4 GiB - 1 string that is not there",
        "\x80\x04X\xff\xff\xff\xff"
        "abc"s,
        ErrorKind::Truncated, "cut short");
    row("GET of a memo never set", "\x80\x04h\x07."s, ErrorKind::InvalidStructure,
        "GET of memo entry 7");
    row("LONG_BINGET far away", "\x80\x04j\xff\xff\xff\xff."s, ErrorKind::InvalidStructure,
        "never set");
    row("APPEND to a dict",
        "\x80\x04}K\x01"
        "a."s,
        ErrorKind::InvalidStructure, "APPEND to a dict");
    row("SETITEMS odd", "\x80\x04}(K\x01u."s, ErrorKind::InvalidStructure, "odd number");
    row("unhashable key", "\x80\x04}]K\x01s."s, ErrorKind::InvalidStructure, "unhashable");
    row("STOP on an empty stack", "\x80\x04."s, ErrorKind::InvalidStructure, "STOP with nothing");
    row("POP_MARK without MARK",
        "\x80\x04"
        "1."s,
        ErrorKind::InvalidStructure, "without a MARK");
    row("unknown opcode", "\x80\x04\xff"s, ErrorKind::InvalidStructure, "unknown opcode 0xff");
    row("protocol 9", "\x80\x09}."s, ErrorKind::InvalidStructure, "protocol 9");
    // Builtins that are not a snapshot.
    row("a dict of something else", pickle4(dict({{"model", str("resnet")}}) + "."),
        ErrorKind::UnknownFormat, "a Python pickle");
    std::string deep = "\x80\x04"s;
    for (int i = 0; i < 100000; ++i) deep += "]\x94";
    for (int i = 0; i < 99999; ++i) deep += "a";
    row("100,000 nested lists", deep + ".", ErrorKind::UnknownFormat, "");
    row("a list holding itself",
        "\x80\x04]\x94(}\x94("s + str("device") + "h\x00u" + "h\x00" + "e."s,
        ErrorKind::InvalidStructure, "");
}

void TestMemorySnapshot::hostilePickles() {
    QFETCH(QByteArray, bytes);
    QFETCH(ErrorKind, error);
    QFETCH(QString, fragment);
    // Straight through the reader (what the importer does with a file of these bytes).
    auto data = std::make_shared<const std::string>(bytes.constData(), size_t(bytes.size()));
    importers::MemoryByteStream in(data);
    auto doc = importers::pickle::readPickle(in);
    if (error != ErrorKind::UnknownFormat && error != ErrorKind::InvalidStructure) {
        QVERIFY2(!doc, "the reader should refuse it");
        QCOMPARE(doc.error().kind, error);
        QVERIFY2(QString::fromStdString(doc.error().message).contains(fragment),
                 doc.error().message.c_str());
        return;
    }
    if (!doc) {
        QCOMPARE(doc.error().kind, error);
        QVERIFY2(QString::fromStdString(doc.error().message).contains(fragment),
                 doc.error().message.c_str());
        return;
    }
    // Read: then opened as a file it is refused, with one line, as not a snapshot.
    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "x.pickle";
    test::writeFile(path, data->substr(0));
    auto r = importers::importPath(path);
    if (r) { // a segments-only list: read, its one segment without fields counted
        QVERIFY(r.value().traces.front().trace->diagnostics().total() > 0);
        return;
    }
    QVERIFY2(QString::fromStdString(r.error().message).contains(fragment),
             r.error().message.c_str());
}

void TestMemorySnapshot::everyPrefixIsAnErrorNotACrash() {
    const std::string p = tinySnapshot();
    for (size_t n = 0; n < p.size(); ++n) {
        auto data = std::make_shared<const std::string>(p.substr(0, n));
        importers::MemoryByteStream in(data);
        auto doc = importers::pickle::readPickle(in);
        QVERIFY2(!doc, qPrintable(QString("a prefix of %1 bytes was read").arg(n)));
        QVERIFY(doc.error().kind == ErrorKind::Truncated || doc.error().kind == ErrorKind::Empty);
    }
}

// export_memory_timeline_raw: [time_ns, action, bytes, category] rows, plain or gzip.
void TestMemorySnapshot::memoryTimelineRows() {
    const std::string rows = "[[-1, 1, 1000, 0], [-1, 1, 500, 1], [100, 2, 4000, 4], "
                             "[150, 3, -4000, 4], [150, 3, 4000, 5], [200, 4, -4000, 5], "
                             "[210, 2, 100, 3]]";
    QTemporaryDir dir;
    const auto root = std::filesystem::path(dir.path().toStdString());
    test::writeFile(root / "t.json", rows);
    test::writeFile(root / "t.raw.gz", test::gzipText(rows));
    for (const char* name : {"t.json", "t.raw.gz"}) {
        auto r = importers::importPath(root / name);
        QVERIFY2(r, r ? "" : r.error().message.c_str());
        const model::Trace& t = *r.value().traces.front().trace;
        const auto& m = t.memorySamples();
        QCOMPARE(m.size(), size_t(7));
        const int64_t totals[] = {1000, 1500, 5500, 1500, 5500, 1500, 1600};
        const uint8_t categories[] = {1, 2, 5, 5, 6, 6, 4}; // index + 1
        for (size_t i = 0; i < m.size(); ++i) {
            QCOMPARE(m[i].totalAllocated, totals[i]);
            QCOMPARE(m[i].category, categories[i]);
        }
        QCOMPARE(m[0].ts, int64_t(100)); // PREEXISTING (-1): when profiling began
        QCOMPARE(QString::fromStdString(model::memoryCategoryName(m[2].category - 1)),
                 QString("activation"));
    }
    // A row that is not four integers is counted, not guessed.
    test::writeFile(root / "bad.json", "[[1, 2, 3, 4], [1, 2, \"x\", 4], [5, 2, 1, 0]]");
    auto r = importers::importPath(root / "bad.json");
    QVERIFY(r);
    const model::Trace& t = *r.value().traces.front().trace;
    QCOMPARE(t.memorySamples().size(), size_t(2));
    QCOMPARE(t.diagnostics().count(model::DiagnosticKind::WrongType), uint64_t(1));
}

QTEST_GUILESS_MAIN(TestMemorySnapshot)
#include "test_memory_snapshot.moc"
