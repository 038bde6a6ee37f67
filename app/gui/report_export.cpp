#include "report_export.h"

#include "pdf_report.h"
#include "stallscope/reports/report_format.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QThread>

namespace stallscope::gui {

ReportExport::~ReportExport() { wait(); }

QString ReportExport::fileFilters() {
    QStringList out;
    for (const reports::ReportFormatInfo& f : reports::reportFormats())
        out << QString::fromUtf8(f.dialogFilter.data(), qsizetype(f.dialogFilter.size()));
    return out.join(";;");
}

bool ReportExport::formatFor(const QString& path, const QString& selectedFilter, int& format) {
    reports::ReportFormat f;
    if (reports::formatFromPath(path.toStdString(), f)) {
        format = static_cast<int>(f);
        return true;
    }
    for (const reports::ReportFormatInfo& info : reports::reportFormats())
        if (selectedFilter ==
            QString::fromUtf8(info.dialogFilter.data(), qsizetype(info.dialogFilter.size()))) {
            format = static_cast<int>(info.format);
            return true;
        }
    return false;
}

void ReportExport::start(std::shared_ptr<const Document> doc, int rank, const QString& path, int format) {
    wait();
    std::vector<reports::ReportInput> inputs;
    // Each rank once: the capture shown of the shown rank, the latest steady capture of the
    // others (a document without series: every trace).
    std::vector<size_t> chosen;
    std::vector<std::string> captureOf(doc->traces.size());
    if (doc->series.empty()) {
        for (size_t i = 0; i < doc->traces.size(); ++i) chosen.push_back(i);
    } else {
        for (const workspace::RankSeries& s : doc->series) {
            size_t k = s.representative;
            for (size_t j = 0; j < s.captures.size(); ++j)
                if (int(s.captures[j].trace) == rank) k = j;
            chosen.push_back(s.captures[k].trace);
            if (s.captures.size() > 1)
                captureOf[s.captures[k].trace] =
                    " · capture " + std::to_string(k + 1) + " of " +
                    std::to_string(s.captures.size()) + " (" +
                    std::string(workspace::capturePhaseName(s.captures[k].phase)) + ")";
        }
    }
    const bool several = chosen.size() > 1;
    for (size_t i : chosen) {
        const LoadedTrace& lt = doc->traces[i];
        if (static_cast<reports::ReportFormat>(format) == reports::ReportFormat::AnnotatedTrace && int(i) != rank) continue;
        reports::ReportInput in;
        in.path = lt.entry.path;
        in.rank = lt.entry.rank;
        if (several || !captureOf[i].empty())
            in.label = (lt.entry.rank >= 0 ? "rank " + std::to_string(lt.entry.rank) + " · " : "") +
                       lt.entry.label + captureOf[i];
        in.trace = lt.entry.trace;
        in.analysis = lt.analysis;
        inputs.push_back(std::move(in));
    }
    m_thread = QThread::create([this, inputs = std::move(inputs), path, format, doc] {
        (void)doc;  // keeps the traces alive while writing
        reports::ReportOptions options;
        options.version = STALLSCOPE_VERSION;
        const base::Status written = pdf::writeReportFile(
            inputs, path.toStdString(), static_cast<reports::ReportFormat>(format), options);
        const bool ok = written.ok();
        const std::string error = ok ? std::string() : written.error().message;
        QMetaObject::invokeMethod(this, [this, path, ok, error] {
            wait();
            Q_EMIT finished(path, ok, QString::fromStdString(error));
        }, Qt::QueuedConnection);
    });
    m_thread->start();
}

void ReportExport::wait() {
    if (!m_thread) return;
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
}

} // namespace stallscope::gui
