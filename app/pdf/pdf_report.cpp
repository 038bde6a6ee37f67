#include "pdf_report.h"

#include "stallscope/base/atomic_file.h"
#include "stallscope/reports/report_format.h"

#include <QAbstractTextDocumentLayout>
#include <QBuffer>
#include <QGuiApplication>
#include <QPainter>
#include <QPdfWriter>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QUrl>

#include <cstdlib>

namespace stallscope::pdf {

namespace {

constexpr int kDpi = 96;              // layout in CSS pixels; text is vector whatever the dpi
constexpr double kPictureScale = 3;   // raster pictures at 3x for print

/// The document laid out for `width` px with its pictures attached.
void prepare(QTextDocument& td, const reports::ReportDocument& doc, int width) {
    std::vector<const reports::Picture*> pictures;
    const std::string html = reports::renderRichText(doc, pictures, width);
    for (size_t i = 0; i < pictures.size(); ++i) {
        const reports::Picture& p = *pictures[i];
        QSvgRenderer svg(QByteArray::fromStdString(p.svg));
        const double fit = p.width > width ? double(width) / p.width : 1.0;
        const QSize size(int(p.width * fit * kPictureScale), int(p.height * fit * kPictureScale));
        QImage img(size, QImage::Format_ARGB32_Premultiplied);
        img.fill(Qt::white);
        QPainter painter(&img);
        painter.setRenderHint(QPainter::Antialiasing);
        svg.render(&painter, QRectF(QPointF(0, 0), QSizeF(size)));
        painter.end();
        img.setDevicePixelRatio(kPictureScale);
        td.addResource(QTextDocument::ImageResource, QUrl(QString("picture:%1").arg(i)), img);
    }
    td.setDefaultFont(QFont("DejaVu Sans", 9));
    td.setHtml(QString::fromStdString(html));
}

} // namespace

void ensureGuiApplication() {
    if (QCoreApplication::instance()) return;
    if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    static int argc = 1;
    static char name[] = "stallscope";
    static char* argv[] = {name, nullptr};
    static QGuiApplication app(argc, argv);
}

base::Status writePdf(const reports::ReportDocument& doc, const std::filesystem::path& out) {
    ensureGuiApplication();
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&buffer);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setPageMargins(QMarginsF(14, 14, 14, 16), QPageLayout::Millimeter);
        writer.setResolution(kDpi);
        writer.setTitle(QString::fromStdString(doc.title));
        writer.setCreator("Stallscope");
        const QRectF page = writer.pageLayout().paintRectPixels(kDpi);
        const double footer = 22;
        QTextDocument td;
        td.documentLayout()->setPaintDevice(&writer);
        td.setPageSize(QSizeF(page.width(), page.height() - footer));
        prepare(td, doc, int(page.width()) - 8);
        QPainter p;
        if (!p.begin(&writer))
            return base::Error{base::ErrorKind::Unwritable, "cannot start the PDF"};
        const int pages = td.pageCount();
        const double h = page.height() - footer;
        for (int i = 0; i < pages; ++i) {
            if (i > 0) writer.newPage();
            p.save();
            p.translate(0, -h * i);
            td.drawContents(&p, QRectF(0, h * i, page.width(), h));
            p.restore();
            p.setPen(QColor(140, 149, 159));
            p.setFont(QFont("DejaVu Sans", 7));
            p.drawText(QRectF(0, page.height() - footer + 6, page.width(), footer - 6), Qt::AlignLeft | Qt::AlignVCenter,
                       QString::fromStdString(doc.title));
            p.drawText(QRectF(0, page.height() - footer + 6, page.width(), footer - 6), Qt::AlignRight | Qt::AlignVCenter,
                       QString("page %1 of %2").arg(i + 1).arg(pages));
        }
        p.end();
    }
    return base::writeFileAtomically(
        out, std::string_view(buffer.data().constData(), size_t(buffer.size())));
}

QImage renderReportImage(const reports::ReportDocument& doc, int width) {
    ensureGuiApplication();
    QTextDocument td;
    td.setTextWidth(width - 24);
    prepare(td, doc, width - 32);
    const QSizeF size = td.size();
    QImage img(QSize(width, int(size.height()) + 24), QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::white);
    QPainter p(&img);
    p.translate(12, 12);
    td.drawContents(&p);
    return img;
}

namespace {
base::Status writePdfReport(const std::vector<reports::ReportInput>& inputs,
                            const std::filesystem::path& out,
                            const reports::ReportOptions& options) {
    return writePdf(reports::buildReport(inputs, options), out);
}
base::Status writePdfComparison(const reports::ReportInput& before,
                                const reports::ReportInput& after, const std::filesystem::path& out,
                                const reports::ReportOptions& options) {
    return writePdf(reports::buildComparison(before, after, options), out);
}
} // namespace

void registerPdfReports() {
    reports::registerReportWriters(reports::ReportFormat::Pdf, writePdfReport, writePdfComparison);
}

base::Status writeReportFile(const std::vector<reports::ReportInput>& inputs,
                             const std::filesystem::path& out, reports::ReportFormat format,
                             const reports::ReportOptions& options) {
    registerPdfReports();
    return reports::writeReport(inputs, out, format, options);
}

base::Status writeComparisonFile(const reports::ReportInput& before,
                                 const reports::ReportInput& after,
                                 const std::filesystem::path& out, reports::ReportFormat format,
                                 const reports::ReportOptions& options) {
    registerPdfReports();
    return reports::writeComparison(before, after, out, format, options);
}

} // namespace stallscope::pdf
