#include "load_worker.h"

#include "stallscope/importers/importer.h"
#include "stallscope/importers/memory_budget.h"

#include <QElapsedTimer>
#include <QLocale>
#include <QMetaObject>

#include <future>

namespace stallscope::gui {

namespace {

std::shared_ptr<Document> load(const QString& path, const analysis::AnalysisOptions& options,
                               const std::atomic<bool>* cancel,
                               const std::function<void(double, const QString&)>& onProgress, QString* error) {
    QElapsedTimer timer;
    timer.start();
    importers::ImportOptions io;
    io.cancel = cancel;
    // A trace too large for this machine is refused with its size, not killed by the OS.
    io.memoryBudgetBytes = importers::defaultMemoryBudget();
    io.progress = [&](const importers::ImportProgress& p) {
        if (onProgress && p.bytesTotal > 0)
            onProgress(0.9 * double(p.bytesRead) / double(p.bytesTotal),
                       QString("Reading %1 events").arg(QLocale().toString(qulonglong(p.events))));
    };
    auto result = importers::importPath(path.toStdString(), io);
    if (!result) {
        if (error) *error = QString::fromStdString(result.error().message);
        return nullptr;
    }
    auto doc = std::make_shared<Document>();
    doc->path = path;
    doc->session = std::move(result.value());
    size_t i = 0;
    for (const auto& entry : doc->session.traces) {
        if (cancel && cancel->load()) {
            if (error) *error = "Cancelled";
            return nullptr;
        }
        if (onProgress) onProgress(0.9 + 0.1 * double(i++) / double(doc->session.traces.size()), "Analysing");
        LoadedTrace lt;
        lt.entry = entry;
        // The timeline's index is independent of the analysis: build both at once.
        auto index = std::async(std::launch::async, [&entry] { return TimelineIndex::build(*entry.trace); });
        lt.analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*entry.trace, options));
        lt.timeline = index.get();
        doc->traces.push_back(std::move(lt));
    }
    doc->loadSeconds = double(timer.elapsed()) / 1000.0;
    return doc;
}

} // namespace

LoadWorker::LoadWorker(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<stallscope::gui::Document>>("std::shared_ptr<stallscope::gui::Document>");
}

LoadWorker::~LoadWorker() {
    cancel();
    if (m_thread) m_thread->wait();
}

void LoadWorker::cancel() {
    if (m_cancel) m_cancel->store(true);
}

void LoadWorker::start(const QString& path, const analysis::AnalysisOptions& options) {
    cancel();
    if (m_thread) {
        m_thread->wait();
        m_thread->deleteLater();
        m_thread = nullptr;
    }
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = flag;
    m_thread = QThread::create([this, path, options, flag] {
        QString error;
        auto doc = load(path, options, flag.get(),
                        [this, flag](double f, const QString& what) {
                            if (!flag->load()) Q_EMIT progress(f, what);
                        },
                        &error);
        if (flag->load()) return;  // cancelled: the caller already moved on
        if (doc) Q_EMIT loaded(doc);
        else Q_EMIT failed(error);
    });
    m_thread->start();
}

std::shared_ptr<Document> LoadWorker::loadNow(const QString& path, const analysis::AnalysisOptions& options,
                                              QString* error) {
    return load(path, options, nullptr, nullptr, error);
}

} // namespace stallscope::gui
