#include "rank_heatmap.h"

#include "gui_text.h"

#include "stallscope/reports/palette.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace stallscope::gui {

using namespace analysis;

namespace {
constexpr int kLabelW = 64, kTop = 22, kBottom = 30;
QColor rgb(uint32_t v) {
    return QColor::fromRgb(v);
}
} // namespace

RankHeatmap::RankHeatmap(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setObjectName("rankHeatmap");
}

void RankHeatmap::setData(const CrossRankResult* cross, int32_t loadedRank) {
    m_cross = cross;
    m_loaded = loadedRank;
    rescale();
    updateGeometry();
    update();
}

void RankHeatmap::setMeasure(Measure m, IdleCause cause) {
    m_measure = m;
    m_cause = cause;
    rescale();
    update();
}

QSize RankHeatmap::sizeHint() const {
    const int rows = m_cross ? int(m_cross->cells.size()) : 8;
    return {600, kTop + kBottom + std::clamp(rows * 14, 60, 420)};
}

QSize RankHeatmap::minimumSizeHint() const {
    return {200, kTop + kBottom + 48};
}

double RankHeatmap::value(const RankStepCell& c) const {
    const double step = double(std::max<int64_t>(1, c.stepNs));
    switch (m_measure) {
    case Measure::StepTime: return double(c.stepNs);
    case Measure::Waiting: return double(c.waitNs) / step;
    case Measure::Idle: return double(std::max<int64_t>(0, c.stepNs - c.busyNs)) / step;
    case Measure::Cause: return double(c.idle[size_t(m_cause)]) / step;
    }
    return 0;
}

void RankHeatmap::rescale() {
    m_lo = m_hi = 0;
    if (!m_cross) return;
    bool first = true;
    for (const auto& row : m_cross->cells)
        for (const RankStepCell& c : row) {
            if (!c.present) continue;
            const double v = value(c);
            m_lo = first ? v : std::min(m_lo, v);
            m_hi = first ? v : std::max(m_hi, v);
            first = false;
        }
    // Shares start at 0; step times are drawn over at least a fifth of the slowest, so ranks a
    // few per cent apart stay near one colour (as in the reports' heat map).
    if (m_measure == Measure::StepTime)
        m_lo = std::min(m_lo, m_hi * 0.8);
    else
        m_lo = 0;
}

double RankHeatmap::shade(int i, int c) const {
    if (!m_cross || i < 0 || size_t(i) >= m_cross->cells.size() || c < 0 ||
        size_t(c) >= m_cross->cells[size_t(i)].size())
        return 0;
    const double v = value(m_cross->cells[size_t(i)][size_t(c)]);
    return m_hi > m_lo ? std::clamp((v - m_lo) / (m_hi - m_lo), 0.0, 1.0) : 0.0;
}

QRect RankHeatmap::grid() const {
    return QRect(kLabelW, kTop, std::max(1, width() - kLabelW - 8),
                 std::max(1, height() - kTop - kBottom));
}

std::pair<int, int> RankHeatmap::cellAt(QPoint p) const {
    if (!m_cross || m_cross->cells.empty() || m_cross->stepLabels.empty()) return {-1, -1};
    const QRect g = grid();
    if (!g.contains(p)) return {-1, -1};
    const int rows = int(m_cross->cells.size()), cols = int(m_cross->stepLabels.size());
    const int i = std::min(rows - 1, int(double(p.y() - g.top()) * rows / g.height()));
    const int c = std::min(cols - 1, int(double(p.x() - g.left()) * cols / g.width()));
    return {i, c};
}

void RankHeatmap::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!m_cross || m_cross->cells.empty() || m_cross->stepLabels.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No steps to compare across ranks"));
        return;
    }
    const QRect g = grid();
    const int rows = int(m_cross->cells.size()), cols = int(m_cross->stepLabels.size());
    const double ch = double(g.height()) / rows, cw = double(g.width()) / cols;
    const QFontMetrics fm(font());
    p.setPen(palette().color(QPalette::Text));
    // Column labels, as many as fit.
    const int colEvery =
        std::max(1, int(std::ceil(double(fm.horizontalAdvance("#00000") + 8) / cw)));
    for (int c = 0; c < cols; c += colEvery)
        p.drawText(QRectF(g.left() + c * cw - 40, 2, cw + 80, kTop - 4),
                   Qt::AlignHCenter | Qt::AlignBottom,
                   QString::fromStdString(m_cross->stepLabels[size_t(c)]));
    const int rowEvery = std::max(1, int(std::ceil(double(fm.height()) / ch)));
    int loadedRow = -1;
    for (int i = 0; i < rows; ++i)
        if (m_cross->ranks[size_t(i)].rank == m_loaded) loadedRow = i;
    for (int i = 0; i < rows; ++i) {
        const int32_t rank = m_cross->ranks[size_t(i)].rank;
        // Every rowEvery-th label, and the loaded rank's, which the others nearby give way to.
        const bool nearLoaded =
            loadedRow >= 0 && i != loadedRow && std::abs(i - loadedRow) * ch < fm.height();
        if ((i % rowEvery == 0 && !nearLoaded) || rank == m_loaded) {
            QFont f = font();
            f.setBold(rank == m_loaded);
            p.setFont(f);
            p.drawText(
                QRectF(0, g.top() + i * ch + ch / 2 - fm.height() / 2.0, kLabelW - 6, fm.height()),
                Qt::AlignRight | Qt::AlignVCenter, tr("rank %1").arg(rank));
        }
        for (int c = 0; c < cols; ++c) {
            if (!m_cross->cells[size_t(i)][size_t(c)].present) continue;
            const QRectF cell(g.left() + c * cw, g.top() + i * ch,
                              std::max(cw - (cw > 4 ? 1 : 0), 1.0),
                              std::max(ch - (ch > 4 ? 1 : 0), 1.0));
            p.fillRect(cell, rgb(reports::heatRgb(shade(i, c))));
        }
    }
    p.setFont(font());
    // The step stragglers outlined, the loaded rank's row framed.
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(QColor(0x1f3b73), 1.5));
    for (int c = 0; c < cols; ++c)
        for (int i = 0; i < rows; ++i)
            if (m_cross->stepStraggler[size_t(c)] == m_cross->ranks[size_t(i)].rank)
                p.drawRect(QRectF(g.left() + c * cw + 0.75, g.top() + i * ch + 0.75,
                                  std::max(cw - 1.5, 1.0), std::max(ch - 1.5, 1.0)));
    for (int i = 0; i < rows; ++i)
        if (m_cross->ranks[size_t(i)].rank == m_loaded) {
            p.setPen(QPen(palette().color(QPalette::Highlight), 2));
            p.drawRect(QRectF(g.left(), g.top() + i * ch, g.width(), ch));
        }
    // The scale.
    const int sy = g.bottom() + 8, sw = 200;
    for (int k = 0; k < sw; ++k)
        p.fillRect(QRect(g.left() + k, sy, 1, 8), rgb(reports::heatRgb(double(k) / (sw - 1))));
    auto fmt = [&](double v) {
        return m_measure == Measure::StepTime ? durationText(int64_t(v), 1)
                                              : QString::number(v * 100, 'f', 1) + "%";
    };
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(g.left() + sw + 8, sy - 4, std::max(0, g.width() - sw - 8), 16),
               Qt::AlignLeft | Qt::AlignVCenter,
               tr("%1 … %2 · outlined: each step's straggler · click: that rank at that step")
                   .arg(fmt(m_lo), fmt(m_hi)));
}

void RankHeatmap::mousePressEvent(QMouseEvent* e) {
    const auto [i, c] = cellAt(e->position().toPoint());
    if (i >= 0 && e->button() == Qt::LeftButton)
        Q_EMIT cellActivated(m_cross->ranks[size_t(i)].rank, c);
}

bool RankHeatmap::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const auto [i, c] = cellAt(he->pos());
        if (i < 0) {
            QToolTip::hideText();
            e->ignore();
            return true;
        }
        const RankStepCell& cell = m_cross->cells[size_t(i)][size_t(c)];
        QString tip =
            tr("<b>rank %1 · %2</b><br>step %3 · GPU busy %4<br>in collectives %5, waiting %6")
                .arg(m_cross->ranks[size_t(i)].rank)
                .arg(QString::fromStdString(m_cross->stepLabels[size_t(c)]).toHtmlEscaped())
                .arg(durationText(cell.stepNs, 1), durationText(cell.busyNs, 1),
                     durationText(cell.collectiveNs, 1), durationText(cell.waitNs, 1));
        int64_t top = 0;
        size_t topK = 0;
        for (size_t k = 0; k < kIdleCauseCount; ++k)
            if (cell.idle[k] > top) top = cell.idle[k], topK = k;
        if (top > 0)
            tip += tr("<br>largest idle cause: %1 %2")
                       .arg(QString::fromStdString(std::string(idleCauseName(IdleCause(topK)))),
                            durationText(top, 1));
        if (m_cross->stepStraggler[size_t(c)] == m_cross->ranks[size_t(i)].rank)
            tip += tr("<br>arrived last most often in this step");
        QToolTip::showText(he->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(e);
}

} // namespace stallscope::gui
