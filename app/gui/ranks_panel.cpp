#include "ranks_panel.h"

#include "gui_text.h"

#include <QHeaderView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace stallscope::gui {

namespace {
} // namespace

RanksPanel::RanksPanel(QWidget* parent) : QWidget(parent), m_table(new QTableWidget(this)) {
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    l->addWidget(m_table);
    m_table->setColumnCount(7);
    m_table->setHorizontalHeaderLabels(
        {tr("Rank"), tr("Worker / file"), tr("GPU util."), tr("GPU idle"), tr("Mean step"), tr("Top finding"), tr("Saves")});
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
    if (!doc) return;
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
    }
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setSectionResizeMode(5, QHeaderView::Stretch);
    if (current >= 0) m_table->selectRow(current);
}

} // namespace stallscope::gui
