#include "findings_panel.h"

#include "stallscope/analysis/detector_catalogue.h"

#include "gui_text.h"

#include "idle_chart.h"
#include "theme.h"

#include <QApplication>
#include <QClipboard>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace stallscope::gui {

using namespace analysis;

namespace {

QIcon severityIcon(FindingSeverity s) {
    QPixmap pm(12, 12);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setBrush(Theme::current().severityColor(s));
    p.setPen(Qt::NoPen);
    p.drawEllipse(1, 1, 10, 10);
    return QIcon(pm);
}

QString html(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

/// Shares are of the step time when the window is made of steps, else of the window.
bool stepWindow(const AnalysisResult* a) {
    return !a || shareBase(*a) == "step time";
}
} // namespace

void FindingsModel::setAnalysis(std::shared_ptr<const AnalysisResult> analysis) {
    beginResetModel();
    m_analysis = std::move(analysis);
    endResetModel();
}

const Finding* FindingsModel::finding(int row) const {
    if (!m_analysis || row < 0 || row >= static_cast<int>(m_analysis->findings.size())) return nullptr;
    return &m_analysis->findings[static_cast<size_t>(row)];
}

int FindingsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_analysis ? 0 : static_cast<int>(m_analysis->findings.size());
}

int FindingsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

namespace {
/// A context finding (graph capture, compilation, graph breaks): what kind of trace this
/// is, not a saving (analysis::detectorCatalogue(): DetectorStage::Context).
bool isContext(const analysis::Finding& f) {
    return analysis::detectorEntry(f.kind).stage == analysis::DetectorStage::Context;
}
} // namespace

QVariant FindingsModel::data(const QModelIndex& index, int role) const {
    const Finding* f = finding(index.row());
    if (!f || !index.isValid()) return {};
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
        case Severity: return QString::fromStdString(std::string(severityName(f->severity)));
        case Title: return QString::fromStdString(f->title);
        // Context findings (what kind of trace this is) save nothing themselves.
        // A finding without a fix to replay saves nothing measured: it shows the idle time
        // charged to it instead ("idle 1.2 s"), never "0 ns".
        case Saving:
            return isContext(*f) ? tr("context")
                   : f->replayFix == analysis::Fix::Count
                       ? (f->idleNs > 0 ? tr("idle %1").arg(durationText(f->idleNs, 1)) : tr("—"))
                       : durationText(f->savingNs, 1);
        case Share:
            return isContext(*f) || f->replayFix == analysis::Fix::Count
                       ? QStringLiteral("—")
                       : QString::number(f->savingShare * 100, 'f', 1) + "%";
        default: return {};
        }
    }
    if (role == Qt::DecorationRole && index.column() == Severity) return severityIcon(f->severity);
    if (role == Qt::ToolTipRole) return QString::fromStdString(f->explanation);
    if (role == Qt::TextAlignmentRole && index.column() >= Saving) return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::UserRole) return qlonglong(f->savingNs);
    return {};
}

QVariant FindingsModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal) return {};
    if (role == Qt::ToolTipRole) {
        if (section == Saving)
            return tr("What the what-if replay predicts the fix saves; for a finding without a "
                      "fix to replay, the GPU idle time charged to it");
        if (section == Share)
            return stepWindow(m_analysis.get())
                       ? tr("The saving as a share of the step time: the steps of the analysed "
                            "window together, not one step")
                       : tr("The saving as a share of the analysed window");
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
    case Severity: return tr("Severity");
    case Title: return tr("Finding");
    case Saving: return tr("Saves");
    case Share: return stepWindow(m_analysis.get()) ? tr("of step time") : tr("of window");
    default: return {};
    }
}

FindingsPanel::FindingsPanel(QWidget* parent) : QWidget(parent) {
    m_model = new FindingsModel(this);
    m_view = new QTableView(this);
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->verticalHeader()->setDefaultSectionSize(24);
    m_view->setShowGrid(false);
    m_view->setWordWrap(false);
    m_view->setAlternatingRowColors(true);
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->horizontalHeader()->setSectionResizeMode(FindingsModel::Title, QHeaderView::Stretch);
    m_view->horizontalHeader()->setSectionResizeMode(FindingsModel::Severity, QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(FindingsModel::Saving, QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(FindingsModel::Share, QHeaderView::ResizeToContents);
    m_chart = new IdleChart(this);
    m_detail = new QTextBrowser(this);
    m_detail->setOpenLinks(false);
    m_copy = new QPushButton(tr("Copy fix snippet"), this);
    m_copy->setEnabled(false);
    auto* top = new QWidget(this);
    auto* tl = new QVBoxLayout(top);
    tl->setContentsMargins(0, 0, 0, 0);
    tl->setSpacing(4);
    tl->addWidget(m_view, 1);
    tl->addWidget(m_chart);
    auto* bottom = new QWidget(this);
    auto* bl = new QVBoxLayout(bottom);
    bl->setContentsMargins(0, 0, 0, 0);
    bl->setSpacing(4);
    bl->addWidget(m_detail, 1);
    bl->addWidget(m_copy, 0, Qt::AlignRight);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(bottom);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({290, 470});
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    l->addWidget(split);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& cur) { selectFinding(cur.isValid() ? cur.row() : -1); });
    connect(m_copy, &QPushButton::clicked, this, [this] {
        if (const Finding* f = m_model->finding(m_selected)) QApplication::clipboard()->setText(QString::fromStdString(f->snippet));
    });
    connect(m_detail, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() == "slice") Q_EMIT evidenceActivated(model::SliceId(url.path().toUInt()));
    });
}

void FindingsPanel::setData(std::shared_ptr<const model::Trace> trace, std::shared_ptr<const AnalysisResult> analysis) {
    m_trace = std::move(trace);
    m_analysis = analysis;
    m_model->setAnalysis(analysis);
    m_selected = -1;
    if (m_analysis && m_analysis->devices.empty() && m_analysis->hostOnly)
        m_chart->setHostOnly(&*m_analysis->hostOnly);  // CPU only: the step thread's time by cause
    else
        m_chart->setDevice(m_analysis && !m_analysis->devices.empty() ? &m_analysis->devices.front() : nullptr);
    m_chart->setVisible(m_analysis && (!m_analysis->devices.empty() || m_analysis->hostOnly));
    // Memory only (an allocator snapshot, a memory timeline): no GPU activity to find in.
    const bool memoryOnly =
        m_trace && m_trace->slices().size() == 0 && !m_trace->memorySamples().empty();
    m_detail->setHtml(m_analysis && m_analysis->findings.empty()
                          ? memoryOnly
                                ? tr("<p>This file holds GPU memory (an allocator snapshot or "
                                     "a memory timeline), not GPU activity: its figures and "
                                     "advice are in the Memory tab.</p>")
                                : tr("<p>No findings: nothing in this window costs measurable "
                                     "GPU time.</p>")
                          : tr("<p style='color:gray'>Select a finding to see why it happens and "
                               "how to fix it.</p>"));
    m_copy->setEnabled(false);
}

void FindingsPanel::selectFinding(int row) {
    if (row == m_selected) return;
    m_selected = row;
    if (m_view->currentIndex().row() != row) {
        QSignalBlocker b(m_view->selectionModel());
        if (row >= 0) m_view->selectRow(row);
        else m_view->clearSelection();
    }
    if (const Finding* f = m_model->finding(row); f && f->device >= 0 && m_analysis)
        for (const auto& d : m_analysis->devices)
            if (d.device == f->device) m_chart->setDevice(&d);
    showDetail(row);
    Q_EMIT findingSelected(row);
}

void FindingsPanel::showDetail(int row) {
    const Finding* f = m_model->finding(row);
    m_copy->setEnabled(f && !f->snippet.empty());
    if (!f || !m_trace) return;
    const QString color = Theme::current().severityColor(f->severity).name();
    QString h;
    h += QString("<h3 style='margin-bottom:2px'>%1</h3>").arg(html(f->title));
    if (isContext(*f))
        h += QString("<p style='margin-top:0'><span style='color:%1;font-weight:bold'>%2</span> · "
                     "about the trace, "
                     "said before any timing finding · confidence %3% · <span "
                     "style='color:gray'>%4</span></p>")
                 .arg(color,
                      QString::fromStdString(std::string(severityName(f->severity))).toUpper(),
                      QString::number(int(f->confidence * 100)), html(f->id));
    else
        h +=
            QString("<p style='margin-top:0'><span style='color:%1;font-weight:bold'>%2</span> · "
                    "<b>%3</b> · confidence %4% · <span style='color:gray'>%5</span></p>")
                .arg(
                    color, QString::fromStdString(std::string(severityName(f->severity))).toUpper(),
                    html(savingText(*f, stepWindow(m_analysis.get()) ? "step time" : "the window")),
                    QString::number(int(f->confidence * 100)), html(f->id));
    h += "<p>" + html(f->explanation) + "</p>";
    h += waterfallHtml(*f);
    if (!f->waitedFor.empty()) {
        h += "<p><b>What the GPU waited for</b></p><table cellspacing='0' cellpadding='2'>";
        for (const auto& [name, ns] : f->waitedFor)
            h += QString("<tr><td align='right' style='padding-right:10px'>%1</td><td><code>%2</code></td></tr>")
                     .arg(durationText(ns, 1), html(name.size() > 120 ? name.substr(0, 117) + "..." : name));
        h += "</table>";
    }
    h += "<p><b>Fix</b><br>" + html(f->fix) + "</p>";
    if (!f->snippet.empty())
        h += QString("<pre style='background:%1;padding:6px'>%2</pre>")
                 .arg(Theme::current().dark ? "#2b2d31" : "#f2f4f7", html(f->snippet));
    if (!f->evidence.empty()) {
        h += "<p><b>Evidence</b> (click to show on the timeline)<br>";
        const auto& s = m_trace->slices();
        for (size_t i = 0; i < f->evidence.size() && i < 12; ++i) {
            const uint32_t e = f->evidence[i].index();
            std::string n(m_trace->str(s.name[e]));
            if (n.size() > 90) n = n.substr(0, 87) + "...";
            h += QString("<a href='slice:%1'>%2</a> <span style='color:gray'>(%3)</span><br>").arg(e).arg(html(n), durationText(s.dur[e], 1));
        }
        h += "</p>";
    }
    m_detail->setHtml(h);
}

QString FindingsPanel::waterfallHtml(const Finding& f) const {
    const analysis::Waterfall* wf = nullptr;
    for (const auto& w : m_analysis->waterfalls)
        if (w.device == f.device && !w.bars.empty()) wf = &w;
    if (!wf) return {};
    const bool dark = Theme::current().dark;
    const QString rest = dark ? "#3a3d42" : "#e8ebef";
    QString h =
        "<p><b>What the fixes would give</b> <span style='color:gray'>(what-if replay; each line "
        "includes the ones above)</span></p><table cellspacing='0' cellpadding='2' width='100%'>";
    const double full = double(std::max<int64_t>(1, wf->measuredNs));
    auto row = [&](const QString& label, int64_t ns, bool current, bool first) {
        const int pctW = std::clamp(int(std::lround(100.0 * double(ns) / full)), 1, 100);
        const QString color = first     ? "#9aa5b1"
                              : current ? Theme::current().severityColor(f.severity).name()
                                        : "#4c9a6a";
        h +=
            QString(
                "<tr><td width='40%'>%1</td><td width='45%'><table cellspacing='0' cellpadding='0' "
                "width='100%'><tr><td width='%2%' bgcolor='%3' "
                "height='12'></td>%4</tr></table></td>"
                "<td align='right'>%5 <span style='color:gray'>%6%</span></td></tr>")
                .arg(current ? "<b>" + label + "</b>" : label)
                .arg(pctW)
                .arg(color)
                .arg(pctW < 100 ? QString("<td bgcolor='%1'></td>").arg(rest) : QString())
                .arg(durationText(ns, 1))
                .arg(QString::number(100.0 * double(ns) / full, 'f', 1));
    };
    row(tr("measured"), wf->measuredNs, false, true);
    for (const auto& b : wf->bars)
        row("+ " + html(std::string(analysis::fixDescription(b.fix))), b.windowNs,
            b.findingId == f.id, false);
    return h + "</table>";
}

} // namespace stallscope::gui
