#include "flame_panel.h"

#include "flame_graph_widget.h"
#include "theme.h"

#include <QComboBox>
#include <QSignalBlocker>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScrollArea>
#include <QStringList>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace stallscope::gui {

using analysis::FlameMode;

namespace {
const QString kSep = QStringLiteral("   \u00b7   ");

void setElided(QLabel* label, const QString& text) {
    const int room =
        label->width() - label->contentsMargins().left() - label->contentsMargins().right();
    label->setText(label->fontMetrics().elidedText(text, Qt::ElideRight, std::max(room, 40)));
    label->setToolTip(label->text() == text ? QString() : text);
}
} // namespace

FlamePanel::FlamePanel(QWidget* parent) : QWidget(parent) {
    QHBoxLayout* bar = buildToolbar();
    m_status = new QLabel(this);
    m_status->setContentsMargins(8, 3, 8, 4);
    for (QLabel* l : {m_info, m_status}) {
        l->setTextFormat(Qt::PlainText);
        l->setMinimumWidth(80);
        l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
        l->installEventFilter(this); // re-elided on resize
    }

    m_graph = new FlameGraphWidget;
    m_scroll = new QScrollArea(this);
    m_scroll->setWidget(m_graph);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addWidget(m_scroll, 1);
    layout->addWidget(m_status);

    connect(m_mode, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
    connect(m_device, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
    connect(m_search, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_graph->setSearch(text.trimmed());
        updateStatus();
    });
    connect(m_reset, &QToolButton::clicked, m_graph, &FlameGraphWidget::resetZoom);
    connect(m_graph, &FlameGraphWidget::zoomChanged, this, [this](int node) {
        m_reset->setEnabled(node > 0);
        updateStatus();
    });
    connect(m_graph, &FlameGraphWidget::hoveredChanged, this, [this] { updateStatus(); });
    connect(m_graph, &FlameGraphWidget::frameActivated, this, &FlamePanel::frameActivated);
    rebuild();
}

QHBoxLayout* FlamePanel::buildToolbar() {
    m_mode = new QComboBox(this);
    m_mode->addItem(tr("CPU time (operator stacks)"));
    m_mode->addItem(tr("GPU time by launching CPU stack"));
    m_mode->setItemData(
        0,
        tr("Where the CPU threads spend their time: slices merged by their name path "
           "from the top of the thread's stack."),
        Qt::ToolTipRole);
    m_mode->setItemData(
        1,
        tr("Where the GPU time comes from: each kernel, copy and memset charged to the "
           "CPU stack of the call that launched it."),
        Qt::ToolTipRole);
    m_mode->setSizeAdjustPolicy(QComboBox::AdjustToContents);

    m_device = new QComboBox(this);
    m_device->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_device->setToolTip(tr("The GPU whose kernels, copies and memsets are charged"));
    m_device->setVisible(false);

    m_search = new QLineEdit(this);
    m_search->setPlaceholderText(tr("Search frames"));
    m_search->setClearButtonEnabled(true);
    m_search->setFixedWidth(fontMetrics().horizontalAdvance(QLatin1Char('M')) * 18);
    m_search->setToolTip(tr("Outline the frames whose name contains this text (case-insensitive)"));

    m_reset = new QToolButton(this);
    m_reset->setText(tr("Reset zoom"));
    m_reset->setToolTip(
        tr("Show the whole graph again (Home). Esc, a right click or a click on the "
           "top frame zooms out one level."));
    m_reset->setEnabled(false);

    m_skipWrappers = new QToolButton(this);
    m_skipWrappers->setObjectName("skipWrappers");
    m_skipWrappers->setText(tr("Skip wrappers"));
    m_skipWrappers->setCheckable(true);
    m_skipWrappers->setChecked(true);
    m_skipWrappers->setToolTip(
        tr("Open the graph at its first frame that is not a wrapper: frames whose one child holds "
           "99 % or more of their time (Python wrappers, the training loop) are passed. Reset zoom "
           "shows them."));
    connect(m_skipWrappers, &QToolButton::toggled, this, [this](bool on) {
        m_graph->zoomTo(on ? analysis::firstBranchingNode(m_graph->graph()) : 0);
    });

    m_info = new QLabel(this);
    QPalette muted = m_info->palette();
    muted.setColor(QPalette::WindowText, Theme::current().mutedText);
    m_info->setPalette(muted);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 5, 8, 5);
    bar->setSpacing(10);
    bar->addWidget(m_mode);
    bar->addWidget(m_device);
    bar->addWidget(m_search);
    bar->addWidget(m_reset);
    bar->addWidget(m_skipWrappers);
    bar->addWidget(m_info, 1);
    return bar;
}

void FlamePanel::setData(std::shared_ptr<const model::Trace> trace,
                         std::shared_ptr<const analysis::AnalysisResult> analysis) {
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_hasRange = false;
    fillDevices();
    rebuild();
}

void FlamePanel::fillDevices() {
    QSignalBlocker block(m_device);
    m_device->clear();
    m_device->addItem(tr("All GPUs"), -1);
    if (m_analysis)
        for (const analysis::DeviceMetrics& d : m_analysis->devices)
            m_device->addItem(d.name.empty() ? tr("GPU %1").arg(d.device)
                                             : tr("GPU %1 · %2").arg(d.device).arg(QString::fromStdString(d.name)),
                              d.device);
}

void FlamePanel::setDevice(int32_t device) {
    const int i = m_device->findData(device);
    m_device->setCurrentIndex(i < 0 ? 0 : i);
}

int32_t FlamePanel::device() const {
    return m_device->count() ? m_device->currentData().toInt() : -1;
}

void FlamePanel::setRange(int64_t startNs, int64_t endNs) {
    if (endNs < startNs) std::swap(startNs, endNs);
    m_hasRange = true;
    m_rangeStart = startNs;
    m_rangeEnd = endNs;
    rebuild();
}

void FlamePanel::clearRange() {
    if (!m_hasRange) return;
    m_hasRange = false;
    rebuild();
}

void FlamePanel::setMode(FlameMode mode) {
    m_mode->setCurrentIndex(mode == FlameMode::GpuTime ? 1 : 0);
}

FlameMode FlamePanel::mode() const {
    return m_mode->currentIndex() == 1 ? FlameMode::GpuTime : FlameMode::CpuTime;
}

void FlamePanel::rebuild() {
    if (!m_trace) {
        m_job.cancel();
        m_graph->setGraph(nullptr, {});
        updateInfo();
        Q_EMIT graphBuilt();
        return;
    }
    int64_t lo = m_trace->startNs(), hi = model::satAdd(m_trace->endNs(), 1);
    if (m_hasRange) {
        lo = m_rangeStart;
        hi = m_rangeEnd;
    } else if (m_analysis && m_analysis->window.length() > 0) {
        lo = m_analysis->window.startNs;
        hi = m_analysis->window.endNs;
    }
    // The picker only when there is a choice: two or more GPUs.
    m_device->setVisible(mode() == FlameMode::GpuTime && m_device->count() > 2);
    // Millions of events take a while to fold: built on the pool, shown when done.
    m_infoText = tr("Building the flame graph …");
    setElided(m_info, m_infoText);
    const FlameMode mode = this->mode();
    const int32_t device = mode == FlameMode::GpuTime ? this->device() : -1;
    auto trace = m_trace;
    m_job.start(
        [trace, mode, lo, hi, device](const std::atomic<bool>&) {
            return analysis::buildFlameGraph(*trace, mode, lo, hi, device);
        },
        [this, trace](analysis::FlameGraph graph) {
            m_graph->setGraph(trace, std::move(graph));
            if (m_skipWrappers->isChecked())
                m_graph->zoomTo(analysis::firstBranchingNode(m_graph->graph()));
            m_graph->setSearch(m_search->text().trimmed());
            updateInfo();
            Q_EMIT graphBuilt();
        });
}

QString FlamePanel::rangeDescription() const {
    const auto& g = m_graph->graph();
    const QString length = FlameGraphWidget::formatDuration(g.endNs - g.startNs);
    if (m_hasRange) {
        const int64_t t0 = m_trace->startNs();
        return tr("Selection %1 – %2 (%3)")
            .arg(FlameGraphWidget::formatDuration(g.startNs - t0),
                 FlameGraphWidget::formatDuration(g.endNs - t0), length);
    }
    if (m_analysis && m_analysis->window.length() > 0)
        return tr("%1 (%2)").arg(QString::fromStdString(m_analysis->window.description), length);
    return tr("Whole trace (%1)").arg(length);
}


void FlamePanel::updateInfo() {
    if (!m_trace) {
        m_infoText = tr("No trace loaded");
    } else {
        const auto& g = m_graph->graph();
        m_infoText =
            rangeDescription() + kSep +
            (g.mode == FlameMode::GpuTime ? tr("GPU time %1") : tr("CPU time %1"))
                .arg(FlameGraphWidget::formatDuration(g.totalNs)) +
            tr(" in %1 frames")
                .arg(QLocale().toString(qulonglong(g.nodes.empty() ? 0 : g.nodes.size() - 1)));
        const int zoom = m_graph->zoomedNode();
        if (m_skipWrappers->isChecked() && zoom > 0 && zoom == analysis::firstBranchingNode(g))
            m_infoText +=
                kSep + tr("opened past %1 wrapper frames").arg(g.nodes[size_t(zoom)].depth);
    }
    setElided(m_info, m_infoText);
    updateStatus();
}

QString FlamePanel::frameSummary(int node) const {
    const auto& g = m_graph->graph();
    const auto& n = g.nodes[size_t(node)];
    auto share = [&](int64_t ns) {
        return QString::number(100.0 * double(ns) / double(std::max<int64_t>(1, g.totalNs)), 'f',
                               1);
    };
    QString s =
        m_graph->nodeName(node) + QStringLiteral("   ") +
        tr("total %1 (%2 %)").arg(FlameGraphWidget::formatDuration(n.totalNs), share(n.totalNs)) +
        kSep +
        tr("self %1 (%2 %)").arg(FlameGraphWidget::formatDuration(n.selfNs), share(n.selfNs));
    if (node > 0 && n.count > 0)
        s += kSep + tr("count %1").arg(QLocale().toString(qulonglong(n.count)));
    return s;
}

void FlamePanel::updateStatus() {
    const auto& g = m_graph->graph();
    const int hover = m_graph->hoveredNode();
    const int zoom = m_graph->zoomedNode();
    QStringList parts;
    if (hover >= 0 && size_t(hover) < g.nodes.size()) {
        parts << frameSummary(hover);
    } else if (!g.empty()) {
        if (zoom > 0)
            parts << tr("Zoomed into %1 (%2 % of the total)")
                         .arg(m_graph->nodeName(zoom))
                         .arg(100.0 * double(g.nodes[size_t(zoom)].totalNs) / double(g.totalNs), 0,
                              'f', 1);
        if (!m_graph->searchText().isEmpty())
            parts << (m_graph->matchedFrameCount() == 1
                          ? tr("1 matching frame")
                          : tr("%1 matching frames").arg(m_graph->matchedFrameCount())) +
                         tr(", %1 % of the total")
                             .arg(100.0 * double(m_graph->matchedTotalNs()) / double(g.totalNs), 0,
                                  'f', 1);
        if (parts.isEmpty())
            parts << tr("Click a frame to zoom in; Esc, a right click or a click on "
                        "\u201call\u201d zooms out; "
                        "double-click selects the name");
    }
    m_statusText = parts.join(kSep);
    setElided(m_status, m_statusText);
}

bool FlamePanel::eventFilter(QObject* watched, QEvent* e) {
    if (e->type() == QEvent::Resize && watched == m_info) setElided(m_info, m_infoText);
    if (e->type() == QEvent::Resize && watched == m_status) setElided(m_status, m_statusText);
    return QWidget::eventFilter(watched, e);
}

} // namespace stallscope::gui
