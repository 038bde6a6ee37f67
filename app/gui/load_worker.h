#pragma once
// Imports and analyses a file or folder off the GUI thread. Progress, the result and
// errors come back as queued signals; cancel() stops the import cooperatively. A large single
// file opens progressively: partial documents (the events read so far, analysed over the part
// whose GPU work is read) come before the whole one.
#include "document.h"

#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

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
    /// Stops the running load: none of its signals follow. Returns at once; the load's thread
    /// ends on its own (a partial document being analysed is finished and dropped).
    void cancel();
    [[nodiscard]] bool busy() const { return m_thread && m_thread->isRunning(); }
    /// Progressive open: the first partial document after this long (ms; 0: never). Tests and
    /// benchmarks lower it.
    void setPartialFirstMs(unsigned ms) { m_partialFirstMs = ms; }

    /// The same work on the calling thread (headless screenshots, tests).
    static std::shared_ptr<Document> loadNow(const QString& path, const analysis::AnalysisOptions& options,
                                             QString* error);
    static std::shared_ptr<Document> loadRankNow(const Document& ranksOf, int32_t rank,
                                                 const analysis::AnalysisOptions& options,
                                                 QString* error);

Q_SIGNALS:
    void progress(double fraction, const QString& what);
    /// A progressive open's document so far (Document::partial); `loaded` follows unless the
    /// load fails or is cancelled.
    void partial(std::shared_ptr<stallscope::gui::Document> document);
    void loaded(std::shared_ptr<stallscope::gui::Document> document);
    void failed(const QString& message);

public:
    /// What a load job gets: the cancel flag and where progress and partial documents go.
    struct Hooks {
        const std::atomic<bool>* cancel = nullptr;
        std::function<void(double, const QString&)> progress;
        std::function<void(std::shared_ptr<Document>)> partial;
        unsigned partialFirstMs = 0;
    };

private:
    void run(std::function<std::shared_ptr<Document>(const Hooks&, QString*)> job);
    QThread* m_thread = nullptr;
    std::vector<QThread*> m_retired; // cancelled loads still ending
    std::shared_ptr<std::atomic<bool>> m_cancel;
    unsigned m_partialFirstMs = 700;
};

} // namespace stallscope::gui
