#include "share_bar_delegate.h"

#include "stats_table_model.h"
#include "theme.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>

namespace stallscope::gui {

ShareBarDelegate::ShareBarDelegate(model::EventKind kind, QObject* parent)
    : QStyledItemDelegate(parent), m_kind(kind) {}

void ShareBarDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const {
    const QVariant share = index.data(BarRole);
    if (!share.isValid()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QWidget* widget = opt.widget;
    QStyle* style = widget ? widget->style() : QApplication::style();

    // Background, selection and focus, without the text.
    const QRect textRect = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, widget);
    const QString text = opt.text;
    opt.text.clear();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);

    const bool selected = opt.state & QStyle::State_Selected;
    const Theme& theme = Theme::current();
    const QRect track = opt.rect.adjusted(4, 4, -4, -4);
    const double f = std::clamp(share.toDouble(), 0.0, 1.0);
    QColor fill = selected ? opt.palette.color(QPalette::HighlightedText) : theme.kindColor(m_kind);
    fill.setAlpha(selected ? 70 : (theme.dark ? 120 : 110));
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, false);
    if (f > 0) {
        const int w = std::max(1, static_cast<int>(track.width() * f + 0.5));
        painter->fillRect(QRect(track.left(), track.top(), w, track.height()), fill);
    }
    painter->setFont(opt.font);
    painter->setPen(opt.palette.color(opt.state & QStyle::State_Enabled ? QPalette::Normal : QPalette::Disabled,
                                      selected ? QPalette::HighlightedText : QPalette::Text));
    // The same text margin as QCommonStyle's item text, so the column lines up with the others.
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, widget) + 1;
    const QRect r = textRect.adjusted(margin, 0, -margin, 0);
    painter->drawText(r, int(opt.displayAlignment), opt.fontMetrics.elidedText(text, Qt::ElideRight, r.width()));
    painter->restore();
}

} // namespace stallscope::gui
