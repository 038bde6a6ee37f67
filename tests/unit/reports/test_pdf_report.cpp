// PDF reports: real text (extracted with poppler's pdftotext and checked), the finding
// titles, savings and fix, hostile names as plain text, page numbers, atomic writes; and
// the rendered report image has the pictures in it.
#include "pdf_report.h"
#include "test_support.h"
#include "trace_text.h"

#include "stallscope/base/text_format.h"
#include "stallscope/importers/importer.h"
#include "stallscope/reports/report_format.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

using namespace stallscope;
using namespace stallscope::reports;
using stallscope::base::formatDuration;
using test::TraceText;

namespace {

ReportInput analysed(std::shared_ptr<const model::Trace> t, std::string path) {
    ReportInput in;
    in.path = std::move(path);
    in.trace = std::move(t);
    in.analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*in.trace));
    return in;
}

QString pdfText(const QString& pdf) {
    QProcess p;
    p.start("pdftotext", {"-layout", pdf, "-"});
    if (!p.waitForFinished(30000) || p.exitCode() != 0) return {};
    return QString::fromUtf8(p.readAllStandardOutput());
}

} // namespace

class TestPdfReport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() {
        if (QStandardPaths::findExecutable("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed: scripts/setup-deps.sh installs it");
    }

    void resnetPdfHasTheFindingAsText() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path = test::sharedTraces() / "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
        auto r = importers::importFile(path);
        QVERIFY(r);
        const ReportInput in = analysed(r.value(), path.string());
        QTemporaryDir dir;
        const QString out = dir.filePath("report.pdf");
        std::string error;
        QVERIFY2(
            test::okOr(pdf::writeReportFile({in}, out.toStdString(), ReportFormat::Pdf, {}), error),
            error.c_str());
        QVERIFY(test::readFile(out.toStdString()).rfind("%PDF-", 0) == 0);
        const QString text = pdfText(out);
        QVERIFY(!text.isEmpty());
        QVERIFY(text.contains("GPU idle while the input pipeline prepares batches"));
        QVERIFY(text.contains(QString::fromStdString(formatDuration(in.analysis->findings.front().savingNs))));
        QVERIFY(text.contains("num_workers=8"));
        QVERIFY(text.contains("page 1 of"));
        QVERIFY(text.contains("Top kernels"));
    }

    void hostileNamesArePlainText() {
        TraceText t;
        for (int s = 0; s < 4; ++s) {
            const int64_t b = s * 700;
            t.step(s, b, 690);
            t.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", b, 400);
            t.cpu("<img src=x onerror=alert(1)>", b + 10, 300);
            t.launch("<b>kernel</b>", b + 450, 5, b + 460, 200);
        }
        const ReportInput in = analysed(t.load(), "inline.json");
        QTemporaryDir dir;
        const QString out = dir.filePath("hostile.pdf");
        std::string error;
        QVERIFY2(
            test::okOr(pdf::writeReportFile({in}, out.toStdString(), ReportFormat::Pdf, {}), error),
            error.c_str());
        const QString text = pdfText(out);
        QVERIFY(text.contains("<img src=x onerror=alert(1)>"));  // shown, not interpreted
        QVERIFY(text.contains("<b>kernel</b>"));
    }

    void readOnlyTargetIsKept() {
        TraceText t;
        t.step(0, 0, 100);
        const ReportInput in = analysed(t.load(), "inline.json");
        QTemporaryDir dir;
        const std::string target = dir.filePath("keep.pdf").toStdString();
        test::writeFile(target, "old");
        ::chmod(target.c_str(), 0444);
        std::string error;
        QVERIFY(!test::okOr(pdf::writeReportFile({in}, target, ReportFormat::Pdf, {}), error));
        QCOMPARE(test::readFile(target), std::string("old"));
    }

    void renderedImageShowsThePictures() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path = test::sharedTraces() / "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
        auto r = importers::importFile(path);
        QVERIFY(r);
        const QImage img = pdf::renderReportImage(buildReport({analysed(r.value(), path.string())}), 900);
        QVERIFY(img.width() == 900 && img.height() > 2000);
        // The data_loading red of the idle-cause bar and the finding shade are painted.
        int red = 0;
        for (int y = 0; y < img.height(); y += 3)
            for (int x = 0; x < img.width(); x += 3) {
                const QColor c = img.pixelColor(x, y);
                red += c.red() > 190 && c.green() < 80 && c.blue() < 80;
            }
        QVERIFY2(red > 200, qPrintable(QString::number(red)));
        if (const char* dir = std::getenv("STALLSCOPE_REPORT_RENDER_DIR")) img.save(QString(dir) + "/report.png");
    }
};

QTEST_MAIN(TestPdfReport)
#include "test_pdf_report.moc"
