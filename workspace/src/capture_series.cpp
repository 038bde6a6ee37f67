// Captures of one worker as a series in time: see capture_series.h.
#include "stallscope/workspace/capture_series.h"

#include "stallscope/base/utf8.h"
#include "stallscope/importers/tensorboard_folder.h"
#include "stallscope/workspace/workspace.h"

#include <algorithm>
#include <filesystem>
#include <map>

namespace stallscope::workspace {

std::string_view capturePhaseName(CapturePhase p) {
    return p == CapturePhase::WarmUp ? "warm-up" : "steady";
}

CapturePhase capturePhase(const analysis::AnalysisResult& a) {
    if (!a.warmup) return CapturePhase::Steady;
    const analysis::Warmup& w = *a.warmup;
    if (w.wholeWindow) return CapturePhase::WarmUp;
    const int64_t whole = w.wholeEndNs - w.wholeStartNs;
    // Both are durations inside one window (model times: no overflow, docs/architecture.md).
    return whole > 0 && w.lengthNs() * 2 >= whole ? CapturePhase::WarmUp : CapturePhase::Steady;
}

Capture describeCapture(const model::Trace& trace, const analysis::AnalysisResult& a) {
    Capture c;
    c.phase = capturePhase(a);
    c.startNs = trace.startNs();
    c.windowNs = a.window.length();
    int64_t wholeStart = a.window.startNs, wholeEnd = a.window.endNs;
    const bool setApart = a.warmup && !a.warmup->wholeWindow;
    if (a.warmup) {
        wholeStart = a.warmup->wholeStartNs;
        wholeEnd = a.warmup->wholeEndNs;
        c.warmupNs = a.warmup->lengthNs();
    }
    c.wholeNs = wholeEnd - wholeStart;
    // The steps of the whole window, warm-up ones too (the analysis keeps them, marked), by
    // their CPU ranges as the step-time statistics measure them.
    int64_t stepSum = 0;
    for (const analysis::Step& st : a.steps)
        if (st.startNs >= wholeStart && st.endNs <= wholeEnd) {
            ++c.steps;
            stepSum += st.endNs - st.startNs;
        }
    if (c.steps > 0) c.stepMeanNs = stepSum / int64_t(c.steps);
    const analysis::DeviceMetrics* busiest = nullptr;
    for (const analysis::DeviceMetrics& d : a.devices)
        if (!busiest || d.busyNs > busiest->busyNs) busiest = &d;
    if (!busiest) return c;
    c.windowUtilization = busiest->utilization;
    if (!setApart) {
        c.utilization = busiest->utilization;
    } else {
        // The warm-up steps' figures are measured on the whole window, the others on the
        // steady part; their tiles cover the window.
        int64_t busy = 0, tiles = 0;
        for (const analysis::StepMetrics& st : busiest->steps) {
            busy += st.busyNs;
            tiles += st.endNs - st.startNs;
        }
        if (tiles > 0) c.utilization = double(busy) / double(tiles);
    }
    return c;
}

size_t RankSeries::count(CapturePhase p) const {
    return size_t(std::count_if(captures.begin(), captures.end(),
                                [p](const Capture& c) { return c.phase == p; }));
}

size_t representativeCapture(const std::vector<Capture>& captures) {
    for (size_t i = captures.size(); i-- > 0;)
        if (captures[i].phase == CapturePhase::Steady) return i;
    return captures.empty() ? 0 : captures.size() - 1;
}

std::vector<RankSeries> rankSeries(const std::vector<AnalysedTrace>& traces) {
    // By rank; a trace without a rank (-1) is a series of its own, after the ranked ones.
    std::map<std::pair<size_t, int32_t>, RankSeries> byRank;
    for (size_t i = 0; i < traces.size(); ++i) {
        const AnalysedTrace& at = traces[i];
        if (!at.analysis || !at.entry.trace) continue;
        Capture c = describeCapture(*at.entry.trace, *at.analysis);
        c.trace = i;
        c.span = at.entry.span;
        c.path = at.entry.path;
        const importers::TraceFileName name =
            importers::parseTraceFileName(std::filesystem::path(at.entry.path).filename().string());
        if (name.matches) c.tag = name.spanTag;
        RankSeries& s = byRank[{at.entry.rank >= 0 ? 0 : i + 1, at.entry.rank}];
        if (s.captures.empty()) {
            s.rank = at.entry.rank;
            s.label = at.entry.label;
        }
        s.captures.push_back(std::move(c));
    }
    std::vector<RankSeries> out;
    out.reserve(byRank.size());
    for (auto& [key, s] : byRank) {
        std::stable_sort(s.captures.begin(), s.captures.end(),
                         [](const Capture& a, const Capture& b) {
                             return a.span != b.span ? a.span < b.span : a.startNs < b.startNs;
                         });
        s.representative = representativeCapture(s.captures);
        out.push_back(std::move(s));
    }
    return out;
}

bool hasSeries(const std::vector<RankSeries>& series) {
    return std::any_of(series.begin(), series.end(),
                       [](const RankSeries& s) { return s.captures.size() > 1; });
}

void writeRankSeriesJson(base::JsonWriter& w, const std::vector<RankSeries>& series) {
    w.beginArray();
    for (const RankSeries& s : series) {
        w.beginObject();
        w.key("rank").value(int64_t(s.rank));
        w.key("label").value(base::replaceInvalidUtf8(s.label));
        w.key("summarised_by").value(uint64_t(s.representative));
        w.key("captures").beginArray();
        for (size_t i = 0; i < s.captures.size(); ++i) {
            const Capture& c = s.captures[i];
            w.beginObject();
            w.key("index").value(uint64_t(i));
            w.key("tag").value(base::replaceInvalidUtf8(c.tag));
            w.key("path").value(base::replaceInvalidUtf8(c.path));
            w.key("phase").value(capturePhaseName(c.phase));
            w.key("start_ns").value(c.startNs);
            w.key("whole_ns").value(c.wholeNs);
            w.key("warmup_ns").value(c.warmupNs);
            w.key("window_ns").value(c.windowNs);
            w.key("steps").value(uint64_t(c.steps));
            w.key("step_mean_ns");
            if (c.stepMeanNs >= 0)
                w.value(c.stepMeanNs);
            else
                w.null();
            for (const auto& [key, share] :
                 {std::pair{"utilization", c.utilization},
                  std::pair{"window_utilization", c.windowUtilization}}) {
                w.key(key);
                if (share >= 0)
                    w.value(share, 4);
                else
                    w.null();
            }
            w.endObject();
        }
        w.endArray();
        w.endObject();
    }
    w.endArray();
}

} // namespace stallscope::workspace
