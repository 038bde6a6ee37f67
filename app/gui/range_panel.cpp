#include "range_panel.h"

#include "gui_text.h"

#include "stallscope/analysis/gpu_metrics.h"
#include "theme.h"

#include <QHBoxLayout>
#include <QPushButton>
#include <QTextBrowser>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace stallscope::gui {

using namespace model;

namespace {

std::vector<std::pair<std::string, int64_t>> top(const std::map<StringId, int64_t>& m, const Trace& t, size_t n) {
    std::vector<std::pair<std::string, int64_t>> v;
    for (const auto& [id, ns] : m) v.emplace_back(std::string(t.str(id)), ns);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (v.size() > n) v.resize(n);
    return v;
}
} // namespace

RangeStats computeRangeStats(const Trace& t, const analysis::AnalysisResult* a, int64_t lo, int64_t hi) {
    RangeStats r;
    r.startNs = lo;
    r.endNs = hi;
    const SliceTable& s = t.slices();
    std::map<int32_t, bool> devices;
    std::map<StringId, int64_t> kernels, ops;
    for (uint32_t ti = 0; ti < t.tracks().size(); ++ti) {
        const TrackInfo& tr = t.tracks()[ti];
        const bool gpu = tr.kind == TrackKind::GpuStream;
        if (gpu) devices[t.process(tr.process).gpuDevice] = true;
        if (!gpu && tr.kind != TrackKind::CpuThread) continue;
        const uint32_t last = t.firstSliceStartingAfter(TrackId(ti), hi);
        for (uint32_t i = t.firstSliceEndingAtOrAfter(TrackId(ti), lo); i < last; ++i) {
            const int64_t clipped = std::min(hi, s.start[i] + s.dur[i]) - std::max(lo, s.start[i]);
            if (clipped <= 0) continue;
            if (gpu && s.kind[i] == EventKind::Kernel) kernels[s.name[i]] += clipped;
            else if (!gpu && s.kind[i] == EventKind::CpuOp) ops[s.name[i]] += clipped;
        }
    }
    for (const auto& [dev, unused] : devices) {
        (void)unused;
        RangeStats::Device d;
        d.device = dev;
        d.busyNs = model::lengthWithin(model::gpuBusyIntervals(t, dev, false), lo, hi);
        if (a)
            for (const auto& dm : a->devices)
                if (dm.device == dev)
                    for (size_t k = 0; k < analysis::kIdleCauseCount; ++k)
                        d.idleByCause[k] = model::lengthWithin(dm.idle.intervals[k], lo, hi);
        r.devices.push_back(d);
    }
    r.kernels = top(kernels, t, 12);
    r.operators = top(ops, t, 12);
    return r;
}

RangePanel::RangePanel(QWidget* parent) : QWidget(parent), m_browser(new QTextBrowser(this)) {
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    m_analyse = new QPushButton(tr("Analyse this range"), this);
    m_analyse->setObjectName("analyseRange");
    m_analyse->setToolTip(
        tr("Re-analyse with this range as the window: the findings, idle causes, statistics "
           "and flame graph become the range's. The toolbar names the scope."));
    m_analyse->setEnabled(false);
    connect(m_analyse, &QPushButton::clicked, this, [this] {
        if (m_hi > m_lo) Q_EMIT scopeRequested(m_lo, m_hi);
    });
    auto* row = new QHBoxLayout;
    row->addWidget(m_analyse);
    row->addStretch(1);
    l->addLayout(row);
    l->addWidget(m_browser);
    m_browser->setHtml(tr("<p style='color:gray'>Drag across the time ruler, or Shift+drag on the tracks, to select a "
                          "time range and see what happened inside it.</p>"));
}

void RangePanel::setData(std::shared_ptr<const Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis) {
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_lo = m_hi = 0;
    m_analyse->setEnabled(false);
}

void RangePanel::showRange(int64_t lo, int64_t hi) {
    if (!m_trace || hi <= lo) return;
    m_lo = lo;
    m_hi = hi;
    m_analyse->setEnabled(true);
    m_stats = computeRangeStats(*m_trace, m_analysis.get(), lo, hi);
    const int64_t len = hi - lo;
    const int64_t origin = m_analysis ? m_analysis->window.startNs : m_trace->startNs();
    QString h = tr("<h3 style='margin-bottom:2px'>Range %1 … %2 (%3)</h3>").arg(durationText(lo - origin, 2), durationText(hi - origin, 2), durationText(len, 2));
    for (const auto& d : m_stats.devices) {
        h += QString("<p><b>GPU %1</b>: busy %2 (%3%), idle %4</p>")
                 .arg(d.device)
                 .arg(durationText(d.busyNs, 2), QString::number(100.0 * double(d.busyNs) / double(len), 'f', 1), durationText(len - d.busyNs, 2));
        QString causes;
        for (size_t k = 0; k < analysis::kIdleCauseCount; ++k)
            if (d.idleByCause[k] > 0)
                causes += QString("<tr><td><span style='color:%1'>■</span> %2</td><td align='right'>%3</td></tr>")
                              .arg(Theme::current().causeColor(static_cast<analysis::IdleCause>(k)).name(),
                                   QString::fromStdString(std::string(analysis::idleCauseName(static_cast<analysis::IdleCause>(k)))),
                                   durationText(d.idleByCause[k], 2));
        if (!causes.isEmpty()) h += "<table cellspacing='0' cellpadding='1'>" + causes + "</table>";
    }
    auto table = [&](const QString& title, const std::vector<std::pair<std::string, int64_t>>& rows) {
        if (rows.empty()) return;
        h += "<p><b>" + title + "</b></p><table cellspacing='0' cellpadding='1'>";
        for (const auto& [name, ns] : rows)
            h += QString("<tr><td align='right' style='padding-right:10px'>%1</td><td><code>%2</code></td></tr>")
                     .arg(durationText(ns, 2), QString::fromStdString(name.size() > 110 ? name.substr(0, 107) + "..." : name).toHtmlEscaped());
        h += "</table>";
    };
    table(tr("Top kernels in the range"), m_stats.kernels);
    table(tr("Top CPU operators in the range (inclusive)"), m_stats.operators);
    m_browser->setHtml(h);
}

} // namespace stallscope::gui
