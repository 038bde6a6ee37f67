// Reports: escaping of untrusted text in every format, HTML self-containment, the content
// of the report (titles, savings, pictures, fixes) on inline and real traces, JSON validity,
// Markdown safety, and atomic writes.
#include "real_traces.h"
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/analysis/finding_kind.h"
#include "stallscope/base/atomic_file.h"
#include "stallscope/base/text_format.h"
#include "stallscope/base/utf8.h"
#include "stallscope/importers/importer.h"
#include "stallscope/reports/escape.h"
#include "stallscope/reports/report.h"
#include "stallscope/reports/report_format.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace stallscope;
using namespace stallscope::reports;
using namespace stallscope::base;
using test::TraceText;

namespace {

const std::string kHostile = "<img src=x onerror=alert(1)>";
const std::string kHostile2 = "</code></pre><script>alert(2)</script>|`x`|**b**";

ReportInput analysed(std::shared_ptr<const model::Trace> t, std::string path) {
    ReportInput in;
    in.path = std::move(path);
    in.trace = std::move(t);
    in.analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*in.trace));
    return in;
}

/// Steps that wait on a DataLoader whose work is named by hostile strings, and a hostile kernel.
ReportInput hostileInput() {
    TraceText t;
    for (int s = 0; s < 4; ++s) {
        const int64_t b = s * 700;
        t.step(s, b, 690);
        t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 400);
        t.cpu(kHostile, b + 10, 300);
        t.cpu(kHostile2, b + 320, 60);
        t.launch(kHostile, b + 450, 5, b + 460, 200);
    }
    return analysed(t.load(), "hostile <trace>.json");
}

/// Every tag in `html` is one we write, and no attribute is an event handler.
void checkTags(const QString& html) {
    static const QStringList allowed{
        "html",  "head",     "meta",    "title", "style",  "body",   "main",   "h1",    "h2",
        "h3",    "h4",       "p",       "span",  "strong", "code",   "pre",    "div",   "table",
        "thead", "tbody",    "tr",      "th",    "td",     "figure", "svg",    "rect",  "text",
        "line",  "polyline", "polygon", "ul",    "li",     "hr",     "footer", "circle"};
    const QRegularExpression tag("<\\s*/?\\s*([A-Za-z][A-Za-z0-9]*)([^>]*)>");
    for (auto it = tag.globalMatch(html); it.hasNext();) {
        const auto m = it.next();
        QVERIFY2(allowed.contains(m.captured(1).toLower()), qPrintable("unexpected tag " + m.captured(0)));
        QVERIFY2(!QRegularExpression("\\son[a-z]+\\s*=", QRegularExpression::CaseInsensitiveOption)
                      .match(m.captured(2))
                      .hasMatch(),
                 qPrintable("event handler in " + m.captured(0)));
    }
}

/// Nothing is fetched: no tag has a src/href-like attribute, there is no url() or @import,
/// and the only URLs are SVG namespace names.
void checkSelfContained(const QString& html) {
    const QRegularExpression tag("<\\s*[A-Za-z][A-Za-z0-9]*([^>]*)>");
    const QRegularExpression fetching("(^|\\s)(src|href|xlink:href|action|formaction|poster|data|srcset)\\s*=",
                                      QRegularExpression::CaseInsensitiveOption);
    for (auto it = tag.globalMatch(html); it.hasNext();) {
        const auto m = it.next();
        QVERIFY2(!fetching.match(m.captured(1)).hasMatch(), qPrintable("fetching attribute in " + m.captured(0)));
    }
    QVERIFY(!html.contains("url(", Qt::CaseInsensitive));
    QVERIFY(!html.contains("@import", Qt::CaseInsensitive));
    QVERIFY(!html.contains("<script", Qt::CaseInsensitive));
    const int urls = int(html.count("http://", Qt::CaseInsensitive) + html.count("https://", Qt::CaseInsensitive));
    QCOMPARE(urls, int(html.count("xmlns='http://www.w3.org/2000/svg'")));
}

/// Outside code spans and fences, '<' is always backslash-escaped.
void checkMarkdownSafe(const std::string& md) {
    bool fence = false;
    size_t lineStart = 0;
    while (lineStart < md.size()) {
        const size_t end = md.find('\n', lineStart);
        const std::string line = md.substr(lineStart, end == std::string::npos ? std::string::npos : end - lineStart);
        lineStart = end == std::string::npos ? md.size() : end + 1;
        if (line.rfind("```", 0) == 0) {
            fence = !fence;
            continue;
        }
        if (fence) continue;
        size_t ticks = 0;  // open code span fence length, 0 = none
        for (size_t i = 0; i < line.size(); ++i) {
            if (line[i] == '\\' && !ticks) {
                ++i;
                continue;
            }
            if (line[i] == '`') {
                size_t run = 1;
                while (i + run < line.size() && line[i + run] == '`') ++run;
                if (!ticks) ticks = run;
                else if (run == ticks) ticks = 0;
                i += run - 1;
                continue;
            }
            QVERIFY2(ticks || line[i] != '<', qPrintable(QString::fromStdString("unescaped < in: " + line)));
        }
    }
}

} // namespace

class TestReports : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void escapingRules() {
        QCOMPARE(escapeHtml(kHostile), std::string("&lt;img src=x onerror=alert(1)&gt;"));
        QCOMPARE(escapeHtml("a\"b'c&"), std::string("a&quot;b&#39;c&amp;"));
        // Invalid UTF-8 becomes U+FFFD; controls are dropped; valid multibyte stays.
        QCOMPARE(sanitizeUtf8(std::string("a\xff" "b\x01" "c\xc3\xa9\xed\xa0\x80", 10)),
                 std::string("a\xEF\xBF\xBD" "bc\xc3\xa9\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"));
        QCOMPARE(escapeMarkdown("*a* <b> |c|"), std::string("\\*a\\* \\<b\\> \\|c\\|"));
        QCOMPARE(escapeMarkdown("# 1. x-y 2.5"), std::string("\\# 1. x-y 2.5"));
        QCOMPARE(escapeMarkdown("12. item"), std::string("12\\. item"));
        QCOMPARE(escapeMarkdown("- a"), std::string("\\- a"));
        QCOMPARE(markdownCodeSpan("a`b"), std::string("``a`b``"));
        QCOMPARE(markdownCodeSpan("x|y"), std::string("`x\\|y`"));
        QCOMPARE(markdownCodeBlock("```\ncode"), std::string("````\n```\ncode\n````\n"));
        QCOMPARE(truncateUtf8("µµµµµ", 3), std::string("µµµ…"));
        QCOMPARE(formatOffset(65'200'000, 200'000), std::string("+65.2 ms"));
    }

    void hostileNamesAreTextInEveryFormat() {
        const ReportInput in = hostileInput();
        QVERIFY(in.trace);
        QVERIFY(!in.analysis->findings.empty());
        const ReportDocument doc = buildReport({in});
        const QString html = QString::fromStdString(renderHtml(doc));
        QVERIFY(html.contains("&lt;img src=x onerror=alert(1)&gt;"));  // the name is there, as text
        QVERIFY(!html.contains(QString::fromStdString(kHostile)));
        checkTags(html);
        checkSelfContained(html);
        const std::string md = renderMarkdown(doc);
        QVERIFY(md.find("onerror") != std::string::npos);  // present...
        checkMarkdownSafe(md);                             // ...but never as HTML
        const std::string json = renderJson({in});
        QJsonParseError pe;
        const QJsonDocument jd = QJsonDocument::fromJson(QByteArray::fromStdString(json), &pe);
        QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(pe.errorString()));
        QVERIFY(jd.isArray());
        QCOMPARE(jd.array().at(0).toObject().value("schema").toString(), QString("stallscope.analysis/1"));
        QVERIFY(json.find("onerror") != std::string::npos);
    }

    void bidiOverridesInNamesAreClosed() {
        // Found in Chromium (tests/browser): a U+202E in a trace's file name reversed the
        // report's own text after it in the subtitle and the comparison title.
        const std::string rlo = "\xE2\x80\xAE", pdf = "\xE2\x80\xAC", rli = "\xE2\x81\xA7", pdi = "\xE2\x81\xA9";
        QCOMPARE(closeBidi("a" + rlo + "b"), "a" + rlo + "b" + pdf);
        QCOMPARE(closeBidi("a" + rlo + "b" + pdf + "c"), "a" + rlo + "b" + pdf + "c");  // balanced: unchanged
        QCOMPARE(closeBidi(rli + rlo + "x" + pdi), rli + rlo + "x" + pdi);  // the PDI closes the override too
        QCOMPARE(closeBidi(rlo + rli + "x"), rlo + rli + "x" + pdi + pdf);  // innermost first
        QCOMPARE(closeBidi(pdf + pdi + "x"), pdf + pdi + "x");              // stray closers stay stray
        QCOMPARE(closeBidi("plain µ text"), std::string("plain µ text"));
        // Whether a line break ends the paragraph (and its embeddings) depends on the
        // renderer: what is open either way is closed.
        QCOMPARE(closeBidi(rli + "\n" + rlo + pdi), rli + "\n" + rlo + pdi + pdf);
        QCOMPARE(escapeHtml("<" + rlo + ">"), "&lt;" + rlo + "&gt;" + pdf);
        QCOMPARE(markdownCodeSpan(rlo + "x"), "`" + rlo + "x" + pdf + "`");
        QCOMPARE(escapeMarkdown(rlo + "x"), rlo + "x" + pdf);

        // In the reports: every name is closed before the report's own text goes on.
        ReportInput in = hostileInput();
        in.path = "/runs/x" + rlo + "lmth.json";
        const std::string html = renderHtml(buildReport({in}));
        QVERIFY(html.find("<h1>Stallscope report: x" + rlo + "lmth.json" + pdf + "</h1>") != std::string::npos);
        QVERIFY(html.find("/runs/x" + rlo + "lmth.json" + pdf + " · ") != std::string::npos);  // subtitle
        ReportInput after = in;
        after.path = "y" + rlo + "2.json";
        const std::string cmp = renderHtml(buildComparison(in, after));
        QVERIFY(cmp.find("x" + rlo + "lmth.json" + pdf + " → y" + rlo + "2.json" + pdf + "</h1>") != std::string::npos);
        QVERIFY(cmp.find(" | after: y" + rlo + "2.json" + pdf + "</p>") != std::string::npos);
        ReportInput rank1 = in;
        in.label = "rank 0 · a" + rlo;
        rank1.label = "rank 1 · b" + rlo;
        const std::string ranks = renderHtml(buildReport({in, rank1}));
        QVERIFY(ranks.find("rank 1 · b" + rlo + pdf + ": Summary</h2>") != std::string::npos);
    }

    void jsonReportIsUtf8WhateverThePath() {
        // Found by tests/browser: a file name with a 0xFF byte went into "path" as it was.
        ReportInput in = hostileInput();
        in.path = std::string("/runs/bad\xff\xfe.json");
        const std::string json = renderJson({in});
        QCOMPARE(replaceInvalidUtf8(json), json);
        QVERIFY(json.find("\"path\": \"/runs/bad\xEF\xBF\xBD\xEF\xBF\xBD.json\"") != std::string::npos);
        QCOMPARE(replaceInvalidUtf8(std::string("a\x01\xff", 3)), std::string("a\x01\xEF\xBF\xBD", 5));  // controls stay
    }

    void dataLoadingReportExplainsTheStallWithAPictureAndTheFix() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path = test::sharedTraces() / "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
        auto r = importers::importFile(path);
        QVERIFY(r);
        const ReportInput in = analysed(r.value(), path.string());
        const analysis::Finding& top = in.analysis->findings.front();
        QCOMPARE(top.kind, analysis::FindingKind::DataLoading);
        const QString html = QString::fromStdString(renderHtml(buildReport({in})));
        checkTags(html);
        checkSelfContained(html);
        QVERIFY(html.contains("GPU idle while the input pipeline prepares batches"));
        QVERIFY(html.contains(QString::fromStdString(formatDuration(top.savingNs))));
        QVERIFY(html.contains("33.1%"));
        QVERIFY(html.contains("num_workers=8"));  // the fix snippet
        // The finding's picture: an SVG with the shaded range labelled data_loading.
        const int heading = int(html.indexOf("1. GPU idle while the input pipeline"));
        const int svg = int(html.indexOf("<svg", heading));
        QVERIFY(heading > 0 && svg > heading);
        const int svgEnd = int(html.indexOf("</svg>", svg));
        const QString picture = html.mid(svg, svgEnd - svg);
        QVERIFY(picture.contains(">data_loading</text>"));
        QVERIFY(picture.contains("fill='#e63228'"));  // the shade
        QVERIFY(picture.contains("GPU 0 stream 7"));
    }

    // The TensorBoard plugin's Overview in the report: a "Time per step" section with a
    // stacked-bar picture and a table whose parts of each step add up to it.
    void efficiencySectionHasMfuTheRooflineAndTheFamilies() {
        // An A100 SXM4 80GB running a bf16 aten::mm [1024,1024]x[1024,1024] on a 100 us GEMM
        // in each 1 ms step: 2.147 GFLOP per step, MFU 2.147e9 / 1e-3 s / 312e12 = 0.7 %.
        TraceText t;
        for (int n = 0; n < 3; ++n) {
            const int64_t at = n * 1000;
            t.step(n, at, 1000);
            t.add(
                R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 1, "ts": )" +
                std::to_string(at + 10) +
                R"(, "dur": 100, "args": {"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": )"
                R"(["c10::BFloat16", "c10::BFloat16"]}})");
            t.launch("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_nn", at + 20, 10, at + 40, 100);
        }
        std::string json = t.json(8);
        json.replace(json.find("Test GPU"), 8, "NVIDIA A100-SXM4-80GB");
        json.replace(json.find("\"numSms\": 100"), 13, "\"numSms\": 108");
        auto trace = importers::importBuffer(json);
        QVERIFY(trace);
        const ReportInput in = analysed(trace.value(), "mm.json");
        const analysis::DeviceEfficiency& d = in.analysis->efficiency.devices.at(0);
        QVERIFY(d.mfu > 0);
        const QString md = QString::fromStdString(renderMarkdown(buildReport({in}))).remove('\\');
        const int at = int(md.indexOf("## Efficiency: FLOPs, MFU and the roofline"));
        QVERIFY2(at > 0, qPrintable(md.left(3000)));
        const QString section = md.mid(at, md.indexOf("\n## ", at + 5) - at);
        QVERIFY2(section.contains(QString("MFU %1%").arg(d.mfu * 100, 0, 'f', 1)),
                 qPrintable(section));
        QVERIFY(section.contains("bf16 peak of 312.0 TFLOP/s (a100-sxm4-80gb"));
        QVERIFY(section.contains("| gemm | 3 |"));
        QVERIFY(section.contains("aten::mm"));
        QVERIFY(section.contains("2.15 GFLOP"));
        // HTA's launch statistics: 3 launch calls of 10 us, each kernel 10 us after its call.
        const std::string ten = formatDuration(10'000);
        QVERIFY2(section.contains(QString::fromStdString(
                     "Launches (Holistic Trace Analysis' launch statistics):** launches: 3 with "
                     "their call; 0.0% ran shorter than it; call median " +
                     ten + " (p95 " + ten +
                     "), 0 over 50 us; launch delay (start after the call) "
                     "median " +
                     ten)),
                 qPrintable(section));
        const QString html = QString::fromStdString(renderHtml(buildReport({in})));
        QVERIFY(html.contains("roofline of a100-sxm4-80gb (bf16)"));
        QVERIFY(html.contains("roof: peak 312.0 TFLOP/s, 2.04 TB/s"));
        checkTags(html);
    }

    void stepBreakdownSectionHasTheFigures() {
        TraceText t;
        for (int n = 0; n < 3; ++n) {
            const int64_t at = n * 1000;
            t.step(n, at, 1000);
            t.launch("k_gemm", at + 100, 10, at + 200, 300);
            t.memcpy("Memcpy HtoD (Pageable -> Device)", at + 600, 100, t.nextCorrelation(), 4096);
        }
        const ReportInput in = analysed(t.load(), "steps.json");
        const QString md = QString::fromStdString(renderMarkdown(buildReport({in})));
        const int at = int(md.indexOf("## Time per step"));
        QVERIFY2(at > 0, qPrintable(md.left(2000)));
        // Markdown escapes '#' and '.' in table cells: compare the text without the escapes.
        const QString section = md.mid(at, md.indexOf("\n## ", at + 5) - at).remove('\\');
        QVERIFY(section.contains("| Step | Length | Kernel | Memcpy | Memset | Communication | "
                                 "Runtime | Data loading | CPU | Other |"));
        const QString kernel = QString::fromStdString(formatDuration(300'000)) + " (30.0%)";
        const QString copy = QString::fromStdString(formatDuration(100'000)) + " (10.0%)";
        for (const char* step : {"| #0 |", "| #1 |", "| #2 |", "| mean of 3 steady steps |"}) {
            const int row = int(section.indexOf(step));
            QVERIFY2(row > 0, step);
            const QString line = section.mid(row, section.indexOf('\n', row) - row);
            QVERIFY2(line.contains(kernel) && line.contains(copy), qPrintable(line));
        }
        const QString html = QString::fromStdString(renderHtml(buildReport({in})));
        QVERIFY(html.contains("time per step by what ran"));
        checkTags(html);
    }

    void everyRealTraceMakesEveryTextFormat() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        int n = 0;
        for (const std::filesystem::path& path : test::realTraceFiles()) {
            const std::string name = path.filename().string();
            if (name.find("test_gpu_metrics") == 0) continue;
            auto r = importers::importFile(path);
            QVERIFY2(r, qPrintable(QString::fromStdString(path.string())));
            const ReportInput in = analysed(r.value(), path.string());
            const ReportDocument doc = buildReport({in});
            const QString html = QString::fromStdString(renderHtml(doc));
            checkSelfContained(html);
            checkTags(html);
            const std::string md = renderMarkdown(doc);
            checkMarkdownSafe(md);
            for (const auto& f : in.analysis->findings) {
                QVERIFY(html.contains(QString::fromStdString(escapeHtml(f.title))));
                QVERIFY(html.contains(QString::fromStdString(formatDuration(f.savingNs))));
                QVERIFY(md.find(escapeMarkdown(f.title)) != std::string::npos);
            }
            QJsonParseError pe;
            QJsonDocument::fromJson(QByteArray::fromStdString(renderJson({in})), &pe);
            QCOMPARE(pe.error, QJsonParseError::NoError);
            ++n;
        }
        QVERIFY(n >= 20);
    }

    void writesByExtensionAtomically() {
        const ReportInput in = hostileInput();
        QTemporaryDir dir;
        std::string error;
        for (const char* name : {"r.html", "r.md", "r.json"}) {
            ReportFormat f;
            QVERIFY(formatFromPath(dir.filePath(name).toStdString(), f));
            QVERIFY2(test::okOr(writeReport({in}, dir.filePath(name).toStdString(), f, {}), error),
                     error.c_str());
            QVERIFY(QFileInfo(dir.filePath(name)).size() > 100);
        }
        ReportFormat f;
        QVERIFY(formatFromPath("x.trace.json.gz", f) && f == ReportFormat::AnnotatedTrace);
        QVERIFY(formatFromPath("x.PDF", f) && f == ReportFormat::Pdf);
        QVERIFY(!formatFromPath("x.txt", f));
        QVERIFY(formatFromPath("x.json", f) &&
                f == ReportFormat::Json); // the longest extension wins
        // The table: a row per format, its names and extensions lead back to it.
        QCOMPARE(reportFormats().size(), size_t(5));
        for (ReportFormat want : {ReportFormat::Html, ReportFormat::Markdown, ReportFormat::Json,
                                  ReportFormat::Pdf, ReportFormat::AnnotatedTrace}) {
            const ReportFormatInfo& info = reportFormatInfo(want);
            QVERIFY(info.format == want);
            for (std::string_view n : info.names) QVERIFY(formatFromName(n, f) && f == want);
            for (std::string_view e : info.extensions)
                QVERIFY(formatFromPath("report" + std::string(e), f) && f == want);
            QVERIFY(!info.dialogFilter.empty());
        }
        // PDF without the Qt part (nothing registered in this Qt-free test): a clear error.
        QVERIFY(!test::okOr(
            writeReport({in}, dir.filePath("r.pdf").toStdString(), ReportFormat::Pdf, {}), error));
        QVERIFY(error.find("Qt") != std::string::npos);
        QCOMPARE(int(writeReport({in}, dir.filePath("r.pdf").toStdString(), ReportFormat::Pdf, {})
                         .error()
                         .kind),
                 int(base::ErrorKind::Unsupported));
        QCOMPARE(int(writeReport({}, dir.filePath("r.html").toStdString(), ReportFormat::Html, {})
                         .error()
                         .kind),
                 int(base::ErrorKind::InvalidArgument));
        QVERIFY(!test::okOr(
            writeComparison(in, in, dir.filePath("c.json").toStdString(), ReportFormat::Json, {}),
            error));
        QVERIFY2(error.find("html") != std::string::npos, error.c_str());
        // A read-only target is refused and left as it was; no temporary file is left behind.
        const std::string target = dir.filePath("keep.html").toStdString();
        test::writeFile(target, "old report");
        ::chmod(target.c_str(), 0444);
        QVERIFY(!test::okOr(writeReport({in}, target, ReportFormat::Html, {}), error));
        QVERIFY(error.find("read-only") != std::string::npos);
        QCOMPARE(int(writeReport({in}, target, ReportFormat::Html, {}).error().kind),
                 int(base::ErrorKind::Unwritable));
        QCOMPARE(test::readFile(target), std::string("old report"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Hidden | QDir::Files).filter(".tmp").size(), 0);
        // A missing folder is a clear error.
        QVERIFY(!test::okOr(writeReport({in}, dir.filePath("no/such/dir/r.html").toStdString(),
                                        ReportFormat::Html, {}),
                            error));
        QVERIFY(error.find("no such folder") != std::string::npos);
    }

    void anAbandonedWriteLeavesTheOldFile() {
        QTemporaryDir dir;
        const std::string target = dir.filePath("r.html").toStdString();
        test::writeFile(target, "good");
        {
            AtomicFile f;
            QVERIFY(f.open(target));
            QVERIFY(f.write("half a rep"));
            QVERIFY(std::filesystem::exists(f.temporaryPath()));
            QCOMPARE(test::readFile(target), std::string("good"));
        }  // never committed
        QCOMPARE(test::readFile(target), std::string("good"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Hidden | QDir::Files).size(), 1);
        std::string error;
        QVERIFY(writeFileAtomically(target, "new", error));
        QCOMPARE(test::readFile(target), std::string("new"));
    }
};

QTEST_GUILESS_MAIN(TestReports)
#include "test_reports.moc"
