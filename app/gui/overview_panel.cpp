#include "overview_panel.h"

#include "main_window.h"
#include "panel.h"
#include "panel_id.h"
#include "theme.h"

#include "stallscope/base/text_format.h"
#include "stallscope/reports/palette.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace stallscope::gui {

using namespace analysis;

namespace {

QString dur(int64_t ns) {
    return QString::fromStdString(base::formatDuration(ns));
}

QColor rgb(uint32_t c) {
    return QColor(QRgb(0xFF000000u | c));
}

QString pct(int64_t part, int64_t whole) {
    return whole > 0 ? QString::fromStdString(base::formatPercent(double(part) / double(whole), 1))
                     : QString("–");
}

int64_t gpuBusy(const std::array<int64_t, kBreakdownCategories>& ns) {
    int64_t busy = 0;
    for (size_t k = 0; k < kBreakdownCategories; ++k)
        if (breakdownCategories()[k].gpuBusy) busy += ns[k];
    return busy;
}

} // namespace

// ---------------------------------------------------------------- the bars

StepBarsWidget::StepBarsWidget(QWidget* parent) : QWidget(parent) {
    setObjectName("stepBars");
    setMouseTracking(true);
    setMinimumHeight(160);
}

void StepBarsWidget::setBreakdown(const StepBreakdown& b, Mode mode) {
    m_b = b;
    m_mode = mode;
    update();
}

void StepBarsWidget::setScaleNs(int64_t ns) {
    m_scaleNs = std::max<int64_t>(1, ns);
    update();
}

int64_t StepBarsWidget::longestBarNs() const {
    int64_t longest = 1;
    for (size_t i = 0; i < barCount(); ++i) longest = std::max(longest, barLength(i));
    return longest;
}

size_t StepBarsWidget::barCount() const {
    return m_b.steps.size() + (m_b.meanOver > 1 ? 1 : 0);
}

std::vector<StepBarsWidget::Segment> StepBarsWidget::segments(size_t bar) const {
    std::vector<Segment> out;
    const bool mean = bar >= m_b.steps.size();
    if (m_mode == Mode::Categories) {
        const auto& ns = mean ? m_b.meanNs : m_b.steps[bar].ns;
        for (size_t k = 0; k < kBreakdownCategories; ++k)
            if (ns[k] > 0)
                out.push_back({QString::fromUtf8(breakdownCategories()[k].label.data(),
                                                 qsizetype(breakdownCategories()[k].label.size())),
                               ns[k], rgb(reports::breakdownRgb(k))});
        return out;
    }
    // Why the GPU was idle: its busy time at the bottom, then the idle causes.
    std::array<int64_t, kIdleCauseCount> idle{};
    int64_t busy = 0;
    if (!mean) {
        idle = m_b.steps[bar].idleByCause;
        busy = gpuBusy(m_b.steps[bar].ns);
    } else {
        size_t n = 0;
        for (const StepBreakdownRow& st : m_b.steps)
            if (!st.warmup || m_b.meanOver == m_b.steps.size()) {
                for (size_t k = 0; k < kIdleCauseCount; ++k) idle[k] += st.idleByCause[k];
                busy += gpuBusy(st.ns);
                ++n;
            }
        for (int64_t& v : idle) v /= int64_t(std::max<size_t>(1, n));
        busy /= int64_t(std::max<size_t>(1, n));
    }
    if (busy > 0) out.push_back({tr("GPU busy"), busy, QColor(0xC8, 0xD6, 0xCC)});
    for (size_t k = 0; k < kIdleCauseCount; ++k)
        if (idle[k] > 0) {
            const auto c = static_cast<IdleCause>(k);
            out.push_back(
                {QString::fromUtf8(idleCauseName(c).data(), qsizetype(idleCauseName(c).size())),
                 idle[k], Theme::current().causeColor(c)});
        }
    return out;
}

int64_t StepBarsWidget::barLength(size_t bar) const {
    if (bar < m_b.steps.size()) return m_b.steps[bar].lengthNs();
    return m_b.meanStepNs;
}

QRectF StepBarsWidget::plot() const {
    return QRectF(92, 12, std::max(10, width() - 104), std::max(10, height() - 40));
}

double StepBarsWidget::slot() const {
    const size_t n = m_b.steps.size() + (m_b.meanOver > 1 ? 2 : 0); // the mean after a gap
    return plot().width() / double(std::max<size_t>(1, n));
}

int StepBarsWidget::stepAt(int x) const {
    const double rel = (double(x) - plot().left()) / slot();
    if (rel < 0) return -1;
    const auto i = static_cast<size_t>(rel);
    return i < m_b.steps.size() ? int(i) : -1;
}

void StepBarsWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    const Theme& th = Theme::current();
    p.fillRect(rect(), th.background);
    if (m_b.steps.empty()) return;
    const QRectF r = plot();
    const int64_t longest = scaleNs();
    p.setPen(th.mutedText);
    p.drawText(QRectF(0, r.top() - 6, r.left() - 8, 16), Qt::AlignRight | Qt::AlignVCenter,
               dur(longest));
    p.drawText(QRectF(0, r.bottom() - 8, r.left() - 8, 16), Qt::AlignRight | Qt::AlignVCenter, "0");
    p.setPen(th.grid);
    p.drawLine(QPointF(r.left(), r.bottom()), QPointF(r.right(), r.bottom()));
    const double s = slot(), w = std::max(2.0, s * 0.7);
    for (size_t i = 0; i < barCount(); ++i) {
        const bool mean = i >= m_b.steps.size();
        const double x = r.left() + s * double(mean ? i + 1 : i) + (s - w) / 2;
        double y = r.bottom();
        const bool faded = !mean && m_b.steps[i].warmup;
        for (const Segment& seg : segments(i)) {
            const double h = r.height() * double(seg.ns) / double(longest);
            QColor c = seg.color;
            if (faded) c.setAlphaF(0.45f);
            p.fillRect(QRectF(x, y - h, w, h), c);
            y -= h;
        }
        if (s >= 26 || m_b.steps.size() <= 20) {
            p.setPen(th.mutedText);
            const QString label = mean ? tr("mean") : "#" + QString::number(m_b.steps[i].number);
            p.drawText(QRectF(x - 20, r.bottom() + 4, w + 40, 16), Qt::AlignHCenter | Qt::AlignTop,
                       label);
        }
    }
}

void StepBarsWidget::mousePressEvent(QMouseEvent* e) {
    const int i = stepAt(int(e->position().x()));
    if (i >= 0) Q_EMIT stepClicked(m_b.steps[size_t(i)].number);
}

bool StepBarsWidget::event(QEvent* e) {
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto* he = static_cast<QHelpEvent*>(e);
    const double rel = (double(he->pos().x()) - plot().left()) / slot();
    size_t bar = rel < 0 ? SIZE_MAX : static_cast<size_t>(rel);
    if (bar == m_b.steps.size() + 1 && m_b.meanOver > 1)
        bar = m_b.steps.size(); // the mean
    else if (bar >= m_b.steps.size())
        bar = SIZE_MAX;
    if (bar == SIZE_MAX) {
        QToolTip::hideText();
        return true;
    }
    const int64_t length = barLength(bar);
    QString text =
        bar < m_b.steps.size()
            ? tr("<b>Step #%1</b>%2 · %3")
                  .arg(m_b.steps[bar].number)
                  .arg(m_b.steps[bar].warmup ? tr(" (warm-up)") : QString())
                  .arg(dur(length))
            : tr("<b>Mean of %1 steady steps</b> · %2").arg(m_b.meanOver).arg(dur(length));
    auto segs = segments(bar);
    for (auto it = segs.rbegin(); it != segs.rend(); ++it)
        text += QString("<br>%1: %2 (%3)")
                    .arg(it->label.toHtmlEscaped(), dur(it->ns), pct(it->ns, length));
    if (bar < m_b.steps.size()) text += tr("<br><i>Click to show this step</i>");
    QToolTip::showText(he->globalPos(), text, this);
    return true;
}

// ---------------------------------------------------------------- the panel

OverviewPanel::OverviewPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("overviewPanel");
    auto* top = new QHBoxLayout;
    m_summary = new QLabel(this);
    m_summary->setObjectName("overviewSummary");
    m_summary->setWordWrap(true);
    m_device = new QComboBox(this);
    m_mode = new QComboBox(this);
    m_mode->setObjectName("overviewMode");
    m_mode->addItem(tr("What ran"));
    m_mode->addItem(tr("Why the GPU was idle"));
    top->addWidget(m_summary, 1);
    top->addWidget(m_device);
    top->addWidget(m_mode);
    m_bars = new StepBarsWidget(this);
    m_table = new QTableWidget(this);
    m_table->setObjectName("overviewTable");
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(6, 4, 6, 4);
    lay->addLayout(top);
    lay->addWidget(m_bars, 3);
    lay->addWidget(m_table, 2);
    connect(m_device, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    connect(m_bars, &StepBarsWidget::stepClicked, this, &OverviewPanel::stepActivated);
    connect(m_table, &QTableWidget::cellClicked, this, [this](int row, int) {
        const QVariant n =
            m_table->item(row, 0) ? m_table->item(row, 0)->data(Qt::UserRole) : QVariant();
        if (n.isValid()) Q_EMIT stepActivated(n.toLongLong());
    });
}

bool OverviewPanel::hasSteps() const {
    if (!m_analysis) return false;
    return std::any_of(m_analysis->devices.begin(), m_analysis->devices.end(),
                       [](const DeviceMetrics& d) { return !d.steps.empty(); });
}

void OverviewPanel::setData(std::shared_ptr<const AnalysisResult> analysis) {
    m_analysis = std::move(analysis);
    m_device->blockSignals(true);
    m_device->clear();
    if (m_analysis)
        for (const DeviceMetrics& d : m_analysis->devices)
            m_device->addItem(tr("GPU %1").arg(d.device), d.device);
    m_device->setVisible(m_device->count() > 1);
    m_device->blockSignals(false);
    refresh();
}

void OverviewPanel::refresh() {
    m_table->clear();
    m_table->setRowCount(0);
    const int di = m_device->currentIndex();
    if (!m_analysis || di < 0 || size_t(di) >= m_analysis->devices.size() ||
        m_analysis->devices[size_t(di)].steps.empty()) {
        m_bars->setBreakdown({}, StepBarsWidget::Mode::Categories);
        m_summary->setText(m_analysis && m_analysis->devices.empty()
                               ? tr("No GPU work in this trace: no time per step to show.")
                               : tr("This trace has no steps (ProfilerStep ranges): the time per "
                                    "step needs them. The timeline and the findings cover the "
                                    "whole window."));
        return;
    }
    const StepBreakdown b = stepBreakdown(m_analysis->devices[size_t(di)]);
    const auto mode = m_mode->currentIndex() == 1 ? StepBarsWidget::Mode::IdleCauses
                                                  : StepBarsWidget::Mode::Categories;
    m_bars->setBreakdown(b, mode);
    // The summary: the mean step and its largest parts.
    const int64_t busy = gpuBusy(b.meanNs);
    if (b.steps.size() == 1) // one step (a step or range scope): its length, no mean
        m_summary->setText(tr("<b>GPU %1</b> · step #%2: <b>%3</b> · GPU busy %4 of it")
                               .arg(b.device)
                               .arg(b.steps.front().number)
                               .arg(dur(b.meanStepNs), pct(busy, b.meanStepNs)));
    else
        m_summary->setText(
            tr("<b>GPU %1</b> · %2 steps · mean of %3 %4: <b>%5</b> · GPU busy %6 of it")
                .arg(b.device)
                .arg(b.steps.size())
                .arg(b.meanOver)
                .arg(b.meanOver == b.steps.size() ? tr("steps") : tr("steady steps"))
                .arg(dur(b.meanStepNs), pct(busy, b.meanStepNs)));
    // The table: the bars' figures.
    const size_t bars = m_bars->barCount();
    QStringList header{tr("Step"), tr("Length")};
    std::vector<QString> columns;
    for (size_t i = 0; i < bars; ++i)
        for (const auto& seg : m_bars->segments(i))
            if (std::find(columns.begin(), columns.end(), seg.label) == columns.end())
                columns.push_back(seg.label);
    for (const QString& c : columns) header << c;
    m_table->setColumnCount(int(header.size()));
    m_table->setHorizontalHeaderLabels(header);
    m_table->setRowCount(int(bars));
    for (size_t i = 0; i < bars; ++i) {
        const bool mean = i >= b.steps.size();
        auto* first =
            new QTableWidgetItem(mean ? tr("mean of %1").arg(b.meanOver)
                                      : "#" + QString::number(b.steps[i].number) +
                                            (b.steps[i].warmup ? tr(" warm-up") : QString()));
        if (!mean) first->setData(Qt::UserRole, qlonglong(b.steps[i].number));
        m_table->setItem(int(i), 0, first);
        const int64_t length = mean ? b.meanStepNs : b.steps[i].lengthNs();
        auto* len = new QTableWidgetItem(dur(length));
        len->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(int(i), 1, len);
        for (const auto& seg : m_bars->segments(i)) {
            const auto col = std::find(columns.begin(), columns.end(), seg.label) - columns.begin();
            auto* it = new QTableWidgetItem(dur(seg.ns) + "  " + pct(seg.ns, length));
            it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            it->setData(Qt::DecorationRole, seg.color);
            m_table->setItem(int(i), int(col) + 2, it);
        }
    }
    m_table->resizeColumnsToContents();
}

extern const PanelInfo kPanelOverview{
    PanelId::Overview, "overview", QT_TRANSLATE_NOOP("MainWindow", "Overview"),
    [](MainWindow& mw) {
        auto* w = new OverviewPanel(&mw);
        QObject::connect(w, &OverviewPanel::stepActivated, &mw,
                         [&mw](int64_t n) { mw.selectStep(n); });
        return makePanel<OverviewPanel>(
            w, [](OverviewPanel& p, const PanelContext& c) { p.setData(c.analysis()); });
    },
    /*followsScope=*/true};

} // namespace stallscope::gui
