#include "modules_panel.h"

#include "gui_text.h"
#include "main_window.h"
#include "panel.h"
#include "panel_id.h"
#include "timeline/timeline_view.h"

#include "stallscope/base/atomic_file.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace stallscope::gui {

namespace {
constexpr int kSliceRole = Qt::UserRole;
constexpr int kSortRole = Qt::UserRole + 1;

/// Sorts numeric columns by their value, the name column by its text.
class ModuleItem : public QTreeWidgetItem {
public:
    using QTreeWidgetItem::QTreeWidgetItem;
    bool operator<(const QTreeWidgetItem& other) const override {
        const int c = treeWidget() ? treeWidget()->sortColumn() : 0;
        if (c == ModulesPanel::Name) return text(c) < other.text(c);
        return data(c, kSortRole).toLongLong() < other.data(c, kSortRole).toLongLong();
    }
};
} // namespace

ModulesPanel::ModulesPanel(QWidget* parent) : QWidget(parent) {
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName("moduleTree");
    m_tree->setColumnCount(ColumnCount);
    m_tree->setHeaderLabels({tr("Module"), tr("Occurrences"), tr("Operators"), tr("Host total"),
                             tr("Host self"), tr("Device total"), tr("Device self")});
    const QStringList tips{
        tr("nn.Module ranges (recorded with with_stack=True), nested as they ran; modules of the "
           "same name "
           "under the same parent are one row."),
        tr("Times the module ran in the analysis window."),
        tr("CPU operators that ran inside it and not inside a child module (nested operators count "
           "too)."),
        tr("Wall time of its forward calls on the CPU, children included."),
        tr("Host total minus the child modules' time."),
        tr("GPU time (kernels, copies, memsets) launched from inside it, at any depth."),
        tr("GPU time launched with no child module in between.")};
    for (int c = 0; c < ColumnCount; ++c) m_tree->headerItem()->setToolTip(c, tips[c]);
    m_tree->setAlternatingRowColors(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setSortingEnabled(true);
    m_tree->sortByColumn(HostTotal, Qt::DescendingOrder);
    m_tree->header()->setSectionResizeMode(Name, QHeaderView::Stretch);
    m_tree->header()->setStretchLastSection(false);
    connect(m_tree, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* it) {
        const QVariant v = it ? it->data(Name, kSliceRole) : QVariant();
        if (v.isValid())
            Q_EMIT eventRequested(model::SliceId(static_cast<uint32_t>(v.toULongLong())));
    });
    auto* exportCsv = new QPushButton(tr("Export CSV…"), this);
    exportCsv->setObjectName("exportCsv");
    exportCsv->setToolTip(
        tr("Save every module (its path of names, then raw values: times in nanoseconds) "
           "as CSV."));
    connect(exportCsv, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Export CSV"), QString(), tr("CSV (*.csv)"));
        if (path.isEmpty()) return;
        if (const base::Status st =
                base::writeFileAtomically(path.toStdString(), csv().toStdString());
            !st)
            QMessageBox::warning(this, tr("Export CSV"),
                                 QString::fromStdString(st.error().message));
    });
    auto* bar = new QHBoxLayout;
    bar->addWidget(exportCsv, 0, Qt::AlignTop);
    bar->addWidget(m_summary, 1);
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(6, 5, 6, 0);
    l->addLayout(bar);
    l->addWidget(m_tree, 1);
}

void ModulesPanel::setData(std::shared_ptr<const model::Trace> trace,
                           std::shared_ptr<const analysis::AnalysisResult> analysis) {
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_dirty = true;
    if (isVisible()) rebuild();
}

const analysis::ModuleTree& ModulesPanel::modules() {
    if (m_dirty) rebuild();
    return m_modules;
}

QString ModulesPanel::csv() {
    const analysis::ModuleTree& m = modules();
    QString out =
        QStringLiteral("Path,Module,Depth,Occurrences,Operators,Host total ns,Host self ns,"
                       "Device total ns,Device self ns\r\n");
    std::vector<std::pair<int32_t, QString>> stack; // depth first, in the tree's order
    for (auto it = m.roots.rbegin(); it != m.roots.rend(); ++it) stack.emplace_back(*it, QString());
    while (!stack.empty()) {
        const auto [node, above] = stack.back();
        stack.pop_back();
        const analysis::ModuleNode& n = m.nodes[size_t(node)];
        const QString name = QString::fromStdString(n.name);
        const QString path = above.isEmpty() ? name : above + QStringLiteral(" > ") + name;
        out += csvField(path) + QLatin1Char(',') + csvField(name) + QLatin1Char(',') +
               QString::number(n.depth) + QLatin1Char(',') + QString::number(n.occurrences) +
               QLatin1Char(',') + QString::number(n.operators) + QLatin1Char(',') +
               QString::number(n.hostTotalNs) + QLatin1Char(',') + QString::number(n.hostSelfNs) +
               QLatin1Char(',') + QString::number(n.deviceTotalNs) + QLatin1Char(',') +
               QString::number(n.deviceSelfNs) + QStringLiteral("\r\n");
        for (auto c = n.children.rbegin(); c != n.children.rend(); ++c)
            stack.emplace_back(*c, path);
    }
    return out;
}

void ModulesPanel::showEvent(QShowEvent* e) {
    if (m_dirty) rebuild();
    QWidget::showEvent(e);
}

QTreeWidgetItem* ModulesPanel::item(int node, QTreeWidgetItem* parent) {
    const analysis::ModuleNode& n = m_modules.nodes[size_t(node)];
    auto* it = parent ? new ModuleItem(parent) : new ModuleItem(m_tree);
    it->setText(Name, QString::fromStdString(n.name));
    it->setData(Name, kSliceRole, qulonglong(n.example.value));
    auto number = [&](int c, qlonglong v, const QString& text) {
        it->setText(c, text);
        it->setData(c, kSortRole, v);
        it->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    };
    number(Occurrences, qlonglong(n.occurrences), QLocale().toString(qulonglong(n.occurrences)));
    number(Operators, qlonglong(n.operators), QLocale().toString(qulonglong(n.operators)));
    number(HostTotal, n.hostTotalNs, durationText(n.hostTotalNs, 2));
    number(HostSelf, n.hostSelfNs, durationText(n.hostSelfNs, 2));
    number(DeviceTotal, n.deviceTotalNs, durationText(n.deviceTotalNs, 2));
    number(DeviceSelf, n.deviceSelfNs, durationText(n.deviceSelfNs, 2));
    for (int32_t c : n.children) item(c, it);
    return it;
}

void ModulesPanel::rebuild() {
    m_dirty = false;
    m_tree->clear();
    m_modules = m_trace && m_analysis ? analysis::buildModuleTree(*m_trace, *m_analysis)
                                      : analysis::ModuleTree{};
    if (!m_trace || !m_analysis) {
        m_summary->setText(tr("No trace loaded"));
        return;
    }
    if (m_modules.empty()) {
        m_summary->setText(
            tr("This trace has no nn.Module ranges in the analysis window. Profile with "
               "torch.profiler.profile(with_stack=True) (PyTorch 1.13 or later records them) "
               "to see the module hierarchy with its host and device time."));
        return;
    }
    m_tree->setSortingEnabled(false);
    for (int32_t r : m_modules.roots) item(r, nullptr);
    m_tree->setSortingEnabled(true);
    m_tree->expandToDepth(1);
    for (int c = 1; c < ColumnCount; ++c) m_tree->resizeColumnToContents(c);
    int64_t host = 0, device = 0;
    for (int32_t r : m_modules.roots) {
        host += m_modules.nodes[size_t(r)].hostTotalNs;
        device += m_modules.nodes[size_t(r)].deviceTotalNs;
    }
    QString text = tr("%1 modules (%2 at the top): host %3, device %4 launched inside them · %5")
                       .arg(m_modules.nodes.size())
                       .arg(m_modules.roots.size())
                       .arg(durationText(host, 2), durationText(device, 2),
                            QString::fromStdString(m_analysis->window.description));
    if (m_modules.outsideNs > 0)
        text += tr(" · %1 of the GPU time (%2 %) was launched outside any module%3")
                    .arg(durationText(m_modules.outsideNs, 2))
                    .arg(QString::number(100.0 * double(m_modules.outsideNs) /
                                             double(std::max<int64_t>(1, m_modules.deviceNs)),
                                         'f', 1))
                    .arg(m_modules.backward ? tr(" (the backward pass runs outside module ranges)")
                                            : QString());
    m_summary->setText(text);
}

extern const PanelInfo kPanelModules{
    PanelId::Modules, "modules", QT_TRANSLATE_NOOP("MainWindow", "Modules"),
    [](MainWindow& mw) {
        auto* w = new ModulesPanel(&mw);
        TimelineView* tl = mw.timeline();
        QObject::connect(w, &ModulesPanel::eventRequested, tl,
                         [tl](model::SliceId s) { tl->selectSlice(s, true); });
        return makePanel<ModulesPanel>(w, [](ModulesPanel& p, const PanelContext& c) {
            p.setData(c.trace().entry.trace, c.analysis());
        });
    },
    /*followsScope=*/true};

} // namespace stallscope::gui
