#include "stats_panel.h"

#include "stallscope/base/atomic_file.h"
#include "stallscope/base/demangle.h"

#include "gui_text.h"
#include "share_bar_delegate.h"
#include "stats_models.h"
#include "theme.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace stallscope::gui {

namespace {
constexpr int kWidthSampleRows = 200;  // rows measured when sizing a numeric column
constexpr int kShareColumnMinWidth = 110;
constexpr int kMaxColumnWidth = 420;
} // namespace

StatsPanel::StatsPanel(QWidget* parent) : QWidget(parent) {
    m_tabs = new QTabWidget(this);
    m_tabs->setDocumentMode(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_tabs);

    using model::EventKind;
    m_tabs->addTab(buildPage(KernelsTab, new KernelStatsModel(this), EventKind::Kernel), tr("Kernels"));
    m_tabs->addTab(
        buildPage(KernelsByOperatorTab, new KernelOperatorStatsModel(this), EventKind::Kernel),
        tr("Kernels by operator"));
    m_tabs->addTab(buildPage(OperatorsTab, new OperatorStatsModel(this), EventKind::CpuOp), tr("Operators"));
    m_tabs->addTab(buildPage(CopiesTab, new CopyStatsModel(this), EventKind::Memcpy), tr("Copies"));
    m_tabs->addTab(buildPage(RuntimeTab, new RuntimeStatsModel(this), EventKind::Runtime), tr("Runtime calls"));
    m_tabs->addTab(
        buildPage(CollectivesTab, new CollectiveStatsModel(this), EventKind::Communication),
        tr("Collectives"));
    m_tabs->setTabToolTip(KernelsTab, tr("GPU kernels by name"));
    m_tabs->setTabToolTip(KernelsByOperatorTab,
                          tr("GPU kernels by the CPU operator that launched them"));
    m_tabs->setTabToolTip(OperatorsTab,
                          tr("CPU operators by name, input shapes or call stack, with the GPU "
                             "time they launched"));
    m_tabs->setTabToolTip(CopiesTab, tr("Memory copies by direction and memory kinds"));
    m_tabs->setTabToolTip(RuntimeTab, tr("CUDA runtime and driver calls by name"));
    m_tabs->setTabToolTip(CollectivesTab,
                          tr("Collective communication by type: calls, message sizes, "
                             "bandwidth, and how much of it overlapped computation"));

    // The Operators tab groups by name, by name and input shapes, or by name and call stack.
    m_grouping = new QComboBox(this);
    m_grouping->setObjectName("operatorGrouping");
    m_grouping->addItem(tr("Group by name"));
    m_grouping->addItem(tr("Group by name + input shapes"));
    m_grouping->addItem(tr("Group by name + call stack"));
    m_grouping->setToolTip(
        tr("Input shapes need record_shapes=True, call stacks with_stack=True when "
           "profiling; they are read from the trace when chosen."));
    m_pages[OperatorsTab].bar->insertWidget(1, m_grouping);
    m_pages[OperatorsTab].view->setColumnHidden(OperatorStatsModel::Detail, true);
    connect(m_grouping, &QComboBox::currentIndexChanged, this, &StatsPanel::regroupOperators);
    for (int t = 0; t < TabCount; ++t) updateSummary(t);
}

QWidget* StatsPanel::buildPage(int tab, StatsTableModel* source, model::EventKind barKind) {
    Page& p = m_pages[size_t(tab)];
    auto* page = new QWidget(m_tabs);
    p.model = source;

    p.filter = new QLineEdit(page);
    p.filter->setPlaceholderText(tr("Filter by name"));
    p.filter->setClearButtonEnabled(true);
    p.filter->setFixedWidth(fontMetrics().horizontalAdvance(QLatin1Char('M')) * 22);
    p.filter->setToolTip(tr("Show only rows whose name contains this text (case-insensitive). Esc clears."));
    p.filter->installEventFilter(this);
    p.summary = new QLabel(page);
    p.summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    p.summary->setWordWrap(true); // the collectives' overlap per GPU makes it long
    p.window = new QLabel(page);
    p.window->setToolTip(tr("The statistics cover the analysis window: events that start inside it."));

    auto* exportCsv = new QPushButton(tr("Export CSV…"), page);
    exportCsv->setObjectName("exportCsv");
    exportCsv->setToolTip(tr("Save the rows shown (filtered, sorted) as CSV: names as written, "
                             "times in nanoseconds, shares in percent."));
    connect(exportCsv, &QPushButton::clicked, this, [this, tab] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export CSV"), QString(), tr("CSV (*.csv)"));
        if (path.isEmpty()) return;
        const base::Status st =
            base::writeFileAtomically(path.toStdString(), csv(tab).toStdString());
        if (!st)
            QMessageBox::warning(this, tr("Export CSV"),
                                 QString::fromStdString(st.error().message));
    });

    auto* bar = p.bar = new QHBoxLayout;
    bar->setContentsMargins(6, 5, 8, 5);
    bar->setSpacing(12);
    bar->addWidget(p.filter);
    bar->addWidget(exportCsv);
    bar->addWidget(p.summary, 1);
    bar->addWidget(p.window);

    p.proxy = new QSortFilterProxyModel(page);
    p.proxy->setSourceModel(source);
    p.proxy->setSortRole(SortRole);
    p.proxy->setFilterKeyColumn(StatsTableModel::nameColumn());
    p.proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    p.proxy->setSortCaseSensitivity(Qt::CaseInsensitive);

    QTableView* v = p.view = new QTableView(page);
    v->setModel(p.proxy);
    v->setItemDelegate(new ShareBarDelegate(barKind, v));
    v->setFrameShape(QFrame::NoFrame);
    v->setShowGrid(false);
    v->setAlternatingRowColors(true);
    v->setWordWrap(false);
    v->setTextElideMode(Qt::ElideRight);
    v->setSelectionBehavior(QAbstractItemView::SelectRows);
    v->setSelectionMode(QAbstractItemView::ExtendedSelection);
    v->setEditTriggers(QAbstractItemView::NoEditTriggers);
    v->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    v->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    v->setCornerButtonEnabled(false);
    v->verticalHeader()->hide();
    v->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    v->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    QHeaderView* h = v->horizontalHeader();
    h->setHighlightSections(false);
    h->setSectionsMovable(true);
    h->setStretchLastSection(false);
    h->setMinimumSectionSize(40);
    h->setDefaultAlignment(Qt::AlignRight | Qt::AlignVCenter);
    h->setSectionResizeMode(QHeaderView::Interactive);
    h->setSectionResizeMode(StatsTableModel::nameColumn(), QHeaderView::Stretch);
    v->setSortingEnabled(true);
    v->sortByColumn(source->defaultSortColumn(), Qt::DescendingOrder);
    v->installEventFilter(this);

    connect(v, &QTableView::doubleClicked, this, &StatsPanel::request);
    connect(p.filter, &QLineEdit::textChanged, this, [this, tab](const QString& text) {
        m_pages[size_t(tab)].proxy->setFilterFixedString(text);
        updateSummary(tab);
    });

    auto* layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addWidget(v, 1);
    return page;
}

void StatsPanel::setData(std::shared_ptr<const model::Trace> trace,
                         std::shared_ptr<const analysis::AnalysisResult> analysis) {
    const QString window = analysis && trace ? QString::fromStdString(analysis->window.description) : QString();
    for (int t = 0; t < TabCount; ++t) {
        Page& p = m_pages[size_t(t)];
        p.model->setData(trace, analysis);
        p.window->setText(window.isEmpty() ? QString() : tr("Window: %1").arg(window));
        QPalette muted = p.window->palette();
        muted.setColor(QPalette::WindowText, Theme::current().mutedText);  // the theme may have changed
        p.window->setPalette(muted);
        p.filter->setEnabled(trace && analysis);
        fitColumns(t);
        updateSummary(t);
    }
}

bool StatsPanel::showRowOf(const model::Trace& trace, model::SliceId slice) {
    if (!slice.valid() || slice.index() >= trace.slices().size()) return false;
    using model::EventKind;
    const EventKind k = trace.slices().kind[slice.index()];
    int tab = -1;
    if (k == EventKind::Kernel)
        tab = KernelsTab;
    else if (k == EventKind::CpuOp)
        tab = OperatorsTab;
    else if (k == EventKind::Runtime || k == EventKind::Driver)
        tab = RuntimeTab;
    if (tab < 0) return false;
    if (tab == OperatorsTab) m_grouping->setCurrentIndex(0); // one row per name
    const Page& p = m_pages[size_t(tab)];
    p.filter->clear();
    const std::string_view raw = trace.str(trace.slices().name[slice.index()]);
    QString name = QString::fromUtf8(raw.data(), static_cast<qsizetype>(raw.size()));
    if (tab == KernelsTab)
        name = QString::fromStdString(base::demangle(raw)); // as the table shows it
    for (int r = 0; r < p.proxy->rowCount(); ++r) {
        const QModelIndex i = p.proxy->index(r, StatsTableModel::nameColumn());
        if (i.data().toString() != name) continue;
        m_tabs->setCurrentIndex(tab);
        p.view->setCurrentIndex(i);
        p.view->selectRow(r);
        p.view->scrollTo(i);
        return true;
    }
    return false;
}

void StatsPanel::regroupOperators(int index) {
    auto* m = static_cast<OperatorStatsModel*>(m_pages[OperatorsTab].model);
    const auto g = static_cast<analysis::OperatorGrouping>(std::clamp(index, 0, 2));
    QApplication::setOverrideCursor(Qt::WaitCursor);
    m->setGrouping(g);
    QApplication::restoreOverrideCursor();
    QTableView* v = m_pages[OperatorsTab].view;
    v->setColumnHidden(OperatorStatsModel::Detail, g == analysis::OperatorGrouping::Name);
    fitColumns(OperatorsTab);
    updateSummary(OperatorsTab);
}

QTableView* StatsPanel::view(int tab) const { return m_pages.at(size_t(tab)).view; }
QString StatsPanel::csv(int tab) const {
    const QSortFilterProxyModel* m = proxy(tab);
    const QTableView* v = view(tab);
    std::vector<int> columns; // the columns shown, in the model's order
    for (int c = 0; c < m->columnCount(); ++c)
        if (!v->isColumnHidden(c)) columns.push_back(c);
    QString out;
    for (size_t i = 0; i < columns.size(); ++i)
        out += (i ? "," : "") + csvField(m->headerData(columns[i], Qt::Horizontal).toString());
    out += "\r\n";
    for (int r = 0; r < m->rowCount(); ++r) {
        for (size_t i = 0; i < columns.size(); ++i) {
            const QVariant raw = m->index(r, columns[i]).data(SortRole);
            out += (i ? "," : "") + csvField(raw.isValid()
                                                 ? raw.toString()
                                                 : m->index(r, columns[i]).data().toString());
        }
        out += "\r\n";
    }
    return out;
}

QLineEdit* StatsPanel::filter(int tab) const { return m_pages.at(size_t(tab)).filter; }
QAbstractItemModel* StatsPanel::model(int tab) const { return m_pages.at(size_t(tab)).model; }
QSortFilterProxyModel* StatsPanel::proxy(int tab) const { return m_pages.at(size_t(tab)).proxy; }
QLabel* StatsPanel::summary(int tab) const { return m_pages.at(size_t(tab)).summary; }

void StatsPanel::fitColumns(int tab) {
    const Page& p = m_pages[size_t(tab)];
    QHeaderView* h = p.view->horizontalHeader();
    const QFontMetrics fm = p.view->fontMetrics();
    const QFontMetrics hfm = h->fontMetrics();
    const int rows = std::min(p.proxy->rowCount(), kWidthSampleRows);
    for (int c = 0; c < p.proxy->columnCount(); ++c) {
        if (c == StatsTableModel::nameColumn()) continue;
        // Header text plus room for the sort arrow, or the widest of the biggest values.
        int w = hfm.horizontalAdvance(p.proxy->headerData(c, Qt::Horizontal).toString()) + 26;
        for (int r = 0; r < rows; ++r)
            w = std::max(w, fm.horizontalAdvance(p.proxy->index(r, c).data().toString()) + 16);
        if (rows > 0 && p.proxy->index(0, c).data(BarRole).isValid()) w = std::max(w, kShareColumnMinWidth);
        p.view->setColumnWidth(c, std::min(w, kMaxColumnWidth)); // shapes and stacks can be long
    }
}

void StatsPanel::updateSummary(int tab) {
    const Page& p = m_pages[size_t(tab)];
    std::vector<int> rows;
    rows.reserve(size_t(p.proxy->rowCount()));
    for (int r = 0; r < p.proxy->rowCount(); ++r) rows.push_back(p.proxy->mapToSource(p.proxy->index(r, 0)).row());
    const bool filtered = !p.filter->text().isEmpty();
    p.summary->setText(p.model->summary(rows, filtered));
}

void StatsPanel::request(const QModelIndex& proxyIndex) {
    if (!proxyIndex.isValid()) return;
    const QVariant v = proxyIndex.siblingAtColumn(StatsTableModel::nameColumn()).data(ExampleSliceRole);
    if (v.isValid()) Q_EMIT eventRequested(model::SliceId(static_cast<uint32_t>(v.toULongLong())));
}

void StatsPanel::copySelection(int tab) const {
    const Page& p = m_pages[size_t(tab)];
    QModelIndexList rows = p.view->selectionModel()->selectedRows();
    std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    QStringList lines;
    QStringList cells;
    for (int c = 0; c < p.proxy->columnCount(); ++c) cells << p.proxy->headerData(c, Qt::Horizontal).toString();
    lines << cells.join(QLatin1Char('\t'));
    for (const QModelIndex& r : rows) {
        cells.clear();
        for (int c = 0; c < p.proxy->columnCount(); ++c) cells << r.siblingAtColumn(c).data().toString();
        lines << cells.join(QLatin1Char('\t'));
    }
    QApplication::clipboard()->setText(lines.join(QLatin1Char('\n')) + QLatin1Char('\n'));
}

int StatsPanel::pageOf(const QObject* widget) const {
    for (int t = 0; t < TabCount; ++t)
        if (m_pages[size_t(t)].view == widget || m_pages[size_t(t)].filter == widget) return t;
    return -1;
}

bool StatsPanel::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::KeyPress) return QWidget::eventFilter(watched, event);
    const int tab = pageOf(watched);
    if (tab < 0) return QWidget::eventFilter(watched, event);
    const Page& p = m_pages[size_t(tab)];
    auto* key = static_cast<QKeyEvent*>(event);
    if (watched == p.view) {
        if (key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            request(p.view->currentIndex());
            return true;
        }
        if (key->matches(QKeySequence::Copy)) {
            copySelection(tab);
            return true;
        }
    } else if (watched == p.filter) {
        if (key->key() == Qt::Key_Escape && !p.filter->text().isEmpty()) {
            p.filter->clear();
            return true;
        }
        if (key->key() == Qt::Key_Down || key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) {
            // From the filter to the first matching row.
            p.view->setFocus();
            if (!p.view->currentIndex().isValid() && p.proxy->rowCount() > 0)
                p.view->setCurrentIndex(p.proxy->index(0, 0));
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace stallscope::gui
