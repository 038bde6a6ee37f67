#include "idle_chart.h"

#include "gui_text.h"

#include "theme.h"

#include <QHelpEvent>
#include <QFontMetrics>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace stallscope::gui {

using namespace analysis;

IdleChart::IdleChart(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(60);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
}

QSize IdleChart::sizeHint() const {
    const int rows = static_cast<int>(m_segments.size());
    return {320, 44 + ((rows + 1) / 2) * 18};
}

void IdleChart::setDevice(const DeviceMetrics* d) {
    m_hostOnly = false;
    m_window = d ? d->windowNs : 0;
    m_utilization = d ? d->utilization : 0;
    m_device = d ? d->device : -1;
    setBreakdown(d ? &d->idle : nullptr);
}

void IdleChart::setHostOnly(const HostOnlyBreakdown* h) {
    m_hostOnly = h != nullptr;
    m_window = h ? h->windowNs : 0;
    m_utilization = 0;
    m_device = -1;
    setBreakdown(h ? &h->time : nullptr);
}

void IdleChart::setBreakdown(const IdleBreakdown* b) {
    m_segments.clear();
    m_idle = b ? b->idleNs : 0;
    if (b)
        for (size_t k = 0; k < kIdleCauseCount; ++k)
            if (b->causes[k].ns > 0) m_segments.push_back({static_cast<IdleCause>(k), b->causes[k].ns, {}});
    std::sort(m_segments.begin(), m_segments.end(), [](const Segment& a, const Segment& b) { return a.ns > b.ns; });
    updateGeometry();
    setFixedHeight(sizeHint().height());
    update();
}

void IdleChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const Theme& th = Theme::current();
    p.fillRect(rect(), palette().color(QPalette::Base));
    if (m_window <= 0) return;
    QFont f = font();
    f.setBold(true);
    p.setFont(f);
    p.setPen(th.text);
    p.drawText(QRect(8, 2, width() - 16, 18), Qt::AlignVCenter | Qt::AlignLeft,
               m_hostOnly ? tr("No GPU work: %1 of step time by cause").arg(durationText(m_window, 1))
                          : tr("GPU %1 idle %2 of %3 (busy %4%)")
                                .arg(m_device)
                                .arg(durationText(m_idle, 1), durationText(m_window, 1))
                                .arg(QString::number(m_utilization * 100, 'f', 1)));
    p.setFont(font());
    const QRectF bar(8, 22, width() - 16, 14);
    p.fillRect(bar, th.trackAlternate);
    double x = bar.left();
    for (Segment& s : m_segments) {
        const double w = m_idle > 0 ? bar.width() * double(s.ns) / double(m_idle) : 0;
        s.rect = QRectF(x, bar.top(), w, bar.height());
        p.fillRect(s.rect, th.causeColor(s.cause));
        x += w;
    }
    // Legend, two columns.
    const int colW = (width() - 16) / 2;
    const QFontMetrics fm(p.font());
    const int valueW = fm.horizontalAdvance(QStringLiteral("000.0 ms 100%")) + 4;
    for (size_t i = 0; i < m_segments.size(); ++i) {
        const Segment& s = m_segments[i];
        const int cx = 8 + static_cast<int>(i % 2) * colW, cy = 42 + static_cast<int>(i / 2) * 18;
        p.fillRect(QRect(cx, cy + 4, 10, 10), th.causeColor(s.cause));
        p.setPen(th.text);
        const QString label = QString::fromStdString(std::string(idleCauseName(s.cause)));
        const int labelW = std::max(20, colW - valueW - 22);
        p.drawText(QRect(cx + 14, cy, labelW, 18), Qt::AlignVCenter | Qt::AlignLeft,
                   fm.elidedText(label, Qt::ElideRight, labelW));
        p.setPen(th.mutedText);
        p.drawText(QRect(cx + colW - valueW - 6, cy, valueW, 18), Qt::AlignVCenter | Qt::AlignRight,
                   QString("%1 %2%").arg(durationText(s.ns, 1)).arg(QString::number(100.0 * double(s.ns) / double(m_idle), 'f', 0)));
    }
}

bool IdleChart::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        for (const Segment& s : m_segments)
            if (s.rect.contains(he->pos())) {
                QToolTip::showText(he->globalPos(),
                                   QString(m_hostOnly ? "<b>%1</b>: %2 (%3% of step time)<br>%4"
                                                      : "<b>%1</b>: %2 (%3% of idle)<br>%4")
                                       .arg(QString::fromStdString(std::string(idleCauseName(s.cause))), durationText(s.ns, 1),
                                            QString::number(100.0 * double(s.ns) / double(m_idle), 'f', 1),
                                            QString::fromStdString(std::string(idleCauseDescription(s.cause)))),
                                   this);
                return true;
            }
        QToolTip::hideText();
        return true;
    }
    return QWidget::event(e);
}

} // namespace stallscope::gui
