#include "load_worker.h"

#include "stallscope/workspace/workspace.h"

#include <QMetaObject>

#include <algorithm>

namespace stallscope::gui {

namespace {

using Progress = std::function<void(double, const QString&)>;

workspace::LoadOptions loadOptions(const analysis::AnalysisOptions& options,
                                   const std::atomic<bool>* cancel, const Progress& onProgress) {
    workspace::LoadOptions lo;
    lo.cancel = cancel;
    lo.analysis = options;
    lo.timelineIndex = true; // built beside the analysis
    if (onProgress)
        lo.progress = [onProgress](double f, const std::string& what) {
            onProgress(f, QString::fromStdString(what));
        };
    return lo;
}

std::shared_ptr<Document> documentOf(base::Result<workspace::Workspace>&& r, QString* error) {
    if (!r) {
        if (error)
            *error = r.error().kind == base::ErrorKind::Cancelled
                         ? QStringLiteral("Cancelled")
                         : QString::fromStdString(r.error().message);
        return nullptr;
    }
    return std::make_shared<Document>(std::move(r.value()));
}

std::shared_ptr<Document> loadRank(const Document& ranksOf, int32_t rank,
                                   const analysis::AnalysisOptions& options,
                                   const std::atomic<bool>* cancel, const Progress& onProgress,
                                   QString* error) {
    return documentOf(workspace::openRank(ranksOf, rank, loadOptions(options, cancel, onProgress)),
                      error);
}

std::shared_ptr<Document> load(const QString& path, const analysis::AnalysisOptions& options,
                               const LoadWorker::Hooks& hooks, QString* error) {
    workspace::LoadOptions lo = loadOptions(options, hooks.cancel, hooks.progress);
    if (hooks.partial && hooks.partialFirstMs) {
        lo.partialFirstMs = hooks.partialFirstMs;
        lo.partial = [&](workspace::Workspace&& ws) {
            hooks.partial(std::make_shared<Document>(std::move(ws)));
        };
    }
    return documentOf(workspace::open(path.toStdString(), lo), error);
}

} // namespace

LoadWorker::LoadWorker(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<stallscope::gui::Document>>("std::shared_ptr<stallscope::gui::Document>");
}

LoadWorker::~LoadWorker() {
    cancel();
    if (m_thread) m_thread->wait();
    for (QThread* t : m_retired) {
        t->wait();
        delete t;
    }
    delete m_thread;
}

void LoadWorker::cancel() {
    if (m_cancel) m_cancel->store(true);
}

void LoadWorker::run(std::function<std::shared_ptr<Document>(const Hooks&, QString*)> job) {
    cancel();
    if (m_thread) {
        // Not waited for: a cancelled load ends on its own (its signals are off).
        QThread* old = m_thread;
        m_thread = nullptr;
        m_retired.push_back(old);
        connect(old, &QThread::finished, this, [this, old] {
            auto it = std::find(m_retired.begin(), m_retired.end(), old);
            if (it == m_retired.end()) return;
            m_retired.erase(it);
            old->deleteLater();
        });
        if (old->isFinished()) { // ended before the connection: its finished() is gone
            m_retired.pop_back();
            old->deleteLater();
        }
    }
    auto flag = std::make_shared<std::atomic<bool>>(false);
    m_cancel = flag;
    const unsigned partialMs = m_partialFirstMs;
    // Signals leave from the GUI thread, checked there against the flag that cancel() sets
    // there: nothing of a load cancelled before its signal is delivered reaches the window,
    // even when the load had already sent it (dropped with this worker if it is gone).
    auto deliver = [this, flag](auto emitNow) {
        if (flag->load()) return;
        QMetaObject::invokeMethod(
            this,
            [flag, emitNow = std::move(emitNow)] {
                if (!flag->load()) emitNow();
            },
            Qt::QueuedConnection);
    };
    m_thread = QThread::create([this, job = std::move(job), flag, partialMs, deliver] {
        QString error;
        Hooks hooks;
        hooks.cancel = flag.get();
        hooks.progress = [this, deliver](double f, const QString& what) {
            deliver([this, f, what] { Q_EMIT progress(f, what); });
        };
        hooks.partial = [this, deliver](std::shared_ptr<Document> doc) {
            deliver([this, doc = std::move(doc)] { Q_EMIT partial(doc); });
        };
        hooks.partialFirstMs = partialMs;
        auto doc = job(hooks, &error);
        if (doc)
            deliver([this, doc] { Q_EMIT loaded(doc); });
        else
            deliver([this, error] { Q_EMIT failed(error); });
    });
    m_thread->start();
}

void LoadWorker::start(const QString& path, const analysis::AnalysisOptions& options) {
    run([path, options](const Hooks& hooks, QString* error) {
        return load(path, options, hooks, error);
    });
}

void LoadWorker::startRank(std::shared_ptr<const Document> ranksOf, int32_t rank,
                           const analysis::AnalysisOptions& options) {
    run([ranksOf = std::move(ranksOf), rank, options](const Hooks& hooks, QString* error) {
        return loadRank(*ranksOf, rank, options, hooks.cancel, hooks.progress, error);
    });
}

std::shared_ptr<Document> LoadWorker::loadNow(const QString& path, const analysis::AnalysisOptions& options,
                                              QString* error) {
    return load(path, options, Hooks{}, error);
}

std::shared_ptr<Document> LoadWorker::loadRankNow(const Document& ranksOf, int32_t rank,
                                                  const analysis::AnalysisOptions& options,
                                                  QString* error) {
    return loadRank(ranksOf, rank, options, nullptr, nullptr, error);
}

} // namespace stallscope::gui
