#include "memory_panel.h"

#include "allocator_views.h"
#include "gui_text.h"
#include "main_window.h"
#include "panel.h"
#include "panel_id.h"
#include "theme.h"
#include "timeline/timeline_view.h"

#include "stallscope/base/text_format.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace stallscope::gui {

using analysis::DeviceMemory;
using analysis::MemoryEventRow;

namespace {
constexpr int kSortRole = Qt::UserRole + 1;
constexpr int kSliceRole = Qt::UserRole + 2;
constexpr int kFilterRole = Qt::UserRole + 3;

QString bytesText(int64_t b) {
    const std::string s = base::formatBytes(b < 0 ? uint64_t(0) - uint64_t(b) : uint64_t(b));
    return (b < 0 ? QStringLiteral("-") : QString()) + QString::fromStdString(s);
}

/// Numbers sort by value (kSortRole), text by text.
class Item : public QTableWidgetItem {
public:
    explicit Item(const QString& text) : QTableWidgetItem(text) {}
    Item(const QString& text, qlonglong value) : QTableWidgetItem(text) {
        setData(kSortRole, value);
        setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    }
    bool operator<(const QTableWidgetItem& other) const override {
        const QVariant a = data(kSortRole), b = other.data(kSortRole);
        if (a.isValid() && b.isValid()) return a.toLongLong() < b.toLongLong();
        return text() < other.text();
    }
};

QTableWidget* makeTable(QWidget* parent, const char* name, const QStringList& header) {
    auto* t = new QTableWidget(parent);
    t->setObjectName(name);
    t->setColumnCount(int(header.size()));
    t->setHorizontalHeaderLabels(header);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setAlternatingRowColors(true);
    t->verticalHeader()->setVisible(false);
    t->verticalHeader()->setDefaultSectionSize(20);
    t->horizontalHeader()->setStretchLastSection(true);
    return t;
}

QString sliceName(const model::Trace& t, model::SliceId s, const QString& none) {
    if (!s.valid()) return none;
    const std::string_view n = t.str(t.slices().name[s.index()]);
    return QString::fromUtf8(n.data(), qsizetype(n.size()));
}
} // namespace

/// The device's allocator events as a table model: computed per cell, nothing per row kept.
class MemoryEventsModel : public QAbstractTableModel {
public:
    using QAbstractTableModel::QAbstractTableModel;
    void set(const model::Trace* t, const DeviceMemory* d, int64_t origin) {
        beginResetModel();
        m_t = t;
        m_d = d;
        m_origin = origin;
        endResetModel();
    }
    int rowCount(const QModelIndex& p = {}) const override {
        return p.isValid() || !m_d ? 0 : int(m_d->rows.size());
    }
    int columnCount(const QModelIndex& p = {}) const override { return p.isValid() ? 0 : 7; }
    QVariant headerData(int section, Qt::Orientation o, int role) const override {
        if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
        static const char* names[] = {"Time",        "Bytes",    "Allocated",   "Reserved",
                                      "Freed after", "Operator", "Python frame"};
        return section >= 0 && section < 7 ? MemoryPanel::tr(names[section]) : QVariant();
    }
    QVariant data(const QModelIndex& i, int role) const override {
        if (!m_d || !i.isValid() || size_t(i.row()) >= m_d->rows.size()) return {};
        const MemoryEventRow& e = m_d->rows[size_t(i.row())];
        const bool freed = e.bytes > 0 && e.freedAt >= 0;
        if (role == kSliceRole)
            return e.op.valid() ? QVariant(qulonglong(e.op.index())) : QVariant();
        if (role == kFilterRole)
            return sliceName(*m_t, e.op, QString()) + '\n' + sliceName(*m_t, e.frame, QString());
        if (role == Qt::TextAlignmentRole)
            return i.column() < 5 ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
        if (role == kSortRole) switch (i.column()) {
            case 0: return qlonglong(e.ts);
            case 1: return qlonglong(e.bytes);
            case 2: return qlonglong(e.totalAllocated);
            case 3: return qlonglong(e.totalReserved);
            case 4:
                return freed         ? qlonglong(e.freedAt - e.ts)
                       : e.bytes > 0 ? std::numeric_limits<qlonglong>::max()
                                     : qlonglong(-1);
            default: return data(i, Qt::DisplayRole);
            }
        if (role != Qt::DisplayRole) return {};
        switch (i.column()) {
        case 0: return "+" + durationText(e.ts - m_origin);
        case 1: return bytesText(e.bytes);
        case 2: return bytesText(e.totalAllocated);
        case 3: return bytesText(e.totalReserved);
        case 4:
            return freed         ? durationText(e.freedAt - e.ts)
                   : e.bytes > 0 ? MemoryPanel::tr("not in the trace")
                                 : QString();
        case 5: return sliceName(*m_t, e.op, QStringLiteral("-"));
        case 6: return sliceName(*m_t, e.frame, QStringLiteral("-"));
        default: return {};
        }
    }

private:
    const model::Trace* m_t = nullptr;
    const DeviceMemory* m_d = nullptr;
    int64_t m_origin = 0;
};

// ---------------------------------------------------------------- curve

MemoryCurveWidget::MemoryCurveWidget(QWidget* parent) : QWidget(parent) {
    setMinimumHeight(110);
    setToolTip(tr("Allocated (filled) and reserved (line) memory over the window; a click "
                  "shows that time on the timeline."));
}

void MemoryCurveWidget::setDevice(const DeviceMemory* device, int64_t startNs, int64_t endNs) {
    m_device = device;
    m_start = startNs;
    m_end = std::max(endNs, startNs + 1);
    update();
}

QRectF MemoryCurveWidget::plot() const {
    return QRectF(70, 8, std::max(10, width() - 80), std::max(10, height() - 28));
}

int64_t MemoryCurveWidget::timeAt(double x) const {
    const QRectF r = plot();
    const double f = std::clamp((x - r.left()) / r.width(), 0.0, 1.0);
    return m_start + int64_t(f * double(m_end - m_start));
}

void MemoryCurveWidget::mousePressEvent(QMouseEvent* e) {
    if (m_device && plot().contains(e->position())) Q_EMIT timeActivated(timeAt(e->position().x()));
}

void MemoryCurveWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const Theme& th = Theme::current();
    const QRectF r = plot();
    p.setPen(th.grid);
    p.drawRect(r);
    if (!m_device || m_device->rows.empty()) return;
    double top = 1;
    for (const MemoryEventRow& e : m_device->rows)
        top = std::max({top, double(e.totalAllocated), double(e.totalReserved)});
    auto xOf = [&](int64_t t) {
        return r.left() +
               std::clamp(double(t - m_start) / double(m_end - m_start), 0.0, 1.0) * r.width();
    };
    auto yOf = [&](double v) { return r.bottom() - std::max(0.0, v) / top * r.height(); };
    // Step curves (a value holds from its event to the next), one column of pixels at a
    // time: its largest value, so tens of thousands of events draw as a few hundred points
    // and no peak is lost.
    const int columns = std::max(1, int(r.width()));
    for (const bool reserved : {false, true}) {
        std::vector<double> colMax(size_t(columns), -1), colLast(size_t(columns), -1);
        double firstX = -1;
        for (const MemoryEventRow& e : m_device->rows) {
            const double v = double(reserved ? e.totalReserved : e.totalAllocated);
            if (v < 0) continue;
            const double x = xOf(e.ts);
            if (firstX < 0) firstX = x;
            const size_t c = size_t(std::clamp(int(x - r.left()), 0, columns - 1));
            colMax[c] = std::max(colMax[c], v);
            colLast[c] = v;
        }
        if (firstX < 0) continue;
        QPainterPath path;
        double last = -1;
        for (int c = 0; c < columns; ++c) {
            const double x = r.left() + c;
            if (colMax[size_t(c)] < 0) { // no event: the value in force goes on
                if (last >= 0) path.lineTo(x + 1, yOf(last));
                continue;
            }
            if (last < 0)
                path.moveTo(x, yOf(colMax[size_t(c)]));
            else
                path.lineTo(x, yOf(std::max(last, colMax[size_t(c)])));
            path.lineTo(x + 1, yOf(colMax[size_t(c)]));
            last = colLast[size_t(c)];
            path.lineTo(x + 1, yOf(last));
        }
        if (reserved) {
            p.setPen(QPen(QColor(110, 110, 190), 1.5));
            p.setBrush(Qt::NoBrush);
            p.drawPath(path);
        } else {
            QPainterPath fill = path;
            fill.lineTo(r.right(), r.bottom());
            fill.lineTo(firstX, r.bottom());
            fill.closeSubpath();
            QColor c(52, 120, 200);
            c.setAlpha(th.dark ? 120 : 90);
            p.fillPath(fill, c);
            p.setPen(QPen(QColor(52, 120, 200), 1.2));
            p.drawPath(path);
        }
    }
    // The peak, and the axis.
    if (m_device->peakAllocated >= 0) {
        const double x = xOf(m_device->peakAllocatedAt);
        p.setPen(QPen(QColor(200, 60, 50), 1, Qt::DashLine));
        p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
        p.setPen(QColor(200, 60, 50));
        const QString label = tr("peak %1").arg(bytesText(m_device->peakAllocated));
        const double w = QFontMetrics(font()).horizontalAdvance(label) + 6;
        p.drawText(QRectF(std::min(x + 3, r.right() - w), r.top(), w, 16), label);
    }
    p.setPen(th.mutedText);
    p.drawText(QRectF(0, r.top() - 2, 66, 16), Qt::AlignRight, bytesText(int64_t(top)));
    p.drawText(QRectF(0, r.bottom() - 14, 66, 16), Qt::AlignRight, QStringLiteral("0"));
    p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 16), Qt::AlignLeft,
               QStringLiteral("+0"));
    p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 16), Qt::AlignRight,
               "+" + durationText(m_end - m_start));
    p.setPen(QColor(110, 110, 190));
    p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), 16), Qt::AlignHCenter,
               tr("fill: allocated · line: reserved"));
}

// ---------------------------------------------------------------- panel

MemoryPanel::MemoryPanel(QWidget* parent) : QWidget(parent) {
    m_device = new QComboBox(this);
    m_device->setObjectName("memoryDevice");
    m_summary = new QLabel(this);
    m_summary->setObjectName("memorySummary");
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    connect(m_summary, &QLabel::linkActivated, this, [this](const QString& link) {
        if (const DeviceMemory* d = device(); d && link == "peak")
            Q_EMIT timeRequested(d->peakAllocatedAt);
    });
    m_curve = new MemoryCurveWidget(this);
    connect(m_curve, &MemoryCurveWidget::timeActivated, this, &MemoryPanel::timeRequested);

    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    m_tabs->setObjectName("memoryTabs");
    // Live at the peak.
    auto* live = new QWidget(this);
    m_grouping = new QComboBox(live);
    m_grouping->setObjectName("memoryGrouping");
    m_grouping->addItems(
        {tr("by operator"), tr("by Python frame"), tr("largest blocks"), tr("by category")});
    m_live = makeTable(live, "memoryLive", {tr("Allocated by"), tr("Bytes live"), tr("Blocks")});
    m_live->setToolTip(tr("Blocks live at the allocated peak whose allocation the trace shows, "
                          "grouped by the innermost operator (or Python frame of the program) "
                          "that allocated them."));
    connect(m_grouping, &QComboBox::currentIndexChanged, this, [this] { fillLive(); });
    auto* ll = new QVBoxLayout(live);
    ll->setContentsMargins(0, 4, 0, 0);
    auto* lb = new QHBoxLayout;
    lb->addWidget(new QLabel(tr("Live at the peak, grouped"), live));
    lb->addWidget(m_grouping);
    lb->addStretch(1);
    ll->addLayout(lb);
    ll->addWidget(m_live, 1);
    m_tabs->addTab(live, tr("Live at the peak"));
    // Operators.
    m_ops = makeTable(this, "memoryOperators",
                      {tr("Operator"), tr("Calls"), tr("Allocations"), tr("Allocated"), tr("Frees"),
                       tr("Freed"), tr("Self increase"), tr("Total increase")});
    m_ops->setToolTip(tr("Self: the operator's own allocations and frees (it is the innermost "
                         "operator holding them); total: every event inside it at any depth."));
    m_tabs->addTab(m_ops, tr("Operators"));
    // Events.
    auto* events = new QWidget(this);
    m_filter = new QLineEdit(events);
    m_filter->setObjectName("memoryFilter");
    m_filter->setPlaceholderText(tr("Filter by operator or frame"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, [this] { applyFilter(); });
    m_eventsModel = new MemoryEventsModel(this);
    m_eventsProxy = new QSortFilterProxyModel(this);
    m_eventsProxy->setSourceModel(m_eventsModel);
    m_eventsProxy->setSortRole(kSortRole);
    m_eventsProxy->setFilterRole(kFilterRole);
    m_eventsProxy->setFilterKeyColumn(0);
    m_eventsProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_events = new QTableView(events);
    m_events->setObjectName("memoryEvents");
    m_events->setModel(m_eventsProxy);
    m_events->setSortingEnabled(true);
    m_events->sortByColumn(0, Qt::AscendingOrder);
    m_events->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_events->setAlternatingRowColors(true);
    m_events->verticalHeader()->setVisible(false);
    // Tens of thousands of rows: one fixed height, nothing measured per row.
    m_events->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_events->verticalHeader()->setDefaultSectionSize(20);
    m_events->horizontalHeader()->setStretchLastSection(true);
    m_events->setToolTip(tr("Every allocator event of the device (time from the window's "
                            "start); a double-click selects its operator on the timeline."));
    auto* el = new QVBoxLayout(events);
    el->setContentsMargins(0, 4, 0, 0);
    el->addWidget(m_filter);
    el->addWidget(m_events, 1);
    m_tabs->addTab(events, tr("Events"));
    // Active blocks: the allocated memory as a stack of its blocks (memory_viz's picture).
    auto* active = new QWidget(this);
    m_active = new ActiveMemoryWidget(active);
    m_active->setObjectName("memoryActiveBlocks");
    m_blockInfo =
        new QLabel(tr("Point at a block for what it is; click it for its stack."), active);
    m_blockInfo->setObjectName("memoryBlockInfo");
    m_blockInfo->setWordWrap(true);
    m_blockInfo->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* al = new QVBoxLayout(active);
    al->setContentsMargins(0, 4, 0, 0);
    al->addWidget(m_active, 3);
    al->addWidget(m_blockInfo, 1);
    m_tabs->addTab(active, tr("Active blocks"));
    connect(m_active, &ActiveMemoryWidget::blockActivated, this,
            [this](int row) { showBlock(row); });
    // Allocator: an allocator snapshot's segments and blocks when it was taken.
    auto* alloc = new QWidget(this);
    m_allocatorSummary = new QLabel(alloc);
    m_allocatorSummary->setObjectName("memoryAllocatorSummary");
    m_allocatorSummary->setWordWrap(true);
    m_allocatorSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_segments = new SegmentMapWidget(alloc);
    m_segments->setObjectName("memorySegments");
    auto* scroll = new QScrollArea(alloc);
    scroll->setWidget(m_segments);
    scroll->setWidgetResizable(true);
    auto* sl = new QVBoxLayout(alloc);
    sl->setContentsMargins(0, 4, 0, 0);
    sl->addWidget(m_allocatorSummary);
    sl->addWidget(scroll, 1);
    m_tabs->addTab(alloc, tr("Allocator"));
    // The events (tens of thousands of rows) are laid out only when their tab is looked at.
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] { fillEvents(); });
    connect(m_events, &QTableView::activated, this, [this](const QModelIndex& i) {
        const QVariant v = i.isValid() ? i.siblingAtColumn(0).data(kSliceRole) : QVariant();
        if (v.isValid())
            Q_EMIT eventRequested(model::SliceId(static_cast<uint32_t>(v.toULongLong())));
    });
    for (QTableWidget* t : {m_live, m_ops})
        connect(t, &QTableWidget::itemActivated, this, [this](QTableWidgetItem* it) {
            if (!it) return;
            const QVariant v = it->tableWidget()->item(it->row(), 0)->data(kSliceRole);
            if (v.isValid())
                Q_EMIT eventRequested(model::SliceId(static_cast<uint32_t>(v.toULongLong())));
        });
    connect(m_device, &QComboBox::currentIndexChanged, this, [this] { showDevice(); });

    auto* top = new QHBoxLayout;
    top->addWidget(m_device, 0, Qt::AlignTop);
    top->addWidget(m_summary, 1);
    auto* split = new QHBoxLayout;
    auto* left = new QVBoxLayout;
    left->addLayout(top);
    left->addWidget(m_curve, 1);
    split->addLayout(left, 1);
    split->addWidget(m_tabs, 1);
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(6, 5, 6, 0);
    l->addLayout(split, 1);
}

void MemoryPanel::setData(std::shared_ptr<const model::Trace> trace,
                          std::shared_ptr<const analysis::AnalysisResult> analysis) {
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_dirty = true;
    if (isVisible()) rebuild();
}

void MemoryPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (m_dirty) rebuild();
}

const analysis::MemoryAnalysis& MemoryPanel::memory() {
    if (m_dirty) rebuild();
    return m_memory;
}

void MemoryPanel::showTab(Tab tab) {
    m_tabs->setCurrentIndex(int(tab));
    fillEvents();
}

QTableWidget* MemoryPanel::table(Tab tab) const {
    return tab == LiveTab ? m_live : m_ops;
}

const DeviceMemory* MemoryPanel::device() const {
    const int i = m_device->currentIndex();
    return i >= 0 && size_t(i) < m_memory.devices.size() ? &m_memory.devices[size_t(i)] : nullptr;
}

void MemoryPanel::rebuild() {
    m_dirty = false;
    m_memory = m_trace && m_analysis ? analysis::analyzeMemory(*m_trace, *m_analysis)
                                     : analysis::MemoryAnalysis{};
    const QSignalBlocker block(m_device);
    m_device->clear();
    for (const DeviceMemory& d : m_memory.devices)
        m_device->addItem(QString::fromStdString(d.label));
    m_device->setVisible(m_device->count() > 1);
    showDevice();
}

void MemoryPanel::showDevice() {
    const DeviceMemory* d = device();
    const int64_t origin = m_analysis ? m_analysis->window.startNs : 0;
    m_curve->setDevice(d, origin, m_analysis ? m_analysis->window.endNs : 1);
    m_active->setDevice(m_trace.get(), d, origin, m_analysis ? m_analysis->window.endNs : 1);
    showAllocator(d);
    for (QTableWidget* t : {m_live, m_ops}) {
        t->setSortingEnabled(false);
        t->setRowCount(0);
    }
    m_eventsShown = nullptr; // filled when the Events tab is shown (fillEvents)
    m_eventsModel->set(nullptr, nullptr, origin);
    fillEvents();
    if (!d) {
        m_summary->setText(
            m_trace && !m_trace->memorySamples().empty()
                ? tr("No allocator events in this window.")
                : tr("This trace has no memory events: record with "
                     "<code>torch.profiler.profile(profile_memory=True)</code> to see where the "
                     "memory goes."));
        return;
    }
    QString s = QStringLiteral("<b>%1</b>").arg(QString::fromStdString(d->label).toHtmlEscaped());
    if (d->peakAllocated >= 0) {
        s += tr(" · peak allocated <b>%1</b> at <a href=\"peak\">+%2</a>%3")
                 .arg(bytesText(d->peakAllocated), durationText(d->peakAllocatedAt - origin),
                      d->peakStep >= 0 ? tr(" (step #%1)").arg(d->peakStep) : QString());
        if (d->capacity > 0)
            s += tr(" of the device's %1 (%2 %)")
                     .arg(bytesText(d->capacity))
                     .arg(QString::number(100.0 * double(d->peakAllocated) / double(d->capacity),
                                          'f', 1));
    }
    if (d->peakReserved > 0)
        s += tr(" · peak reserved <b>%1</b> (allocated then %2)")
                 .arg(bytesText(d->peakReserved), bytesText(d->allocatedAtPeakReserved));
    s += tr("<br>%1 events: %2 allocations (%3), %4 frees (%5)")
             .arg(d->events)
             .arg(d->allocations)
             .arg(bytesText(d->allocatedBytes))
             .arg(d->frees)
             .arg(bytesText(d->freedBytes));
    if (d->liveBeforeTrace > 0)
        s += tr(" · at the peak %1 was allocated before the trace began (not attributable)")
                 .arg(bytesText(d->liveBeforeTrace));
    for (const analysis::MemoryAdvice& a : d->advice)
        s += "<br>▸ " + QString::fromStdString(a.text).toHtmlEscaped() + " <i>" +
             QString::fromStdString(a.fix).toHtmlEscaped() + "</i>";
    for (const std::string& n : m_memory.notes)
        if (n.rfind(d->label + ":", 0) == 0)
            s += "<br><span style=\"color:gray\">" + QString::fromStdString(n).toHtmlEscaped() +
                 "</span>";
    m_summary->setText(s);

    fillLive();
    m_ops->setRowCount(int(d->operators.size()));
    for (int i = 0; i < int(d->operators.size()); ++i) {
        const analysis::MemoryOperatorRow& o = d->operators[size_t(i)];
        m_ops->setItem(i, 0, new Item(QString::fromStdString(o.name)));
        m_ops->setItem(i, 1, new Item(QString::number(o.calls), qlonglong(o.calls)));
        m_ops->setItem(i, 2, new Item(QString::number(o.allocations), qlonglong(o.allocations)));
        m_ops->setItem(i, 3, new Item(bytesText(o.allocatedBytes), o.allocatedBytes));
        m_ops->setItem(i, 4, new Item(QString::number(o.frees), qlonglong(o.frees)));
        m_ops->setItem(i, 5, new Item(bytesText(o.freedBytes), o.freedBytes));
        m_ops->setItem(i, 6, new Item(bytesText(o.selfIncrease), o.selfIncrease));
        m_ops->setItem(i, 7, new Item(bytesText(o.totalIncrease), o.totalIncrease));
    }
    m_ops->setSortingEnabled(true);
    m_ops->resizeColumnsToContents();
    m_ops->sortByColumn(7, Qt::DescendingOrder);
    applyFilter();
}

void MemoryPanel::showAllocator(const DeviceMemory* d) {
    const model::AllocatorSnapshot* snap = m_trace ? m_trace->allocatorSnapshot() : nullptr;
    m_tabs->setTabEnabled(AllocatorTab, snap != nullptr);
    m_tabs->setTabEnabled(OperatorsTab, snap == nullptr);
    if (snap && m_grouping->currentIndex() == 0) {
        const QSignalBlocker block(m_grouping);
        m_grouping->setCurrentIndex(1); // a snapshot has stacks, not operators
    }
    if (d && !d->liveByCategory.empty() && m_grouping->currentIndex() != 3) {
        const QSignalBlocker block(m_grouping);
        m_grouping->setCurrentIndex(3); // a memory timeline has categories only
    }
    m_tabs->setTabEnabled(OperatorsTab, snap == nullptr && !(d && !d->liveByCategory.empty()));
    m_segments->setSnapshot(snap, d ? d->device : 0);
    if (!snap || !d || !d->allocator) {
        m_allocatorSummary->setText(tr("The allocator's segments are in allocator snapshots "
                                       "(torch.cuda.memory._dump_snapshot)."));
        return;
    }
    const analysis::AllocatorState& a = *d->allocator;
    QString s =
        tr("When the snapshot was taken: <b>%1</b> reserved in %2 segments (%3 large%4), "
           "<b>%5</b> allocated in %6 blocks%7.<br>Free inside segments %8: %9 in %10 "
           "segments holding no allocation (torch.cuda.empty_cache() would return "
           "them), %11 between allocations (fragments; the largest %12). "
           "expandable_segments: %13.")
            .arg(bytesText(a.reserved))
            .arg(a.segments)
            .arg(a.largeSegments)
            .arg(a.expandableSegments ? tr(", %1 expandable").arg(a.expandableSegments) : QString())
            .arg(bytesText(a.allocated))
            .arg(a.blocksAllocated)
            .arg(a.blocksPendingFree ? tr(" (+%1 pending free)").arg(a.blocksPendingFree)
                                     : QString())
            .arg(bytesText(a.inactiveBytes))
            .arg(bytesText(a.emptySegmentBytes))
            .arg(a.emptySegments)
            .arg(bytesText(a.fragmentBytes))
            .arg(bytesText(a.largestFragment))
            .arg(a.expandableSetting ? (*a.expandableSetting ? "True" : "False")
                                     : tr("not recorded"));
    for (const analysis::MemoryOom& o : d->ooms) {
        const auto f = snap->userFrame(o.stack);
        s += "<br><b>" + tr("Out of memory") + "</b>: " + bytesText(o.requested) +
             tr(" requested") +
             (o.deviceFree >= 0 ? tr(" with %1 free on the device").arg(bytesText(o.deviceFree))
                                : QString()) +
             (f ? " " + tr("at %1").arg(QString::fromStdString(snap->frameText(*f)).toHtmlEscaped())
                : QString());
    }
    m_allocatorSummary->setText(s);
}

/// A block of the Active blocks picture: what it is and, for a snapshot, its whole stack;
/// for a trace, its operator selected on the timeline.
void MemoryPanel::showBlock(int row) {
    const DeviceMemory* d = device();
    if (!d || row < 0 || size_t(row) >= d->rows.size()) return;
    const MemoryEventRow& e = d->rows[size_t(row)];
    QString text = m_active->blockText(row);
    if (const model::AllocatorSnapshot* snap = m_trace->allocatorSnapshot()) {
        for (uint32_t f : snap->stack(e.stack))
            text += "\n  " + QString::fromStdString(snap->frameText(f));
    } else if (e.op.valid()) {
        Q_EMIT eventRequested(e.op);
    }
    m_blockInfo->setText(text);
}

void MemoryPanel::fillLive() {
    const DeviceMemory* d = device();
    m_live->setSortingEnabled(false);
    m_live->setRowCount(0);
    if (!d) return;
    if (m_grouping->currentIndex() == 2) { // the largest blocks live at the peak, one by one
        m_live->setRowCount(int(d->largestAtPeak.size()));
        for (int i = 0; i < int(d->largestAtPeak.size()); ++i) {
            const size_t row = d->largestAtPeak[size_t(i)];
            const MemoryEventRow& e = d->rows[row];
            QString where = m_active->blockText(int(row));
            auto* name =
                new Item(where.section(" · ", 1, 1).isEmpty() ? where : where.section(" · ", 1, 1));
            QString stack;
            if (const model::AllocatorSnapshot* snap = m_trace->allocatorSnapshot())
                for (uint32_t f : snap->stack(e.stack))
                    stack += QString::fromStdString(snap->frameText(f)) + "\n";
            name->setToolTip(stack.isEmpty() ? where : where + "\n\n" + stack.trimmed());
            if (e.op.valid()) name->setData(kSliceRole, qulonglong(e.op.index()));
            m_live->setItem(i, 0, name);
            m_live->setItem(i, 1, new Item(bytesText(e.bytes), e.bytes));
            m_live->setItem(i, 2, new Item(QStringLiteral("1"), 1));
        }
        m_live->setSortingEnabled(true);
        m_live->sortByColumn(1, Qt::DescendingOrder);
        m_live->resizeColumnsToContents();
        return;
    }
    const int by = m_grouping->currentIndex();
    const auto& groups = by == 1 ? d->liveByFrame : by == 3 ? d->liveByCategory : d->liveByOperator;
    m_live->setRowCount(int(groups.size()));
    for (int i = 0; i < int(groups.size()); ++i) {
        const analysis::MemoryLiveGroup& g = groups[size_t(i)];
        auto* name = new Item(QString::fromStdString(g.name));
        if (g.example.valid()) name->setData(kSliceRole, qulonglong(g.example.index()));
        m_live->setItem(i, 0, name);
        m_live->setItem(i, 1, new Item(bytesText(g.bytes), g.bytes));
        m_live->setItem(i, 2, new Item(QString::number(g.blocks), qlonglong(g.blocks)));
    }
    m_live->setSortingEnabled(true);
    m_live->sortByColumn(1, Qt::DescendingOrder);
    m_live->resizeColumnsToContents();
}

void MemoryPanel::fillEvents() {
    const DeviceMemory* d = device();
    if (m_tabs->currentIndex() != EventsTab || d == m_eventsShown) return;
    m_eventsShown = d;
    m_eventsModel->set(m_trace.get(), d, m_analysis ? m_analysis->window.startNs : 0);
}

void MemoryPanel::applyFilter() {
    m_eventsProxy->setFilterFixedString(m_filter->text().trimmed());
}

extern const PanelInfo kPanelMemory{
    PanelId::Memory, "memory", QT_TRANSLATE_NOOP("MainWindow", "Memory"),
    [](MainWindow& mw) {
        auto* w = new MemoryPanel(&mw);
        TimelineView* tl = mw.timeline();
        QObject::connect(w, &MemoryPanel::eventRequested, tl,
                         [tl](model::SliceId s) { tl->selectSlice(s, true); });
        QObject::connect(w, &MemoryPanel::timeRequested, tl, [tl](int64_t ns) {
            // A few hundred microseconds around the time, the timeline's cursor there.
            const int64_t half =
                std::max<int64_t>(50'000, (tl->viewport().endNs() - tl->viewport().startNs) / 200);
            tl->zoomTo(ns - half, ns + half, 0);
        });
        return makePanel<MemoryPanel>(w, [](MemoryPanel& p, const PanelContext& c) {
            p.setData(c.trace().entry.trace, c.analysis());
        });
    },
    /*followsScope=*/true};

} // namespace stallscope::gui
