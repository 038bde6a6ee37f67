#include "load_worker.h"

#include "stallscope/importers/memory_budget.h"
#include "stallscope/workspace/rank_summary.h"
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
    // A trace too large for this machine is refused with its size, not killed by the OS.
    lo.memoryBudgetBytes = importers::defaultMemoryBudget();
    lo.analysis = options;
    if (onProgress)
        lo.progress = [onProgress](double f, const std::string& what) {
            onProgress(f, QString::fromStdString(what));
        };
    // The timeline's index is independent of the analysis: built beside it.
    lo.perTrace = [](const model::Trace& t) -> std::shared_ptr<const void> {
        return TimelineIndex::build(t);
    };
    return lo;
}

QString errorText(const base::Error& e) {
    return e.kind == base::ErrorKind::Cancelled ? QStringLiteral("Cancelled")
                                                : QString::fromStdString(e.message);
}

void addTraces(Document& doc, workspace::Workspace& ws) {
    doc.session = std::move(ws.session);
    doc.series = std::move(ws.series); // indices into ws.traces, kept in order here
    for (workspace::AnalysedTrace& at : ws.traces) {
        LoadedTrace lt;
        lt.entry = std::move(at.entry);
        lt.analysis = std::move(at.analysis);
        lt.timeline = std::static_pointer_cast<const TimelineIndex>(at.extra);
        doc.traces.push_back(std::move(lt));
    }
}

/// The series of the document's traces as they are now (after some were left out).
void resetSeries(Document& doc) {
    std::vector<workspace::AnalysedTrace> traces;
    for (const LoadedTrace& lt : doc.traces) traces.push_back({lt.entry, lt.analysis, nullptr});
    doc.series = workspace::rankSeries(traces);
}

/// The detail of one rank of a many-ranks document: its trace, under its rank and label.
std::shared_ptr<Document> loadRank(const Document& ranksOf, int32_t rank,
                                   const analysis::AnalysisOptions& options,
                                   const std::atomic<bool>* cancel, const Progress& onProgress,
                                   QString* error) {
    const analysis::RankSummary* rs = nullptr;
    for (const analysis::RankSummary& x : ranksOf.ranks.ranks)
        if (x.rank == rank) rs = &x;
    if (!rs) {
        if (error) *error = QString("There is no rank %1 in this document").arg(rank);
        return nullptr;
    }
    auto result = workspace::loadAndAnalyse(rs->path, loadOptions(options, cancel, onProgress));
    if (!result) {
        if (error)
            *error = QString("Rank %1's trace %2 could not be loaded: %3")
                         .arg(rank)
                         .arg(QString::fromStdString(rs->path), errorText(result.error()));
        return nullptr;
    }
    auto doc = std::make_shared<Document>();
    doc->path = ranksOf.path;
    doc->manyRanks = true;
    doc->ranks = ranksOf.ranks;
    addTraces(*doc, result.value());
    // A file holding several ranks loads as all of them: keep the one asked for.
    if (doc->traces.size() > 1) {
        std::vector<LoadedTrace> mine;
        for (LoadedTrace& lt : doc->traces)
            if (lt.entry.rank == rank) mine.push_back(std::move(lt));
        if (mine.empty()) {
            if (error)
                *error = QString("Rank %1 is not among the ranks of %2")
                             .arg(rank)
                             .arg(QString::fromStdString(rs->path));
            return nullptr;
        }
        mine.resize(1);
        doc->traces = std::move(mine);
    }
    for (LoadedTrace& lt : doc->traces) {
        lt.entry.rank = rank;
        lt.entry.label = rs->label;
    }
    resetSeries(*doc);
    doc->loadSeconds = result.value().seconds;
    return doc;
}

/// Many ranks: every rank digested (or its summary read) without holding the traces, then the
/// detail of one: the straggler's, else the first rank's.
std::shared_ptr<Document> loadManyRanks(const QString& path,
                                        const analysis::AnalysisOptions& options,
                                        const std::atomic<bool>* cancel, const Progress& onProgress,
                                        QString* error) {
    workspace::LoadOptions lo = loadOptions(options, cancel, onProgress);
    lo.perTrace = nullptr;
    if (onProgress)
        lo.progress = [onProgress](double f, const std::string& what) {
            onProgress(0.8 * f, QString::fromStdString(what));
        };
    auto set = workspace::digestRanks(path.toStdString(), lo);
    if (!set) {
        if (error) *error = errorText(set.error());
        return nullptr;
    }
    Document ranksOf;
    ranksOf.path = path;
    ranksOf.ranks = analysis::analyzeRanks(set.value().digests);
    const int32_t first =
        ranksOf.ranks.straggler >= 0 ? ranksOf.ranks.straggler : set.value().digests.front().rank;
    QString detailError;
    auto doc = loadRank(ranksOf, first, options, cancel,
                        onProgress ? Progress([onProgress](double f, const QString& w) {
                            onProgress(0.8 + 0.2 * f, w);
                        })
                                   : Progress(),
                        &detailError);
    if (cancel && cancel->load()) return nullptr;
    if (!doc) {
        // Summaries from another machine: the ranks without any rank's timeline.
        doc = std::make_shared<Document>();
        doc->path = path;
        doc->manyRanks = true;
        doc->ranks = std::move(ranksOf.ranks);
        doc->detailNote =
            detailError +
            QStringLiteral(". The ranks are shown from their summaries; a rank whose trace is "
                           "reachable opens when clicked.");
    }
    for (const std::string& p : set.value().problems) doc->session.problems.push_back(p);
    doc->loadSeconds += set.value().seconds;
    return doc;
}

/// A progressive open's partial workspace as a document: a trace not analysed yet (no GPU work
/// read) gets an empty analysis that says why.
std::shared_ptr<Document> partialDocument(const QString& path, workspace::Workspace&& ws,
                                          double fraction) {
    auto doc = std::make_shared<Document>();
    doc->path = path;
    doc->partial = true;
    doc->readFraction = fraction;
    addTraces(*doc, ws);
    for (LoadedTrace& lt : doc->traces)
        if (!lt.analysis) {
            auto empty = std::make_shared<analysis::AnalysisResult>();
            empty->window.startNs = lt.entry.trace->startNs();
            empty->window.endNs = lt.entry.trace->endNs();
            empty->window.description = "no GPU work read yet";
            lt.analysis = std::move(empty);
        }
    doc->loadSeconds = ws.seconds;
    return doc;
}

std::shared_ptr<Document> load(const QString& path, const analysis::AnalysisOptions& options,
                               const LoadWorker::Hooks& hooks, QString* error) {
    const std::atomic<bool>* cancel = hooks.cancel;
    const Progress& onProgress = hooks.progress;
    const std::string p = path.toStdString();
    if (!workspace::rankSummaryFiles(p).empty() || workspace::rankTraceFileCount(p) > kDetailRanks)
        return loadManyRanks(path, options, cancel, onProgress, error);
    workspace::LoadOptions lo = loadOptions(options, cancel, onProgress);
    if (hooks.partial && hooks.partialFirstMs) {
        lo.partialFirstMs = hooks.partialFirstMs;
        lo.partial = [&](workspace::Workspace&& ws, double fraction) {
            hooks.partial(partialDocument(path, std::move(ws), fraction));
        };
    }
    auto result = workspace::loadAndAnalyse(p, lo);
    if (!result) {
        if (error) *error = errorText(result.error());
        return nullptr;
    }
    workspace::Workspace& ws = result.value();
    auto doc = std::make_shared<Document>();
    doc->path = path;
    // Each rank once, by its latest steady capture (the inputs point into the traces, which
    // the document keeps).
    const std::vector<analysis::RankInput> inputs = workspace::rankInputs(ws);
    addTraces(*doc, ws);
    if (inputs.size() >= 2) doc->ranks = analysis::analyzeRanks(inputs);
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
