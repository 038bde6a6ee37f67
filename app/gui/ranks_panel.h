#pragma once
// Per-rank summary of a multi-rank folder: utilisation, idle, step time, top finding and the
// cross-rank figures (time in collectives split into waiting and transfer, last arrivals,
// the straggler); activating a row switches the displayed rank.
#include "document.h"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace stallscope::gui {

class RanksPanel : public QWidget {
    Q_OBJECT
public:
    explicit RanksPanel(QWidget* parent = nullptr);
    void setDocument(const Document* doc, int current);
    [[nodiscard]] QTableWidget* table() const { return m_table; }
    [[nodiscard]] QLabel* summary() const { return m_summary; }

Q_SIGNALS:
    void rankActivated(int index);

private:
    QLabel* m_summary; // the cross-rank line: collectives, straggler, imbalance
    QTableWidget* m_table;
};

} // namespace stallscope::gui
