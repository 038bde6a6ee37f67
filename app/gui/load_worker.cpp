#include "load_worker.h"

#include "stallscope/importers/memory_budget.h"
#include "stallscope/workspace/workspace.h"

#include <QMetaObject>

namespace stallscope::gui {

namespace {

std::shared_ptr<Document> load(const QString& path, const analysis::AnalysisOptions& options,
                               const std::atomic<bool>* cancel,
                               const std::function<void(double, const QString&)>& onProgress, QString* error) {
    workspace::LoadOptions lo;
    lo.cancel = cancel;
    // A trace too large for this machine is refused with its size, not killed by the OS.
    lo.memoryBudgetBytes = importers::defaultMemoryBudget();
    lo.analysis = options;
    if (onProgress)
        lo.progress = [&](double f, const std::string& what) {
            onProgress(f, QString::fromStdString(what));
        };
    // The timeline's index is independent of the analysis: built beside it.
    lo.perTrace = [](const model::Trace& t) -> std::shared_ptr<const void> {
        return TimelineIndex::build(t);
    };
    auto result = workspace::loadAndAnalyse(path.toStdString(), lo);
    if (!result) {
        if (error)
            *error = result.error().kind == base::ErrorKind::Cancelled
                         ? QStringLiteral("Cancelled")
                         : QString::fromStdString(result.error().message);
        return nullptr;
    }
    workspace::Workspace& ws = result.value();
    auto doc = std::make_shared<Document>();
    doc->path = path;
    doc->session = std::move(ws.session);
    for (workspace::AnalysedTrace& at : ws.traces) {
        LoadedTrace lt;
        lt.entry = std::move(at.entry);
        lt.analysis = std::move(at.analysis);
        lt.timeline = std::static_pointer_cast<const TimelineIndex>(at.extra);
        doc->traces.push_back(std::move(lt));
    }
    if (doc->traces.size() >= 2) {
        std::vector<analysis::RankInput> inputs;
        for (size_t i = 0; i < doc->traces.size(); ++i) {
            const LoadedTrace& lt = doc->traces[i];
            if (lt.analysis)
                inputs.push_back({lt.entry.rank >= 0 ? lt.entry.rank : int32_t(i), lt.entry.label,
                                  lt.entry.trace.get(), lt.analysis.get()});
        }
        if (inputs.size() >= 2) doc->ranks = analysis::analyzeRanks(inputs);
    }
    doc->loadSeconds = ws.seconds;
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
