#include "rank_collectives.h"

#include "gui_text.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace stallscope::gui {

using namespace analysis;

namespace {
constexpr int kLabelW = 64, kTop = 22, kBottom = 22;
const QColor kWait(0xF0, 0xA2, 0x02), kTransfer(0x2B, 0x6C, 0xB0), kLink(0x1F, 0x3B, 0x73);
} // namespace

RankCollectivesView::RankCollectivesView(QWidget* parent) : QWidget(parent) {
    setObjectName("rankCollectives");
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void RankCollectivesView::setData(const CrossRankResult* cross, int32_t loadedRank) {
    m_cross = cross;
    m_loaded = loadedRank;
    if (m_cross && size_t(m_column) >= m_cross->stepLabels.size()) m_column = 0;
    relayout();
}

void RankCollectivesView::setColumn(int column) {
    m_column = std::max(0, column);
    relayout();
}

void RankCollectivesView::relayout() {
    m_shown.clear();
    m_lo = 0;
    m_hi = 1;
    if (m_cross && !m_cross->cells.empty() && size_t(m_column) < m_cross->stepLabels.size()) {
        bool first = true;
        for (const auto& row : m_cross->cells) {
            const RankStepCell& c = row[size_t(m_column)];
            if (!c.present) continue;
            m_lo = first ? c.startNs : std::min(m_lo, c.startNs);
            m_hi = first ? c.startNs + c.stepNs : std::max(m_hi, c.startNs + c.stepNs);
            first = false;
        }
        for (size_t k = 0; k < m_cross->collectiveColumn.size(); ++k)
            if (m_cross->collectiveColumn[k] == m_column) m_shown.push_back(k);
        if (m_hi <= m_lo) m_hi = m_lo + 1;
    }
    update();
}

QRect RankCollectivesView::plot() const {
    return QRect(kLabelW, kTop, std::max(1, width() - kLabelW - 8),
                 std::max(1, height() - kTop - kBottom));
}

int RankCollectivesView::rowAt(int y) const {
    if (!m_cross || m_cross->ranks.empty()) return -1;
    const QRect p = plot();
    if (y < p.top() || y >= p.bottom()) return -1;
    return std::min(int(m_cross->ranks.size()) - 1,
                    int(double(y - p.top()) * double(m_cross->ranks.size()) / p.height()));
}

void RankCollectivesView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!m_cross || m_cross->stepLabels.empty() || m_cross->cells.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No steps to compare across ranks"));
        return;
    }
    const QRect g = plot();
    const int rows = int(m_cross->ranks.size());
    const double rh = double(g.height()) / rows;
    const double span = double(m_hi - m_lo);
    auto x = [&](int64_t t) { return g.left() + double(g.width()) * double(t - m_lo) / span; };
    const QFontMetrics fm(font());
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(g.left(), 2, g.width(), kTop - 4), Qt::AlignLeft | Qt::AlignBottom,
               tr("%1 on the common clock: %2 · %3 collectives · amber: waiting for the last rank, "
                  "blue: transfer")
                   .arg(QString::fromStdString(m_cross->stepLabels[size_t(m_column)]),
                        durationText(m_hi - m_lo, 1))
                   .arg(m_shown.size()));
    const int every = std::max(1, int(std::ceil(fm.height() / rh)));
    for (int i = 0; i < rows; ++i) {
        const double y = g.top() + i * rh;
        const RankStepCell& c = m_cross->cells[size_t(i)][size_t(m_column)];
        const bool loaded = m_cross->ranks[size_t(i)].rank == m_loaded;
        if (c.present)
            p.fillRect(QRectF(x(c.startNs), y, x(c.startNs + c.stepNs) - x(c.startNs),
                              std::max(rh - 1, 1.0)),
                       loaded ? palette().color(QPalette::Highlight).lighter(170)
                              : QColor(0xE6, 0xE9, 0xED));
        if (i % every == 0 || loaded) {
            QFont f = font();
            f.setBold(loaded);
            p.setFont(f);
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QRectF(0, y + rh / 2 - fm.height() / 2.0, kLabelW - 6, fm.height()),
                       Qt::AlignRight | Qt::AlignVCenter,
                       tr("rank %1").arg(m_cross->ranks[size_t(i)].rank));
        }
    }
    p.setFont(font());
    // Each collective: the wait (arrival to the last arrival) and the transfer, per rank; the
    // link at the last arrival.
    for (size_t k : m_shown) {
        const int64_t last = m_cross->collectiveLastNs[k];
        for (int i = 0; i < rows; ++i) {
            const auto& s = m_cross->collectiveSpans[size_t(i)][k];
            const double y = g.top() + i * rh + (rh > 4 ? 1 : 0),
                         h = std::max(rh - (rh > 4 ? 2 : 0), 1.0);
            const int64_t waitEnd = std::clamp(last, s.startNs, s.endNs);
            if (waitEnd > s.startNs)
                p.fillRect(QRectF(x(s.startNs), y, std::max(x(waitEnd) - x(s.startNs), 1.0), h),
                           kWait);
            if (s.endNs > waitEnd)
                p.fillRect(QRectF(x(waitEnd), y, std::max(x(s.endNs) - x(waitEnd), 1.0), h),
                           kTransfer);
        }
        p.setPen(QPen(kLink, 1, Qt::DotLine));
        p.drawLine(QPointF(x(last), g.top()), QPointF(x(last), g.bottom()));
    }
    // Time axis: ticks at 1, 2 or 5 x 10^k ns from the step's start, a label where it fits.
    p.setPen(palette().color(QPalette::Text));
    const int64_t length = m_hi - m_lo;
    const double targetTicks = std::max(2.0, g.width() / 90.0);
    const double base =
        std::pow(10.0, std::floor(std::log10(std::max(1.0, double(length) / targetTicks))));
    double tick = base * 10;
    for (double m : {1.0, 2.0, 5.0})
        if (double(length) / (base * m) <= targetTicks) {
            tick = base * m;
            break;
        }
    const int64_t step = std::max<int64_t>(1, int64_t(tick));
    double lastLabelRight = -1e9;
    const QString end = durationText(length, 1);
    const double endLeft = g.right() - fm.horizontalAdvance(end) - 6;
    for (int64_t t = 0; t <= length; t += step) {
        const double tx = x(m_lo + t);
        p.drawLine(QPointF(tx, g.bottom()), QPointF(tx, g.bottom() + 4));
        const QString label = t == 0 ? QStringLiteral("0") : durationText(t, 1);
        const double w = fm.horizontalAdvance(label);
        const double left = t == 0 ? tx : tx - w / 2;
        if (left > lastLabelRight + 8 && left + w < endLeft) {
            p.drawText(QRectF(left, g.bottom() + 4, w + 2, kBottom - 4),
                       Qt::AlignLeft | Qt::AlignVCenter, label);
            lastLabelRight = left + w;
        }
    }
    p.drawLine(QPointF(g.right(), g.bottom()), QPointF(g.right(), g.bottom() + 4));
    p.drawText(QRect(g.right() - 200, g.bottom() + 4, 200, kBottom - 4),
               Qt::AlignRight | Qt::AlignVCenter, end);
}

void RankCollectivesView::mouseDoubleClickEvent(QMouseEvent* e) {
    const int i = rowAt(e->position().toPoint().y());
    if (i >= 0) Q_EMIT rankActivated(m_cross->ranks[size_t(i)].rank, m_column);
}

bool RankCollectivesView::event(QEvent* e) {
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto* he = static_cast<QHelpEvent*>(e);
    const int i = rowAt(he->pos().y());
    if (i < 0 || m_hi <= m_lo) {
        QToolTip::hideText();
        return true;
    }
    const QRect g = plot();
    const int64_t t =
        m_lo + int64_t(double(he->pos().x() - g.left()) / g.width() * double(m_hi - m_lo));
    QString tip = tr("<b>rank %1</b> (double-click: its timeline at this step)")
                      .arg(m_cross->ranks[size_t(i)].rank);
    for (size_t k : m_shown) {
        const auto& s = m_cross->collectiveSpans[size_t(i)][k];
        if (t < s.startNs || t > s.endNs) continue;
        const int64_t last = m_cross->collectiveLastNs[k];
        const int64_t wait = std::clamp<int64_t>(last - s.startNs, 0, s.endNs - s.startNs);
        tip +=
            tr("<br>collective #%1 %2<br>arrived %3 after the step began; waited %4, transfer %5")
                .arg(k + 1)
                .arg(QString::fromStdString(m_cross->collectiveNames[k]).left(60).toHtmlEscaped())
                .arg(durationText(s.startNs - m_lo, 1), durationText(wait, 1),
                     durationText(s.endNs - s.startNs - wait, 1));
    }
    QToolTip::showText(he->globalPos(), tip, this);
    return true;
}

} // namespace stallscope::gui
