#pragma once
// Per-rank summary of a multi-rank folder: utilisation, idle, step time and top finding;
// activating a row switches the displayed rank.
#include "document.h"

#include <QWidget>

class QTableWidget;

namespace stallscope::gui {

class RanksPanel : public QWidget {
    Q_OBJECT
public:
    explicit RanksPanel(QWidget* parent = nullptr);
    void setDocument(const Document* doc, int current);
    [[nodiscard]] QTableWidget* table() const { return m_table; }

Q_SIGNALS:
    void rankActivated(int index);

private:
    QTableWidget* m_table;
};

} // namespace stallscope::gui
