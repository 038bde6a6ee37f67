#include "efficiency_panel.h"

#include "gui_text.h"
#include "main_window.h"
#include "panel.h"
#include "panel_id.h"
#include "timeline/timeline_view.h"

#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/reports/palette.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>

namespace stallscope::gui {

using namespace analysis;

namespace {
constexpr int kSliceRole = Qt::UserRole;

QColor familyColor(const std::string& family) {
    return QColor(QRgb(0xFF000000u | reports::familyRgb(family)));
}

QString rate(double v, int decimals) {
    return v < 0 ? QStringLiteral("–") : QString::number(v, 'f', decimals);
}

QTreeWidget* table(QWidget* parent, const char* name, const QStringList& header) {
    auto* t = new QTreeWidget(parent);
    t->setObjectName(name);
    t->setRootIsDecorated(false);
    t->setAlternatingRowColors(true);
    t->setUniformRowHeights(true);
    t->setHeaderLabels(header);
    t->header()->setStretchLastSection(false);
    t->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    return t;
}
} // namespace

RooflineWidget::RooflineWidget(QWidget* parent) : QWidget(parent) {
    setObjectName("roofline");
    setMinimumSize(360, 220);
}

void RooflineWidget::setDevice(const DeviceEfficiency* d) {
    m_has = d != nullptr;
    m_roof = d ? rooflineOf(*d) : Roofline();
    m_title = !d                 ? QString()
              : m_roof.ridge > 0 ? tr("GPU %1 · %2 (%3): roof at %4 TFLOP/s and %5 TB/s")
                                       .arg(d->device)
                                       .arg(QString::fromStdString(d->peak->key),
                                            QString::fromUtf8(precisionName(d->dtype).data()))
                                       .arg(m_roof.peakTflops, 0, 'f', 1)
                                       .arg(m_roof.bandwidthTbps, 0, 'f', 2)
                                 : tr("GPU %1 · peaks unknown: no roof").arg(d->device);
    update();
}

void RooflineWidget::setSelected(const QString& family) {
    m_selected = family;
    update();
}

QRectF RooflineWidget::plotRect() const {
    return QRectF(56, 24, std::max(10, width() - 56 - 110), std::max(10, height() - 24 - 40));
}

QPointF RooflineWidget::at(double intensity, double tflops) const {
    const QRectF p = plotRect();
    return {p.left() + p.width() * m_roof.xAt(intensity),
            p.bottom() - p.height() * m_roof.yAt(tflops)};
}

QString RooflineWidget::familyAt(QPointF pos) const {
    for (const RooflinePoint& p : m_roof.points)
        if (QLineF(at(p.intensity, p.tflops), pos).length() <= 12)
            return QString::fromStdString(p.family);
    return {};
}

void RooflineWidget::mousePressEvent(QMouseEvent* e) {
    const QString f = familyAt(e->position());
    if (!f.isEmpty()) Q_EMIT familyClicked(f);
}

void RooflineWidget::paintEvent(QPaintEvent*) {
    QPainter g(this);
    g.setRenderHint(QPainter::Antialiasing);
    g.fillRect(rect(), palette().base());
    if (!m_has) return;
    const QRectF p = plotRect();
    g.setPen(palette().text().color());
    g.drawText(QPointF(4, 16), m_title);
    QPen grid(palette().mid().color(), 0.5);
    for (int e = int(m_roof.logXMin); e <= int(m_roof.logXMax); ++e) {
        const double x = at(std::pow(10.0, e), 1).x();
        g.setPen(grid);
        g.drawLine(QPointF(x, p.top()), QPointF(x, p.bottom()));
        g.setPen(palette().text().color());
        g.drawText(QRectF(x - 30, p.bottom() + 2, 60, 14), Qt::AlignHCenter,
                   QString::number(std::pow(10.0, e), 'g', 3));
    }
    for (int e = int(m_roof.logYMin); e <= int(m_roof.logYMax); ++e) {
        const double y = at(1, std::pow(10.0, e)).y();
        g.setPen(grid);
        g.drawLine(QPointF(p.left(), y), QPointF(p.right(), y));
        g.setPen(palette().text().color());
        g.drawText(QRectF(0, y - 7, p.left() - 4, 14), Qt::AlignRight,
                   QString::number(std::pow(10.0, e), 'g', 3));
    }
    g.drawText(QRectF(p.left(), p.bottom() + 18, p.width(), 16), Qt::AlignHCenter,
               tr("arithmetic intensity (FLOP per byte) · TFLOP/s"));
    if (m_roof.ridge > 0) {
        g.setPen(QPen(palette().text().color(), 2));
        const double x0 = std::pow(10.0, m_roof.logXMin), x1 = std::pow(10.0, m_roof.logXMax);
        const QPointF pts[] = {at(x0, m_roof.bandwidthTbps * x0),
                               at(m_roof.ridge, m_roof.peakTflops), at(x1, m_roof.peakTflops)};
        g.drawPolyline(pts, 3);
    }
    int64_t most = 1;
    for (const RooflinePoint& pt : m_roof.points) most = std::max(most, pt.busyNs);
    int row = 0;
    for (const RooflinePoint& pt : m_roof.points) {
        const double r = 4 + 10 * std::sqrt(double(pt.busyNs) / double(most));
        QColor c = familyColor(pt.family);
        const bool selected = m_selected == QString::fromStdString(pt.family);
        g.setPen(QPen(selected ? palette().highlight().color() : palette().text().color(),
                      selected ? 3 : 0.5));
        c.setAlpha(190);
        g.setBrush(c);
        g.drawEllipse(at(pt.intensity, pt.tflops), r, r);
        const QPointF l(p.right() + 14, p.top() + 10 + 18 * row++);
        g.drawEllipse(l, 5, 5);
        g.setPen(palette().text().color());
        g.drawText(l + QPointF(10, 4), QString::fromStdString(pt.family));
    }
    if (m_roof.points.empty())
        g.drawText(p, Qt::AlignCenter, tr("no kernel family with costed work"));
}

EfficiencyPanel::EfficiencyPanel(QWidget* parent) : QWidget(parent) {
    m_summary = new QLabel(this);
    m_summary->setObjectName("efficiencySummary");
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_device = new QComboBox(this);
    m_roofline = new RooflineWidget(this);
    m_families = table(this, "familyTable",
                       {tr("Kernel family"), tr("Kernels"), tr("Time"), tr("Busy"), tr("TFLOP/s"),
                        tr("TB/s"), tr("FLOP/B"), tr("Bound")});
    m_kernels = table(this, "familyKernels", {tr("Kernel"), tr("Calls"), tr("Time")});
    m_operators = table(this, "costliestOperators",
                        {tr("Operator"), tr("Input shapes"), tr("Calls"), tr("FLOPs per call"),
                         tr("FLOPs in all"), tr("Exact")});
    // The roofline beside the families; below, the chosen family's kernels beside the
    // costliest operators.
    m_operators->header()->setSectionResizeMode(0, QHeaderView::Interactive);
    m_operators->header()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_operators->setColumnWidth(0, 260);
    auto* top = new QSplitter(Qt::Horizontal, this);
    top->addWidget(m_roofline);
    top->addWidget(m_families);
    top->setSizes({520, 480});
    auto* bottom = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(m_kernels);
    bottom->addWidget(m_operators);
    bottom->setSizes({500, 500});
    auto* body = new QSplitter(Qt::Vertical, this);
    body->addWidget(top);
    body->addWidget(bottom);
    body->setSizes({600, 300});
    auto* head = new QHBoxLayout;
    head->addWidget(m_summary, 1);
    head->addWidget(m_device);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(head);
    layout->addWidget(body, 1);
    connect(m_device, &QComboBox::currentIndexChanged, this, &EfficiencyPanel::showDevice);
    connect(m_roofline, &RooflineWidget::familyClicked, this, &EfficiencyPanel::showFamily);
    connect(m_families, &QTreeWidget::itemClicked, this,
            [this](QTreeWidgetItem* it) { showFamily(it->text(0)); });
    connect(m_kernels, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* it) {
        const model::SliceId s(it->data(0, kSliceRole).toUInt());
        if (s.valid()) Q_EMIT eventRequested(s);
    });
}

void EfficiencyPanel::setData(std::shared_ptr<const model::Trace> trace,
                              std::shared_ptr<const AnalysisResult> analysis) {
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    const QSignalBlocker block(m_device);
    m_device->clear();
    if (m_analysis)
        for (const DeviceEfficiency& d : m_analysis->efficiency.devices)
            m_device->addItem(tr("GPU %1").arg(d.device));
    m_device->setVisible(m_device->count() > 1);
    m_operators->clear();
    if (m_analysis)
        for (const OperatorCostRow& r : m_analysis->efficiency.operators) {
            if (!r.cost.sized || r.cost.flops <= 0 || m_operators->topLevelItemCount() >= 200)
                break;
            auto* it = new QTreeWidgetItem(m_operators);
            it->setText(0, QString::fromStdString(r.name));
            it->setText(1, QString::fromStdString(r.dims));
            it->setText(2, QString::number(r.calls));
            it->setText(3, QString::fromStdString(formatFlops(r.cost.flops)));
            it->setText(4, QString::fromStdString(formatFlops(r.cost.flops * double(r.calls))));
            it->setText(5, r.cost.exact ? tr("yes") : tr("upper bound"));
            for (int c = 2; c <= 4; ++c) it->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        }
    showDevice(0);
}

void EfficiencyPanel::showDevice(int index) {
    m_families->clear();
    m_kernels->clear();
    const Efficiency* e = m_analysis ? &m_analysis->efficiency : nullptr;
    const DeviceEfficiency* d =
        e && index >= 0 && size_t(index) < e->devices.size() ? &e->devices[size_t(index)] : nullptr;
    m_roofline->setDevice(d);
    if (!d) {
        m_summary->setText(tr("No GPU work in the analysis window."));
        return;
    }
    QString text;
    if (!e->shapes)
        text = tr("No input shapes in the trace (profile with record_shapes=True): no FLOPs, MFU "
                  "or roofline. "
                  "Busy time by kernel family:");
    else if (d->mfu >= 0)
        text = tr("<b>MFU %1 %</b>: %2 of matrix multiplies, convolutions and attention in %3 "
                  "against the %4 "
                  "peak of %5 TFLOP/s (%6; the type from the %7).")
                   .arg(d->mfu * 100, 0, 'f', 1)
                   .arg(QString::fromStdString(formatFlops(d->modelFlops)),
                        durationText(d->windowNs, 2),
                        QString::fromUtf8(precisionName(d->dtype).data()))
                   .arg(d->peakTflops, 0, 'f', 1)
                   .arg(QString::fromStdString(d->peak->key), QString::fromStdString(d->dtypeFrom));
    else
        text = tr("MFU unknown: %1.").arg(QString::fromStdString(d->why).toHtmlEscaped());
    if (d->mfu >= 0 && d->upperBound())
        text += tr(" An upper bound: %1 % of these FLOPs are convolutions whose strides the trace "
                   "does not "
                   "record (counted at stride 1).")
                    .arg(100 * d->upperBoundFlops / d->modelFlops, 0, 'f', 0);
    if (d->achievedTflops >= 0)
        text += tr(" The kernels doing that work ran at %1.")
                    .arg(QString::fromStdString(formatFlopRate(d->achievedTflops * 1e12)));
    for (const std::string& n : d->notes)
        text += tr("<br><i>Note: %1.</i>").arg(QString::fromStdString(n).toHtmlEscaped());
    for (const DeviceMetrics& m : m_analysis->devices)
        if (m.device == d->device)
            for (const std::string& line : launchStatsLines(m.launches))
                text += QStringLiteral("<br>") + QString::fromStdString(line).toHtmlEscaped();
    m_summary->setText(text);
    int64_t busy = 0;
    for (const FamilyEfficiency& f : d->families) busy += f.busyNs;
    for (const FamilyEfficiency& f : d->families) {
        auto* it = new QTreeWidgetItem(m_families);
        it->setText(0, QString::fromStdString(f.family));
        it->setIcon(0, [&] {
            QPixmap px(10, 10);
            px.fill(familyColor(f.family));
            return QIcon(px);
        }());
        it->setText(1, QString::number(f.kernels));
        it->setText(2, durationText(f.busyNs, 2));
        it->setText(
            3,
            QString::number(busy > 0 ? 100.0 * double(f.busyNs) / double(busy) : 0, 'f', 1) + " %");
        it->setText(4, rate(f.tflops, 2));
        it->setText(5, rate(f.tbps, 3));
        it->setText(6, rate(f.intensity, 1));
        it->setText(7, f.bound.empty() ? QStringLiteral("–") : QString::fromStdString(f.bound));
        for (int c = 1; c <= 6; ++c) it->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    }
    if (!d->families.empty()) showFamily(QString::fromStdString(d->families.front().family));
}

void EfficiencyPanel::showFamily(const QString& family) {
    m_roofline->setSelected(family);
    m_kernels->clear();
    if (!m_analysis || !m_trace) return;
    for (const KernelStat& k : m_analysis->stats.kernels) {
        const std::string_view name = m_trace->str(k.name);
        if (QString::fromUtf8(kernelFamilyName(classifyKernel(name).family).data()) != family)
            continue;
        auto* it = new QTreeWidgetItem(m_kernels);
        it->setText(0, QString::fromUtf8(name.data(), qsizetype(name.size())));
        it->setToolTip(0, it->text(0));
        it->setText(1, QString::number(k.count));
        it->setText(2, durationText(k.totalNs, 2));
        it->setData(0, kSliceRole, k.example.value);
        it->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
        it->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
    }
    for (int i = 0; i < m_families->topLevelItemCount(); ++i)
        m_families->topLevelItem(i)->setSelected(m_families->topLevelItem(i)->text(0) == family);
}

extern const PanelInfo kPanelEfficiency{
    PanelId::Efficiency, "efficiency", QT_TRANSLATE_NOOP("MainWindow", "Efficiency"),
    [](MainWindow& mw) {
        auto* w = new EfficiencyPanel(&mw);
        TimelineView* tl = mw.timeline();
        QObject::connect(w, &EfficiencyPanel::eventRequested, tl,
                         [tl](model::SliceId s) { tl->selectSlice(s, true); });
        return makePanel<EfficiencyPanel>(w, [](EfficiencyPanel& p, const PanelContext& c) {
            p.setData(c.trace().entry.trace, c.analysis());
        });
    },
    /*followsScope=*/true};

} // namespace stallscope::gui
