#include "compare_window.h"

#include "diff_flame_widget.h"
#include "gui_text.h"
#include "load_worker.h"
#include "overview_panel.h"
#include "theme.h"
#include "timeline/timeline_view.h"

#include "stallscope/analysis/regression.h"
#include "stallscope/analysis/step_breakdown.h"
#include "stallscope/reports/palette.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace stallscope::gui {

using namespace analysis;

namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString perStep(double ns) {
    return durationText(int64_t(std::llround(ns)));
}

QString signedDuration(double ns) {
    return (ns > 0 ? "+" : ns < 0 ? "−" : "") + perStep(std::abs(ns));
}

QString callsText(double v) {
    return v == std::floor(v) ? QString::number(qlonglong(v)) : QString::number(v, 'f', 1);
}

/// A cell that sorts by a number (Qt::UserRole) and shows text.
class NumberItem : public QTableWidgetItem {
public:
    NumberItem(const QString& text, double value) : QTableWidgetItem(text) {
        setData(Qt::UserRole, value);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& o) const override {
        return data(Qt::UserRole).toDouble() < o.data(Qt::UserRole).toDouble();
    }
};

QTableWidget* makeTable(const QStringList& header, QWidget* parent) {
    auto* t = new QTableWidget(0, int(header.size()), parent);
    t->setHorizontalHeaderLabels(header);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->verticalHeader()->hide();
    t->setWordWrap(false);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

QColor changeColor(RowChange c) {
    const Theme& th = Theme::current();
    switch (c) {
    case RowChange::Faster:
    case RowChange::Removed: return th.dark ? QColor(0x7C, 0xD9, 0x92) : QColor(0x1B, 0x7F, 0x3B);
    case RowChange::Slower:
    case RowChange::Added: return th.dark ? QColor(0xF2, 0x8B, 0x82) : QColor(0xB3, 0x26, 0x1E);
    case RowChange::Same: break;
    }
    return th.mutedText;
}

} // namespace

CompareWindow::CompareWindow(QWidget* parent) : QWidget(parent) {
    setObjectName("compareWindow");
    setWindowTitle(tr("Stallscope — compare"));
    auto* root = new QVBoxLayout(this);
    m_summary = new QLabel(tr("Loading…"), this);
    m_summary->setObjectName("compareSummary");
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    root->addWidget(m_summary);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Align at step:"), this));
    m_stepCombo = new QComboBox(this);
    m_stepCombo->setObjectName("compareStep");
    m_stepCombo->setToolTip(tr("The two timelines start this step at the same x; zoom and pan "
                               "move both. Selecting a table row aligns them at its events."));
    bar->addWidget(m_stepCombo);
    bar->addStretch(1);
    root->addLayout(bar);
    connect(m_stepCombo, &QComboBox::activated, this, [this](int i) { alignAtStep(i); });

    auto* split = new QSplitter(Qt::Vertical, this);
    auto addTimeline = [&](QLabel*& label, TimelineView*& view, const QString& name) {
        auto* box = new QWidget(split);
        auto* l = new QVBoxLayout(box);
        l->setContentsMargins(0, 0, 0, 0);
        l->setSpacing(2);
        label = new QLabel(name, box);
        label->setTextFormat(Qt::RichText);
        view = new TimelineView(box);
        view->setObjectName(name.toLower());
        l->addWidget(label);
        l->addWidget(view, 1);
        split->addWidget(box);
        connect(view, &TimelineView::viewChanged, this, [this, view] { syncFrom(view); });
    };
    addTimeline(m_beforeLabel, m_before, tr("Before"));
    addTimeline(m_afterLabel, m_after, tr("After"));

    m_tabs = new QTabWidget(split);
    m_tabs->setObjectName("compareTabs");
    // Overview: the steps of both on one scale.
    auto* overview = new QWidget(m_tabs);
    auto* ol = new QVBoxLayout(overview);
    auto* modeRow = new QHBoxLayout;
    m_overviewMode = new QComboBox(overview);
    m_overviewMode->addItems(
        {tr("What ran (TensorBoard plugin's step breakdown)"), tr("Why the GPU was idle")});
    modeRow->addWidget(m_overviewMode);
    m_legend = new QLabel(overview);
    m_legend->setTextFormat(Qt::RichText);
    modeRow->addWidget(m_legend, 1);
    ol->addLayout(modeRow);
    auto* barsRow = new QHBoxLayout;
    for (auto [bars, name] :
         {std::pair{&m_beforeBars, tr("Before")}, std::pair{&m_afterBars, tr("After")}}) {
        auto* col = new QVBoxLayout;
        col->addWidget(new QLabel("<b>" + name + "</b>", overview));
        *bars = new StepBarsWidget(overview);
        col->addWidget(*bars, 1);
        barsRow->addLayout(col, 1);
    }
    ol->addLayout(barsRow, 1);
    connect(m_overviewMode, &QComboBox::currentIndexChanged, this, [this] { fillOverview(); });
    // A bar clicked: the timelines aligned at that step (its position in its run's window).
    for (bool after : {false, true})
        connect(after ? m_afterBars : m_beforeBars, &StepBarsWidget::stepClicked, this,
                [this, after](int64_t number) {
                    const LoadedTrace* t = side(after);
                    if (!t) return;
                    const auto& steps = t->analysis->steps;
                    for (size_t i = 0; i < steps.size(); ++i)
                        if (steps[i].number == number && int(i) < m_stepCombo->count()) {
                            m_stepCombo->setCurrentIndex(int(i));
                            alignAtStep(int(i));
                        }
                });
    m_tabs->addTab(overview, tr("Overview"));

    m_findings =
        makeTable({tr("Status"), tr("Finding"), tr("Saves before"), tr("Saves after")}, m_tabs);
    m_findings->setObjectName("compareFindings");
    m_tabs->addTab(m_findings, tr("Findings"));
    connect(m_findings, &QTableWidget::currentCellChanged, this, [this](int row) {
        if (row < 0 || !m_diff || size_t(row) >= m_diff->findings.size()) return;
        const FindingChange& c = m_diff->findings[size_t(row)];
        for (bool after : {false, true}) {
            const LoadedTrace* t = side(after);
            const std::string& id = after ? c.afterId : c.beforeId;
            const Finding* hit = nullptr;
            if (t)
                for (const Finding& f : t->analysis->findings)
                    if (!id.empty() && f.id == id) hit = &f;
            m_syncing = true;
            timeline(after)->showFinding(hit);
            m_syncing = false;
        }
    });
    const QStringList header{tr("Change"), tr("Name"),     QString(),   tr("Calls"),
                             tr("Time"),   tr("Per call"), tr("Δ time")};
    for (bool kernels : {false, true}) {
        QStringList h = header;
        h[2] = kernels ? tr("Launched by") : tr("Input shapes");
        QTableWidget* t = makeTable(h, m_tabs);
        t->setObjectName(kernels ? "compareKernels" : "compareOperators");
        (kernels ? m_kernels : m_operators) = t;
        m_tabs->addTab(t, kernels ? tr("Kernels") : tr("Operators"));
        connect(t, &QTableWidget::currentCellChanged, this, [this, kernels, t](int row) {
            if (row >= 0) selectRow(kernels, t->item(row, 0)->data(Qt::UserRole + 1).toInt());
        });
    }
    auto* scroll = new QScrollArea(m_tabs);
    m_flame = new DiffFlameWidget(scroll);
    scroll->setWidget(m_flame);
    scroll->setWidgetResizable(true);
    m_tabs->addTab(scroll, tr("Differential flame graph"));
    m_ranks = makeTable({tr("Rank"), tr("Window before → after"), tr("Waiting before → after"),
                         tr("Δ window"), tr("Δ waiting")},
                        m_tabs);
    m_ranks->setObjectName("compareRanks");
    m_tabs->addTab(m_ranks, tr("Ranks"));
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 3);
    split->setStretchFactor(2, 4);
    root->addWidget(split, 1);
}

namespace {
/// The trace a document is compared by: its first rank's representative capture.
const LoadedTrace* shownTrace(const Document* d) {
    if (!d || d->traces.empty()) return nullptr;
    const LoadedTrace* t = d->representative(0);
    return t ? t : &d->traces.front();
}

bool memoryOnly(const LoadedTrace* t) {
    return t->entry.trace->slices().size() == 0 && !t->entry.trace->memorySamples().empty();
}

/// The comparison of two loaded documents, on the loading thread (a diff of large traces
/// reads every operator's shapes back: not on the GUI thread); null when they do not compare.
std::shared_ptr<const RunDiff> diffOf(const Document* before, const Document* after) {
    const LoadedTrace* b = shownTrace(before);
    const LoadedTrace* a = shownTrace(after);
    if (!b || !a || !b->analysis || !a->analysis || memoryOnly(b) || memoryOnly(a)) return nullptr;
    return std::make_shared<const RunDiff>(
        diffRuns(*b->entry.trace, *b->analysis, *a->entry.trace, *a->analysis, {}));
}
} // namespace

void CompareWindow::openPaths(const QString& before, const QString& after) {
    m_summary->setText(tr("Loading %1 and %2…").arg(before.toHtmlEscaped(), after.toHtmlEscaped()));
    m_job.start(
        [before, after](const std::atomic<bool>&) {
            Loaded l;
            QString error;
            l.before = LoadWorker::loadNow(before, {}, &error);
            if (l.before) l.after = LoadWorker::loadNow(after, {}, &error);
            if (!l.before || !l.after) {
                l.error = (l.before ? after : before) + ": " + error;
                return l;
            }
            l.diff = diffOf(l.before.get(), l.after.get());
            return l;
        },
        [this](Loaded l) { present(std::move(l)); });
}

void CompareWindow::openBaseline(const QString& before, std::shared_ptr<Document> after) {
    m_summary->setText(tr("Loading %1…").arg(before.toHtmlEscaped()));
    m_job.start(
        [before, after](const std::atomic<bool>&) {
            Loaded l;
            QString error;
            l.before = LoadWorker::loadNow(before, {}, &error);
            l.after = after;
            if (!l.before)
                l.error = before + ": " + error;
            else
                l.diff = diffOf(l.before.get(), l.after.get());
            return l;
        },
        [this](Loaded l) { present(std::move(l)); });
}

void CompareWindow::setDocuments(std::shared_ptr<Document> before,
                                 std::shared_ptr<Document> after) {
    Loaded l;
    l.before = std::move(before);
    l.after = std::move(after);
    present(std::move(l));
}

const LoadedTrace* CompareWindow::side(bool after) const {
    return shownTrace(after ? m_afterDoc.get() : m_beforeDoc.get());
}

void CompareWindow::present(Loaded l) {
    m_diff.reset();
    if (!l.error.isEmpty()) {
        m_summary->setText("<b>" + tr("Cannot compare:") + "</b> " + l.error.toHtmlEscaped());
        return;
    }
    m_beforeDoc = std::move(l.before);
    m_afterDoc = std::move(l.after);
    const LoadedTrace* b = side(false);
    const LoadedTrace* a = side(true);
    if (!b || !a || !b->analysis || !a->analysis) {
        m_summary->setText(tr("Cannot compare: a side holds no analysed trace."));
        return;
    }
    // Memory recordings alone (allocator snapshots, memory timelines) hold no GPU activity to
    // align: what they compare is memory, which the CLI compares.
    if (memoryOnly(b) || memoryOnly(a)) {
        m_summary->setText(
            tr("<b>Memory recordings</b> (an allocator snapshot or a memory timeline) hold no GPU "
               "activity to align. Compare them with <code>stallscope-cli diff BEFORE AFTER</code> "
               "(peaks, what was reserved and held, what was live at the peak, before → after), "
               "or open each on its Memory tab."));
        return;
    }
    m_diff = l.diff ? l.diff : diffOf(m_beforeDoc.get(), m_afterDoc.get());
    setWindowTitle(tr("Stallscope — %1 → %2")
                       .arg(QString::fromStdString(b->entry.path).section('/', -1),
                            QString::fromStdString(a->entry.path).section('/', -1)));
    m_before->setData(b->entry.trace, b->analysis, b->timeline);
    m_after->setData(a->entry.trace, a->analysis, a->timeline);
    for (bool after : {false, true}) {
        const LoadedTrace* t = after ? a : b;
        (after ? m_afterLabel : m_beforeLabel)
            ->setText("<b>" + (after ? tr("After") : tr("Before")) + "</b> · " +
                      QString::fromStdString(t->entry.path).toHtmlEscaped() + " · " +
                      (t->analysis->stepTimes.count
                           ? tr("mean step %1").arg(durationText(t->analysis->stepTimes.meanNs))
                           : tr("window %1").arg(durationText(t->analysis->window.length()))));
    }
    m_stepCombo->clear();
    const auto& sb = b->analysis->steps;
    const auto& sa = a->analysis->steps;
    for (size_t i = 0; i < std::min(sb.size(), sa.size()); ++i)
        m_stepCombo->addItem(
            tr("step %1: #%2 ↔ #%3").arg(i + 1).arg(sb[i].number).arg(sa[i].number));
    if (m_stepCombo->count() == 0) m_stepCombo->addItem(tr("window starts"));
    fillSummary();
    fillOverview();
    fillFindings();
    fillTable(false);
    fillTable(true);
    m_flame->setGraph(m_diff->flame);
    fillRanks();
    alignAtStep(0);
}

void CompareWindow::fillSummary() {
    const RunDiff& d = *m_diff;
    const StepTimeChange& s = d.step;
    QString text = "<b>" + (s.beforeSteps && s.afterSteps ? tr("Step time") : tr("Window")) +
                   "</b> " + durationText(s.beforeNs) + " → " + durationText(s.afterNs) +
                   QString(" (%1%2%)").arg(s.changePct > 0 ? "+" : "").arg(s.changePct, 0, 'f', 1) +
                   ", ";
    text += s.noiseNs < 0 ? tr("spread unknown (a run has fewer than 2 steps)")
                          : (s.beyondNoise() ? tr("beyond the step-to-step noise (±%1)")
                                             : tr("within the step-to-step noise (±%1)"))
                                .arg(perStep(s.noiseNs));
    size_t n[3] = {0, 0, 0};
    for (const auto& f : d.findings) ++n[size_t(f.status)];
    text +=
        ". " + tr("Findings: %1 resolved, %2 new, %3 persisting.").arg(n[0]).arg(n[1]).arg(n[2]);
    for (const Prediction& p : d.predictions) {
        QString ids;
        for (const auto& id : p.findingIds) ids += (ids.isEmpty() ? "" : " + ") + qs(id);
        text +=
            "<br>" + tr("BEFORE's replay of the fix for <code>%1</code>: %2 → <b>predicted %3</b>; "
                        "measured after: <b>%4</b>")
                         .arg(ids.toHtmlEscaped(), durationText(p.beforeNs),
                              durationText(p.predictedNs), durationText(p.afterNs));
    }
    for (const auto& note : d.notes) text += "<br><i>" + qs(note).toHtmlEscaped() + "</i>";
    m_summary->setText(text);
}

void CompareWindow::fillOverview() {
    const LoadedTrace* b = side(false);
    const LoadedTrace* a = side(true);
    if (!b || !a) return;
    const auto mode = m_overviewMode->currentIndex() == 1 ? StepBarsWidget::Mode::IdleCauses
                                                          : StepBarsWidget::Mode::Categories;
    auto breakdownOf = [](const LoadedTrace* t) {
        return t->analysis->devices.empty() ? StepBreakdown{}
                                            : stepBreakdown(t->analysis->devices.front());
    };
    m_beforeBars->setBreakdown(breakdownOf(b), mode);
    m_afterBars->setBreakdown(breakdownOf(a), mode);
    const int64_t scale = std::max(m_beforeBars->longestBarNs(), m_afterBars->longestBarNs());
    m_beforeBars->setScaleNs(scale);
    m_afterBars->setScaleNs(scale);
    QString legend;
    if (mode == StepBarsWidget::Mode::Categories)
        for (size_t k = 0; k < kBreakdownCategories; ++k)
            legend += QString("<span style='color:#%1'>■</span> %2 &nbsp; ")
                          .arg(reports::breakdownRgb(k), 6, 16, QChar('0'))
                          .arg(qs(breakdownCategories()[k].label));
    else
        legend = tr("GPU busy at the bottom, then the idle time by cause (hover a segment)");
    m_legend->setText(legend);
}

void CompareWindow::fillFindings() {
    m_findings->setRowCount(int(m_diff->findings.size()));
    int row = 0;
    for (const FindingChange& f : m_diff->findings) {
        auto* status = new QTableWidgetItem(qs(findingStatusName(f.status)));
        status->setForeground(f.status == FindingStatus::Resolved ? changeColor(RowChange::Faster)
                              : f.status == FindingStatus::New    ? changeColor(RowChange::Slower)
                                                                  : Theme::current().text);
        m_findings->setItem(row, 0, status);
        m_findings->setItem(row, 1, new QTableWidgetItem(qs(f.title) + "  (" + qs(f.id) + ")"));
        m_findings->setItem(
            row, 2,
            new NumberItem(f.beforeSavingNs < 0 ? "–" : durationText(f.beforeSavingNs),
                           double(f.beforeSavingNs)));
        m_findings->setItem(
            row, 3,
            new NumberItem(f.afterSavingNs < 0 ? "–" : durationText(f.afterSavingNs),
                           double(f.afterSavingNs)));
        ++row;
    }
    m_findings->resizeColumnsToContents();
}

void CompareWindow::fillTable(bool kernels) {
    QTableWidget* t = table(kernels);
    const auto& rows = kernels ? m_diff->kernels : m_diff->operators;
    t->setSortingEnabled(false);
    t->setRowCount(int(rows.size()));
    for (size_t i = 0; i < rows.size(); ++i) {
        const AlignedRow& r = rows[i];
        const bool gpu = r.gpuTimed;
        // The change column sorts back to the diff's order (largest change first).
        auto* change = new NumberItem(qs(rowChangeName(r.change)), double(i));
        change->setTextAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        change->setForeground(changeColor(r.change));
        change->setData(Qt::UserRole + 1, int(i)); // the row of the diff, whatever the sort
        QString name = qs(r.name);
        QString tip = name;
        if (r.byFamily) {
            QStringList b, a;
            for (const auto& k : r.before.names) b << qs(k);
            for (const auto& k : r.after.names) a << qs(k);
            name += " (" + QString::number(b.size()) + " → " + QString::number(a.size()) + ")";
            tip = tr("Matched by family under its operator.\nBefore: %1\nAfter: %2")
                      .arg(b.join("\n  "), a.join("\n  "));
        }
        auto* nameItem = new QTableWidgetItem(name);
        nameItem->setToolTip(tip);
        const QString detail = kernels
                                   ? (r.op.empty() ? tr("(no operator)") : qs(r.op))
                                   : qs(r.shapes) + (r.dtypes.empty() ? "" : "  " + qs(r.dtypes));
        auto* detailItem = new QTableWidgetItem(detail);
        detailItem->setToolTip(detail);
        t->setItem(int(i), 0, change);
        t->setItem(int(i), 1, nameItem);
        t->setItem(int(i), 2, detailItem);
        const double cb = r.before.perStep(int64_t(r.before.calls)),
                     ca = r.after.perStep(int64_t(r.after.calls));
        t->setItem(int(i), 3, new NumberItem(callsText(cb) + " → " + callsText(ca), ca - cb));
        t->setItem(int(i), 4,
                   new NumberItem(perStep(r.compared(r.before)) + " → " +
                                      perStep(r.compared(r.after)) +
                                      (!kernels && gpu ? tr(" (GPU)") : QString()),
                                  r.compared(r.after)));
        t->setItem(int(i), 5,
                   new NumberItem(perStep(r.before.perCallNs(gpu)) + " → " +
                                      perStep(r.after.perCallNs(gpu)),
                                  r.after.perCallNs(gpu) - r.before.perCallNs(gpu)));
        auto* delta = new NumberItem(signedDuration(r.deltaNs()), r.deltaNs());
        delta->setForeground(changeColor(r.deltaNs() < 0   ? RowChange::Faster
                                         : r.deltaNs() > 0 ? RowChange::Slower
                                                           : RowChange::Same));
        t->setItem(int(i), 6, delta);
    }
    t->setSortingEnabled(true);
    t->sortItems(0, Qt::AscendingOrder);
    t->horizontalHeader()->setSortIndicatorShown(true);
    t->setColumnWidth(0, 70);
    t->setColumnWidth(1, 380);
    t->setColumnWidth(2, 220);
    t->setColumnWidth(3, 110);
    t->setColumnWidth(4, 190);
    t->setColumnWidth(5, 190);
    const QString per = m_diff->perStep ? tr(" / step") : QString();
    t->horizontalHeaderItem(3)->setText(tr("Calls") + per);
    t->horizontalHeaderItem(4)->setText(tr("Time") + per);
}

void CompareWindow::fillRanks() {
    m_ranks->setRowCount(0);
    const auto& rb = m_beforeDoc->ranks.ranks;
    const auto& ra = m_afterDoc->ranks.ranks;
    const bool both = rb.size() >= 2 && ra.size() >= 2;
    m_tabs->setTabEnabled(Ranks, both);
    m_tabs->setTabToolTip(Ranks,
                          both ? tr("Each rank's window and its waiting for the last rank "
                                    "at collectives, before and after")
                               : tr("Both runs need several ranks (a folder of rank traces)"));
    if (!both) return;
    for (const RankSummary& x : rb)
        for (const RankSummary& y : ra) {
            if (x.rank != y.rank) continue;
            const int row = m_ranks->rowCount();
            m_ranks->insertRow(row);
            m_ranks->setItem(row, 0, new NumberItem(QString::number(x.rank), x.rank));
            m_ranks->setItem(
                row, 1,
                new NumberItem(durationText(x.windowNs) + " → " + durationText(y.windowNs),
                               double(y.windowNs)));
            m_ranks->setItem(row, 2,
                             new NumberItem(durationText(x.waitNs) + " → " + durationText(y.waitNs),
                                            double(y.waitNs)));
            m_ranks->setItem(row, 3,
                             new NumberItem(signedDuration(double(y.windowNs - x.windowNs)),
                                            double(y.windowNs - x.windowNs)));
            m_ranks->setItem(row, 4,
                             new NumberItem(signedDuration(double(y.waitNs - x.waitNs)),
                                            double(y.waitNs - x.waitNs)));
        }
    m_ranks->resizeColumnsToContents();
}

void CompareWindow::alignAtStep(int index) {
    const LoadedTrace* b = side(false);
    const LoadedTrace* a = side(true);
    if (!b || !a) return;
    const auto& sb = b->analysis->steps;
    const auto& sa = a->analysis->steps;
    int64_t lo, hi;
    if (index >= 0 && size_t(index) < std::min(sb.size(), sa.size())) {
        m_offsetNs = sa[size_t(index)].startNs - sb[size_t(index)].startNs;
        lo = sb[size_t(index)].startNs;
        hi = std::max(sb[size_t(index)].gpuEndNs, sb[size_t(index)].endNs);
        const auto& s = sa[size_t(index)];
        hi =
            std::max(hi, lo + (std::max(s.gpuEndNs, s.endNs) - s.startNs)); // the longer of the two
    } else {
        m_offsetNs = a->analysis->window.startNs - b->analysis->window.startNs;
        lo = b->analysis->window.startNs;
        hi = lo + std::max(b->analysis->window.length(), a->analysis->window.length());
    }
    m_syncing = true;
    m_before->zoomTo(lo, hi, 0.03);
    m_syncing = false;
    syncFrom(m_before);
}

void CompareWindow::syncFrom(TimelineView* from) {
    if (m_syncing) return;
    TimelineView* to = from == m_before ? m_after : m_before;
    const int64_t shift = from == m_before ? m_offsetNs : -m_offsetNs;
    const TimelineViewport& v = from->viewport();
    m_syncing = true;
    to->zoomTo(v.startNs + shift, v.endNs() + shift, 0);
    m_syncing = false;
}

void CompareWindow::selectRow(bool kernels, int row) {
    const auto& rows = kernels ? m_diff->kernels : m_diff->operators;
    if (row < 0 || size_t(row) >= rows.size()) return;
    const AlignedRow& r = rows[size_t(row)];
    const model::SliceId eb = r.before.example, ea = r.after.example;
    m_syncing = true;
    if (eb.valid())
        m_before->selectSlice(eb, true);
    else
        m_before->clearSelection();
    if (ea.valid())
        m_after->selectSlice(ea, true);
    else
        m_after->clearSelection();
    m_syncing = false;
    const LoadedTrace* b = side(false);
    const LoadedTrace* a = side(true);
    if (eb.valid() && ea.valid())
        m_offsetNs =
            a->entry.trace->slices().start[ea.index()] - b->entry.trace->slices().start[eb.index()];
    syncFrom(eb.valid() ? m_before : m_after);
}

} // namespace stallscope::gui
