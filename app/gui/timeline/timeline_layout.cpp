#include "timeline_layout.h"

#include "stallscope/model/time_math.h"
#include "stallscope/scene/timeline_scene.h"

#include <algorithm>
#include <map>

namespace stallscope::gui {

using namespace model;

namespace {

QString groupLabel(const Trace& t, const ProcessInfo& p) {
    if (p.gpuDevice >= 0) {
        QString l = QString("GPU %1").arg(p.gpuDevice);
        for (const auto& d : t.metadata().devices)
            if (d.id == p.gpuDevice && !d.name.empty()) l += " · " + QString::fromStdString(d.name);
        return l;
    }
    const QString name = QString::fromStdString(std::string(t.str(p.name)));
    if (p.key.isString()) return name.isEmpty() ? QString("(unnamed)") : name;
    return QString("%1 (pid %2)").arg(name.isEmpty() ? QString("process") : name).arg(p.key.number);
}

} // namespace

const std::vector<uint32_t>& TimelineLayout::lane(TrackId track, int depth) const {
    static const TimelineIndex::Lane empty;
    return m_index ? m_index->lane(track, depth) : empty;
}

size_t TimelineLayout::seek(TrackId track, int depth, size_t from, int64_t t) const {
    return m_index && m_trace ? m_index->seek(m_trace->slices(), track, depth, from, t) : 0;
}

size_t TimelineLayout::firstVisible(TrackId track, int depth, int64_t t) const {
    return m_index && m_trace ? m_index->firstVisible(m_trace->slices(), track, depth, t) : 0;
}

// ---------------------------------------------------------------- layout

void TimelineLayout::build(std::shared_ptr<const Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis,
                           std::shared_ptr<const TimelineIndex> index) {
    m_trace = std::move(trace);
    m_analysis = std::move(analysis);
    m_rows.clear();
    m_groups.clear();
    m_index.reset();
    if (!m_trace) return;
    const Trace& t = *m_trace;
    m_index = index ? std::move(index) : TimelineIndex::build(t);
    m_startNs = t.startNs();
    m_endNs = t.endNs();
    const std::vector<CounterSeries>& counters = m_index->counters;

    std::vector<bool> placed(counters.size(), false);
    // A process's counter rows (GPU utilisation, queue depth, memory), under its header.
    auto counterRows = [&](const ProcessInfo& p, int group, bool unplacedOnly) {
        for (size_t ci = 0; ci < counters.size(); ++ci) {
            const CounterSeries& cs = counters[ci];
            const bool gpuCounter = cs.kind != CounterKind::Memory || cs.device >= 0;
            const bool mine = gpuCounter
                                  ? (p.gpuDevice >= 0 && cs.device == p.gpuDevice)
                                  : (p.gpuDevice < 0 && !p.key.isString() && p.key.number >= 0);
            if (!mine || (unplacedOnly && placed[ci])) continue;
            placed[ci] = true;
            TimelineRow r;
            r.kind = RowKind::Counter;
            r.group = group;
            r.counter = static_cast<int>(ci);
            r.label = cs.kind == CounterKind::Utilization  ? "GPU utilisation"
                      : cs.kind == CounterKind::QueueDepth ? "Launch queue depth"
                      : cs.device >= 0 && cs.reserved      ? "GPU memory reserved"
                      : cs.device >= 0                     ? "GPU memory allocated"
                                                           : "Host memory allocated";
            m_rows.push_back(r);
        }
    };
    ProcessId current;
    for (TrackId tid : t.displayOrder()) {
        const TrackInfo& tr = t.track(tid);
        if (tr.sliceEnd == tr.sliceBegin) continue;  // metadata-only threads
        if (tr.process != current) {
            current = tr.process;
            const ProcessInfo& p = t.process(current);
            TimelineGroup g;
            g.label = groupLabel(t, p);
            g.process = current;
            g.device = p.gpuDevice;
            g.collapsed = tr.kind == TrackKind::Other;
            m_groups.push_back(g);
            TimelineRow header;
            header.kind = RowKind::Group;
            header.group = static_cast<int>(m_groups.size()) - 1;
            header.label = g.label;
            m_rows.push_back(header);
            counterRows(p, header.group, false);
        }
        TimelineRow r;
        r.kind = RowKind::Slices;
        r.group = static_cast<int>(m_groups.size()) - 1;
        r.track = tid;
        r.laneTrack = tid;
        r.allLanes = std::clamp<int>(tr.maxDepth + 1, 1, kMaxLanes);
        r.lanes =
            tr.kind == TrackKind::CpuThread ? std::min(r.allLanes, kOpenCpuLanes) : r.allLanes;
        r.label = QString::fromStdString(std::string(t.str(tr.name))).trimmed();
        if (tr.kind == TrackKind::CpuThread && !tr.key.isString()) r.sublabel = QString("tid %1").arg(tr.key.number);
        m_rows.push_back(r);
    }
    // Processes with counters and no slices (an allocator snapshot's device, a memory
    // timeline): a group of their counter rows alone.
    for (uint32_t i = 0; i < t.processes().size(); ++i) {
        const ProcessInfo& p = t.processes()[i];
        const size_t rowsBefore = m_rows.size();
        TimelineGroup g;
        g.label = groupLabel(t, p);
        g.process = ProcessId(i);
        g.device = p.gpuDevice;
        m_groups.push_back(g);
        TimelineRow header;
        header.kind = RowKind::Group;
        header.group = static_cast<int>(m_groups.size()) - 1;
        header.label = g.label;
        m_rows.push_back(header);
        counterRows(p, header.group, true);
        if (m_rows.size() == rowsBefore + 1) { // none: no group
            m_rows.pop_back();
            m_groups.pop_back();
        }
    }
    relayout();
}

void TimelineLayout::setCollapsed(int group, bool collapsed) {
    if (group < 0 || static_cast<size_t>(group) >= m_groups.size()) return;
    m_groups[static_cast<size_t>(group)].collapsed = collapsed;
    relayout();
}

void TimelineLayout::setAllLanes(int row, bool all) {
    if (row < 0 || static_cast<size_t>(row) >= m_rows.size()) return;
    TimelineRow& r = m_rows[static_cast<size_t>(row)];
    r.lanes = all ? r.allLanes : std::min(r.allLanes, kOpenCpuLanes);
    relayout();
}

bool TimelineLayout::canShowOperatorsOnly(int row) const {
    return row >= 0 && size_t(row) < m_rows.size() && m_index &&
           m_rows[size_t(row)].kind == RowKind::Slices &&
           m_index->operatorsOnly(m_rows[size_t(row)].track).valid();
}

bool TimelineLayout::setOperatorsOnly(int row, bool on) {
    if (!canShowOperatorsOnly(row)) return false;
    TimelineRow& r = m_rows[size_t(row)];
    const bool wasAll = r.lanes >= r.allLanes;
    r.laneTrack = on ? m_index->operatorsOnly(r.track) : r.track;
    r.allLanes = std::max(1, m_index->laneCount(r.laneTrack));
    r.lanes = wasAll ? r.allLanes : std::min(r.allLanes, kOpenCpuLanes);
    relayout();
    return true;
}

int TimelineLayout::setAllOperatorsOnly(bool on) {
    int changed = 0;
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (canShowOperatorsOnly(int(i)) && (m_rows[i].laneTrack != m_rows[i].track) != on) {
            setOperatorsOnly(int(i), on);
            ++changed;
        }
    return changed;
}

void TimelineLayout::relayout() {
    int y = 0;
    for (TimelineRow& r : m_rows) {
        const bool collapsed = r.group >= 0 && m_groups[static_cast<size_t>(r.group)].collapsed;
        r.visible = r.kind == RowKind::Group || (!collapsed && !r.hidden);
        r.y = y;
        r.height = !r.visible                   ? 0
                   : r.kind == RowKind::Group   ? kGroupHeight
                   : r.kind == RowKind::Counter ? kCounterHeight
                                                : r.lanes * kLaneHeight + 4;
        y += r.height;
    }
    m_totalHeight = y;
}

void TimelineLayout::hideRow(int row) {
    if (row < 0 || size_t(row) >= m_rows.size() || m_rows[size_t(row)].kind == RowKind::Group)
        return;
    m_rows[size_t(row)].hidden = true;
    relayout();
}

void TimelineLayout::showHiddenRows() {
    for (TimelineRow& r : m_rows) r.hidden = false;
    relayout();
}

int TimelineLayout::hiddenRows() const {
    return int(
        std::count_if(m_rows.begin(), m_rows.end(), [](const TimelineRow& r) { return r.hidden; }));
}

std::vector<int> TimelineLayout::groupOrder() const {
    std::vector<int> order;
    for (const TimelineRow& r : m_rows)
        if (r.kind == RowKind::Group) order.push_back(r.group);
    return order;
}

std::vector<int> TimelineLayout::moveGroup(int group, int delta) {
    std::vector<int> newIndex(m_rows.size());
    for (size_t i = 0; i < newIndex.size(); ++i) newIndex[i] = int(i);
    // Each group is its header row and the rows after it up to the next header (old indices).
    std::vector<std::vector<int>> blocks;
    for (size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].kind == RowKind::Group || blocks.empty()) blocks.emplace_back();
        blocks.back().push_back(int(i));
    }
    const auto at = std::find_if(blocks.begin(), blocks.end(), [&](const std::vector<int>& b) {
        const TimelineRow& head = m_rows[size_t(b.front())];
        return head.kind == RowKind::Group && head.group == group;
    });
    if (at == blocks.end()) return newIndex;
    const long from = at - blocks.begin();
    // Rows before the first header (none today) stay first.
    const long first = m_rows.empty() || m_rows.front().kind == RowKind::Group ? 0 : 1;
    const long to = std::clamp<long>(from + delta, first, long(blocks.size()) - 1);
    if (to == from) return newIndex;
    std::vector<int> moved = std::move(blocks[size_t(from)]);
    blocks.erase(blocks.begin() + from);
    blocks.insert(blocks.begin() + to, std::move(moved));
    std::vector<TimelineRow> rows;
    rows.reserve(m_rows.size());
    for (const auto& b : blocks)
        for (int old : b) {
            newIndex[size_t(old)] = int(rows.size());
            rows.push_back(std::move(m_rows[size_t(old)]));
        }
    m_rows = std::move(rows);
    relayout();
    return newIndex;
}

std::vector<int> TimelineLayout::moveRow(int row, int delta) {
    std::vector<int> newIndex(m_rows.size());
    for (size_t i = 0; i < newIndex.size(); ++i) newIndex[i] = int(i);
    if (row < 0 || size_t(row) >= m_rows.size() || m_rows[size_t(row)].kind == RowKind::Group)
        return newIndex;
    const int group = m_rows[size_t(row)].group, step = delta < 0 ? -1 : 1;
    int to = row;
    for (int k = 0; k < std::abs(delta); ++k) {
        const int next = to + step;
        if (next < 0 || size_t(next) >= m_rows.size() ||
            m_rows[size_t(next)].kind == RowKind::Group || m_rows[size_t(next)].group != group)
            break;
        to = next;
    }
    if (to == row) return newIndex;
    TimelineRow moved = std::move(m_rows[size_t(row)]);
    m_rows.erase(m_rows.begin() + row);
    m_rows.insert(m_rows.begin() + to, std::move(moved));
    for (int i = std::min(row, to); i <= std::max(row, to); ++i)
        newIndex[size_t(i)] = i == row ? to : i - step;
    relayout();
    return newIndex;
}

std::vector<int> TimelineLayout::pinGroup(int group) {
    return moveGroup(group, -int(m_groups.size()));
}

int TimelineLayout::rowAt(int y) const {
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y, [](int v, const TimelineRow& r) { return v < r.y; });
    while (it != m_rows.begin()) {
        --it;
        if (it->visible && y < it->y + it->height) return static_cast<int>(it - m_rows.begin());
        if (it->visible) break;
    }
    return -1;
}

int TimelineLayout::rowOfTrack(TrackId track) const {
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].kind == RowKind::Slices && m_rows[i].track == track) return static_cast<int>(i);
    return -1;
}

std::vector<int> TimelineLayout::rowsForDevice(int32_t device, int64_t lo, int64_t hi) const {
    std::vector<int> out;
    if (!m_trace) return out;
    constexpr size_t kThreads = 8;
    const std::vector<TrackId> launchThreads = scene::launchingThreads(
        *m_trace, device, std::max(lo, m_startNs), std::min(hi, m_endNs), kThreads);
    for (size_t i = 0; i < m_rows.size(); ++i) {
        const TimelineRow& r = m_rows[i];
        const int32_t gd = r.group >= 0 ? m_groups[static_cast<size_t>(r.group)].device : -1;
        if (r.kind != RowKind::Group && (gd == device || device < 0) && gd >= 0) out.push_back(static_cast<int>(i));
        else if (r.kind == RowKind::Slices &&
                 std::find(launchThreads.begin(), launchThreads.end(), r.track) != launchThreads.end())
            out.push_back(static_cast<int>(i));
    }
    return out;
}

} // namespace stallscope::gui
