#pragma once
// Draws the cells of share columns (those answering BarRole) with a bar behind the
// right-aligned text, the way Hotspot and VTune show cost columns.
// No Q_OBJECT: it has no signals, slots or properties of its own.
#include "stallscope/model/event_kind.h"

#include <QStyledItemDelegate>

namespace stallscope::gui {

class ShareBarDelegate : public QStyledItemDelegate {
public:
    /// Bars take the theme's colour of `kind` (kernels green, CPU ops blue, ...).
    explicit ShareBarDelegate(model::EventKind kind, QObject* parent = nullptr);
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
    model::EventKind m_kind;
};

} // namespace stallscope::gui
