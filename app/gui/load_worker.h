#pragma once
// Imports and analyses a file or folder off the GUI thread. Progress, the result and
// errors come back as queued signals; cancel() stops the import cooperatively.
#include "document.h"

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>

namespace stallscope::gui {

class LoadWorker : public QObject {
    Q_OBJECT
public:
    explicit LoadWorker(QObject* parent = nullptr);
    ~LoadWorker() override;

    /// Starts loading `path` on the worker thread (a running load is cancelled first).
    void start(const QString& path, const analysis::AnalysisOptions& options = {});
    /// Loads the detail of one rank of a many-ranks document: a new document with the same
    /// ranks and that rank's trace.
    void startRank(std::shared_ptr<const Document> ranksOf, int32_t rank,
                   const analysis::AnalysisOptions& options = {});
    void cancel();
    [[nodiscard]] bool busy() const { return m_thread && m_thread->isRunning(); }

    /// The same work on the calling thread (headless screenshots, tests).
    static std::shared_ptr<Document> loadNow(const QString& path, const analysis::AnalysisOptions& options,
                                             QString* error);
    static std::shared_ptr<Document> loadRankNow(const Document& ranksOf, int32_t rank,
                                                 const analysis::AnalysisOptions& options,
                                                 QString* error);

Q_SIGNALS:
    void progress(double fraction, const QString& what);
    void loaded(std::shared_ptr<stallscope::gui::Document> document);
    void failed(const QString& message);

private:
    void
    run(std::function<std::shared_ptr<Document>(
            const std::atomic<bool>*, const std::function<void(double, const QString&)>&, QString*)>
            job);
    QThread* m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;
};

} // namespace stallscope::gui
