#include "details_panel.h"

#include "gui_text.h"

#include "theme.h"

#include "stallscope/base/demangle.h"

#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

namespace stallscope::gui {

using namespace model;

namespace {
QString esc(std::string_view s, size_t max = 2000) {
    std::string t(s.substr(0, max));
    if (s.size() > max) t += "...";
    return QString::fromStdString(t).toHtmlEscaped();
}
QString row(const QString& k, const QString& v) {
    return QString("<tr><td style='color:gray;padding-right:12px' valign='top'>%1</td><td>%2</td></tr>").arg(k, v);
}
} // namespace

DetailsPanel::DetailsPanel(QWidget* parent) : QWidget(parent), m_browser(new QTextBrowser(this)) {
    m_browser->setOpenLinks(false);
    auto* l = new QVBoxLayout(this);
    l->setContentsMargins(4, 4, 4, 4);
    l->addWidget(m_browser);
    connect(m_browser, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        if (url.scheme() == "slice") Q_EMIT sliceActivated(SliceId(url.path().toUInt()));
    });
    showSlice({});
}

void DetailsPanel::setTrace(std::shared_ptr<const Trace> trace, int64_t timeOrigin) {
    m_trace = std::move(trace);
    m_origin = timeOrigin;
    showSlice({});
}

void DetailsPanel::showSlice(SliceId id) {
    if (!m_trace || !id.valid()) {
        m_browser->setHtml(tr("<p style='color:gray'>Click an event on the timeline to see its details; drag across "
                              "the time ruler (or Shift+drag) to measure a range.</p>"));
        return;
    }
    const Trace& t = *m_trace;
    const SliceTable& s = t.slices();
    const uint32_t i = id.index();
    const TrackInfo& track = t.track(s.track[i]);
    const ProcessInfo& pr = t.process(track.process);
    auto link = [&](SliceId other) {
        return QString("<a href='slice:%1'>%2</a> (%3)").arg(other.index()).arg(esc(t.str(s.name[other.index()]), 120), durationText(s.dur[other.index()], 3));
    };
    QString h = QString("<h3 style='margin-bottom:4px'>%1</h3><table cellspacing='0' cellpadding='1'>").arg(esc(t.str(s.name[i])));
    if (base::looksMangled(t.str(s.name[i])))
        if (const std::string d = base::demangle(t.str(s.name[i])); d != t.str(s.name[i]))
            h += row(tr("demangled"), esc(d));
    h += row(tr("category"), esc(t.str(s.category[i])) + " <span style='color:gray'>(" + esc(kindName(s.kind[i])) + ")</span>");
    h += row(tr("start"), QString("+%1 <span style='color:gray'>(%2 ns)</span>").arg(durationText(s.start[i] - m_origin, 3)).arg(s.start[i]));
    h += row(tr("duration"), durationText(s.dur[i], 3));
    h += row(tr("row"), esc(t.str(pr.name)) + " › " + esc(t.str(track.name)));
    if (s.correlation[i] != SliceTable::kNoCorrelation) h += row(tr("correlation"), QString::number(s.correlation[i]));
    if (isGpuSide(s.kind[i])) {
        const SliceId l = t.launchOf(id);
        h += row(tr("launched by"), l.valid() ? link(l) : tr("(no launch call in the trace)"));
        if (l.valid()) {
            const SliceId op = t.enclosingOp(l);
            if (op.valid()) h += row(tr("from operator"), link(op));
        }
    } else if (isLaunchSide(s.kind[i])) {
        const auto work = t.gpuWorkOf(id);
        QString w;
        for (size_t k = 0; k < work.size() && k < 8; ++k) w += link(work[k].slice) + "<br>";
        h += row(tr("GPU work"), work.empty() ? tr("(none)") : w);
    }
    // Stack: the enclosing slices on this thread.
    QString stack;
    int depth = 0;
    for (SliceId p = s.parent[i]; p.valid() && depth < 40; p = s.parent[p.index()], ++depth)
        stack += link(p) + "<br>";
    if (!stack.isEmpty()) h += row(tr("inside"), stack);
    if (s.flags[i] & kSliceCrossesParent) h += row(tr("note"), tr("ends after its parent (timestamps overlap)"));
    h += "</table>";
    std::vector<ArgValue> args;
    std::string error;
    if (t.sliceArgs(id, args, error)) {
        if (!args.empty()) {
            h += "<p><b>" + tr("Arguments") + "</b></p><table cellspacing='0' cellpadding='1'>";
            for (const auto& a : args) h += row(esc(a.key, 200), "<code>" + esc(a.json, 1500) + "</code>");
            h += "</table>";
        }
    } else {
        h += "<p style='color:gray'>" + tr("Arguments unavailable: %1").arg(QString::fromStdString(error).toHtmlEscaped()) + "</p>";
    }
    m_browser->setHtml(h);
}

} // namespace stallscope::gui
