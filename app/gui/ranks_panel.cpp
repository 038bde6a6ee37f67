#include "ranks_panel.h"

#include "gui_text.h"
#include "rank_collectives.h"
#include "rank_heatmap.h"

#include "stallscope/analysis/cross_rank.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace stallscope::gui {

using namespace analysis;

RanksPanel::RanksPanel(QWidget* parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_measure(new QComboBox(this)),
      m_heatmap(new RankHeatmap(this)), m_collectives(new RankCollectivesView(this)),
      m_table(new QTableWidget(this)) {
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->addWidget(m_summary);
    auto* split = new QSplitter(Qt::Vertical, this);
    auto* top = new QWidget(split);
    auto* tl = new QVBoxLayout(top);
    tl->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Heat map of"), top));
    m_measure->setObjectName("heatmapMeasure");
    m_measure->addItem(tr("step time"));
    m_measure->addItem(tr("waiting in collectives (share of the step)"));
    m_measure->addItem(tr("GPU idle (share of the step)"));
    for (size_t k = 0; k < kIdleCauseCount; ++k)
        m_measure->addItem(
            tr("idle: %1").arg(QString::fromStdString(std::string(idleCauseName(IdleCause(k))))));
    bar->addWidget(m_measure);
    bar->addStretch();
    tl->addLayout(bar);
    tl->addWidget(m_heatmap, 1);
    auto* views = new QTabWidget(split);
    views->setObjectName("ranksViews");
    views->setDocumentMode(true);
    views->addTab(top, tr("Ranks × steps"));
    views->addTab(m_collectives, tr("Collectives across ranks"));
    split->addWidget(views);
    split->addWidget(m_table);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    l->addWidget(split, 1);
    connect(m_measure, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i < 3)
            m_heatmap->setMeasure(RankHeatmap::Measure(i));
        else
            m_heatmap->setMeasure(RankHeatmap::Measure::Cause, IdleCause(i - 3));
    });
    connect(m_measure, &QComboBox::activated, this, [this] { m_measureChosen = true; });
    connect(m_heatmap, &RankHeatmap::cellActivated, this, [this](int32_t rank, int column) {
        m_collectives->setColumn(column);
        Q_EMIT rankActivated(rank, column);
    });
    connect(m_collectives, &RankCollectivesView::rankActivated, this,
            [this](int32_t rank, int column) { Q_EMIT rankActivated(rank, column); });

    m_table->setColumnCount(10);
    m_table->setHorizontalHeaderLabels({tr("Rank"), tr("Worker / file"), tr("GPU util."),
                                        tr("Largest idle cause"), tr("Mean step"),
                                        tr("Top finding"), tr("In collectives"), tr("Waiting"),
                                        tr("Transfer"), tr("Last")});
    m_table->horizontalHeaderItem(7)->setToolTip(
        tr("Time inside collectives waiting for the last rank to arrive"));
    m_table->horizontalHeaderItem(9)->setToolTip(tr("Collectives this rank arrived at last"));
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setShowGrid(false);
    auto activate = [this](int row, int) {
        if (auto* item = m_table->item(row, 0))
            Q_EMIT rankActivated(item->data(Qt::UserRole).toInt(), -1);
    };
    connect(m_table, &QTableWidget::cellActivated, this, activate);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, activate);
}

void RanksPanel::setDocument(const Document* doc, int current) {
    m_table->setRowCount(0);
    m_summary->clear();
    m_heatmap->setData(nullptr, -1);
    m_collectives->setData(nullptr, -1);
    m_cross = {};
    if (!doc) return;
    m_cross = doc->ranks; // built on the load worker
    const CrossRankResult& cross = m_cross;
    const int32_t loaded = current >= 0 && size_t(current) < doc->traces.size()
                               ? doc->traces[size_t(current)].entry.rank
                               : -1;
    QString line;
    for (const std::string& s : crossRankSentences(cross))
        line += QString::fromStdString(s).toHtmlEscaped() + " ";
    if (cross.ranks.size() >= 2)
        line += tr("Slowest window %1% longer than the fastest.")
                    .arg(QString::number(cross.stepImbalance * 100, 'f', 1));
    if (!cross.findings.empty()) {
        QStringList parts;
        for (const auto& f : cross.findings) {
            if (parts.size() >= 4) break;
            parts << QString("%1 on %2/%3 (%4%5%)")
                         .arg(QString::fromStdString(std::string(findingKindName(f.kind))))
                         .arg(f.ranks)
                         .arg(cross.ranks.size())
                         .arg(QString::number(f.minShare * 100, 'f', 1))
                         .arg(f.maxShare > f.minShare
                                  ? "–" + QString::number(f.maxShare * 100, 'f', 1)
                                  : QString());
        }
        line += "<br>" + tr("Across the ranks: ") + parts.join(", ");
    }
    if (doc->manyRanks && loaded >= 0)
        line +=
            "<br>" +
            tr("%1 ranks held as summaries; the timeline shows rank %2. Click a cell or a row to "
               "load another rank's trace.")
                .arg(cross.ranks.size())
                .arg(loaded);
    else if (doc->manyRanks)
        line +=
            "<br>" +
            tr("%1 ranks from their summaries; no rank's trace is loaded. Click a cell or a row "
               "to load that rank's trace.")
                .arg(cross.ranks.size());
    // Ranks captured several times (a worker's captures in one folder): compared by their
    // latest steady capture (workspace/capture_series.h).
    QStringList seriesParts;
    for (const workspace::RankSeries& s : doc->series)
        if (s.captures.size() > 1)
            seriesParts << tr("rank %1: %2 captures, %3 warm-up, %4 steady")
                               .arg(s.rank)
                               .arg(s.captures.size())
                               .arg(s.count(workspace::CapturePhase::WarmUp))
                               .arg(s.count(workspace::CapturePhase::Steady));
    if (!seriesParts.isEmpty())
        line += (line.isEmpty() ? QString() : QStringLiteral("<br>")) +
                tr("Captured more than once (%1). Each rank is summarised by its latest steady "
                   "capture (by its latest when all are warm-up); the toolbar's Capture list "
                   "shows the others.")
                    .arg(seriesParts.join("; ").toHtmlEscaped());
    for (const auto& n : cross.notes)
        line +=
            "<br><span style='color:gray'>" + QString::fromStdString(n).toHtmlEscaped() + "</span>";
    m_summary->setText(line);
    m_summary->setVisible(!line.isEmpty());
    m_heatmap->setData(&cross, loaded);
    m_collectives->setData(&cross, loaded);
    // Ranks that meet at collectives finish their steps together, so step time hardly differs
    // between them: who waits for whom is what tells them apart.
    if (!m_measureChosen) m_measure->setCurrentIndex(cross.collectives > 0 ? 1 : 0);

    m_table->setRowCount(static_cast<int>(cross.ranks.size()));
    const bool colls = cross.collectives > 0;
    int selected = -1;
    for (size_t i = 0; i < cross.ranks.size(); ++i) {
        const RankSummary& rs = cross.ranks[i];
        const int r = static_cast<int>(i);
        auto set = [&](int c, const QString& text, bool right = false) {
            auto* item = new QTableWidgetItem(text);
            if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (rs.rank == loaded) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            m_table->setItem(r, c, item);
            return item;
        };
        set(0, QString::number(rs.rank), true)->setData(Qt::UserRole, rs.rank);
        set(1, QString::fromStdString(rs.label))->setToolTip(QString::fromStdString(rs.path));
        set(2, QString::number(rs.utilization * 100, 'f', 1) + "%", true);
        set(3, rs.topCauseNs > 0 ? QString("%1 %2").arg(QString::fromStdString(std::string(
                                                            idleCauseName(rs.topCause))),
                                                        durationText(rs.topCauseNs, 1))
                                 : QString("—"));
        int64_t step = rs.windowNs;
        if (i < cross.cells.size() && !cross.cells[i].empty()) {
            int64_t sum = 0;
            for (const RankStepCell& c : cross.cells[i]) sum += c.stepNs;
            step = sum / int64_t(cross.cells[i].size());
        }
        set(4, durationText(step, 1), true);
        set(5, rs.topFinding.empty() ? tr("none") : QString::fromStdString(rs.topFinding));
        set(6, colls ? durationText(rs.collectiveNs, 1) : "—", true);
        set(7, colls ? durationText(rs.waitNs, 1) : "—", true);
        set(8, colls ? durationText(rs.transferNs, 1) : "—", true);
        set(9, colls ? QString::number(rs.lastArrivals) : "—", true);
        if (rs.rank == loaded) selected = r;
    }
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
    if (selected >= 0) m_table->selectRow(selected);
}

} // namespace stallscope::gui
