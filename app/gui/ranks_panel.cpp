#include "ranks_panel.h"

#include "gui_text.h"

#include "stallscope/analysis/cross_rank.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace stallscope::gui {

namespace {
} // namespace

RanksPanel::RanksPanel(QWidget* parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_table(new QTableWidget(this)) {
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    l->addWidget(m_summary);
    l->addWidget(m_table);
    m_table->setColumnCount(11);
    m_table->setHorizontalHeaderLabels({tr("Rank"), tr("Worker / file"), tr("GPU util."),
                                        tr("GPU idle"), tr("Mean step"), tr("Top finding"),
                                        tr("Saves"), tr("In collectives"), tr("Waiting"),
                                        tr("Transfer"), tr("Last")});
    m_table->horizontalHeaderItem(8)->setToolTip(
        tr("Time inside collectives waiting for the last rank to arrive"));
    m_table->horizontalHeaderItem(10)->setToolTip(tr("Collectives this rank arrived at last"));
    m_table->verticalHeader()->hide();
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setAlternatingRowColors(true);
    m_table->setShowGrid(false);
    m_table->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
    connect(m_table, &QTableWidget::cellActivated, this, [this](int row, int) { Q_EMIT rankActivated(row); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) { Q_EMIT rankActivated(row); });
}

void RanksPanel::setDocument(const Document* doc, int current) {
    m_table->setRowCount(0);
    m_summary->clear();
    if (!doc) return;
    const analysis::CrossRankResult& cross = doc->ranks; // built on the load worker
    QString line;
    if (cross.collectives > 0) {
        line = tr("%1 collectives matched across %2 ranks%3. ")
                   .arg(cross.collectives)
                   .arg(cross.ranks.size())
                   .arg(cross.clocksAligned ? tr(" (clocks aligned on the collectives' ends)")
                                            : QString());
        if (cross.straggler >= 0)
            line += tr("<b>Straggler: rank %1</b> arrives last at %2% of them. ")
                        .arg(cross.straggler)
                        .arg(QString::number(cross.stragglerShare * 100, 'f', 0));
        else
            line += tr("No clear straggler. ");
    }
    if (cross.ranks.size() >= 2)
        line += tr("Slowest window %1% longer than the fastest.")
                    .arg(QString::number(cross.stepImbalance * 100, 'f', 1));
    if (!cross.findings.empty()) {
        QStringList parts;
        for (const auto& f : cross.findings) {
            if (parts.size() >= 4) break;
            parts << QString("%1 on %2/%3 (%4%5%)")
                         .arg(
                             QString::fromStdString(std::string(analysis::findingKindName(f.kind))))
                         .arg(f.ranks)
                         .arg(cross.ranks.size())
                         .arg(QString::number(f.minShare * 100, 'f', 1))
                         .arg(f.maxShare > f.minShare
                                  ? "–" + QString::number(f.maxShare * 100, 'f', 1)
                                  : QString());
        }
        line += "<br>" + tr("Across the ranks: ") + parts.join(", ");
    }
    for (const auto& n : cross.notes)
        line +=
            "<br><span style='color:gray'>" + QString::fromStdString(n).toHtmlEscaped() + "</span>";
    m_summary->setText(line);
    m_summary->setVisible(!line.isEmpty());
    m_table->setRowCount(static_cast<int>(doc->traces.size()));
    for (size_t i = 0; i < doc->traces.size(); ++i) {
        const LoadedTrace& lt = doc->traces[i];
        const auto& a = *lt.analysis;
        const int r = static_cast<int>(i);
        auto set = [&](int c, const QString& text, bool right = false) {
            auto* item = new QTableWidgetItem(text);
            if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(r, c, item);
        };
        set(0, QString::number(lt.entry.rank), true);
        set(1, QString::fromStdString(lt.entry.label) + (lt.entry.span ? QString(" (span %1)").arg(lt.entry.span) : QString()));
        set(2, a.devices.empty() ? "—" : QString::number(a.devices.front().utilization * 100, 'f', 1) + "%", true);
        set(3, a.devices.empty() ? "—" : durationText(a.devices.front().idleNs, 1), true);
        set(4, a.stepTimes.count ? durationText(a.stepTimes.meanNs, 1) : "—", true);
        set(5, a.findings.empty() ? tr("none") : QString::fromStdString(a.findings.front().title));
        set(6, a.findings.empty() ? "" : QString::number(a.findings.front().savingShare * 100, 'f', 1) + "%", true);
        const int32_t rank = lt.entry.rank >= 0 ? lt.entry.rank : int32_t(i);
        for (const analysis::RankSummary& rs : cross.ranks)
            if (rs.rank == rank && cross.collectives > 0) {
                set(7, durationText(rs.collectiveNs, 1), true);
                set(8, durationText(rs.waitNs, 1), true);
                set(9, durationText(rs.transferNs, 1), true);
                set(10, QString::number(rs.lastArrivals), true);
            }
    }
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
    if (current >= 0) m_table->selectRow(current);
}

} // namespace stallscope::gui
