#pragma once
// File ▸ Export Report…: writes the open document as HTML, Markdown, JSON, PDF or an
// annotated trace on a worker thread (an annotated trace of a multi-GB file takes a while)
// and reports back with a queued signal.
#include "document.h"

#include <QObject>
#include <QString>

#include <memory>

namespace stallscope::gui {

class ReportExport : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~ReportExport() override;

    /// The save-dialog filters, one per format, in the order of formatForFilter().
    static QString fileFilters();
    /// The format of a chosen file: by extension, else by the selected filter.
    static bool formatFor(const QString& path, const QString& selectedFilter, int& format);

    /// Starts writing `doc` (rank `rank` only for the annotated trace) to `path`.
    void start(std::shared_ptr<const Document> doc, int rank, const QString& path, int format);
    [[nodiscard]] bool busy() const { return m_thread != nullptr; }
    /// Waits for a running export (tests, shutdown).
    void wait();

Q_SIGNALS:
    void finished(const QString& path, bool ok, const QString& error);

private:
    class QThread* m_thread = nullptr;
};

} // namespace stallscope::gui
