#include "stallscope_cupti_range.h"

#include <algorithm>

namespace stallscope::capture::cupti {

bool RecordingIntervals::overlaps(int64_t start, int64_t end) const {
    // The first interval that ends after `start` is the only candidate for an instant and
    // the first candidate for a span; intervals are disjoint and sorted.
    auto it = std::upper_bound(m_intervals.begin(), m_intervals.end(), start,
                               [](int64_t t, const Interval& i) { return t < i.end; });
    if (it == m_intervals.end()) return false;
    if (start == end) return it->begin <= start;
    return end > it->begin;
}

void RecordingIntervals::open(int64_t t) {
    if (!m_intervals.empty() && m_intervals.back().end == kOpen) return;
    if (!m_intervals.empty() && m_intervals.back().end >= t) {
        m_intervals.back().end = kOpen; // reopened at (or before) the moment it closed
        return;
    }
    m_intervals.push_back({t, kOpen});
}

void RecordingIntervals::close(int64_t t) {
    if (m_intervals.empty() || m_intervals.back().end != kOpen) return;
    m_intervals.back().end = std::max(t, m_intervals.back().begin);
    if (m_intervals.back().end == m_intervals.back().begin) m_intervals.pop_back();
}

void RecordingIntervals::pruneBefore(int64_t t) {
    auto keep = std::find_if(m_intervals.begin(), m_intervals.end(),
                             [t](const Interval& i) { return i.end >= t; });
    m_intervals.erase(m_intervals.begin(), keep);
}

RangeControl::RangeControl(RangeSettings settings, int64_t initNs)
    : m_settings(settings), m_windowBegin(initNs + std::max<int64_t>(settings.delayNs, 0)),
      m_windowEnd(settings.durationNs > 0 ? m_windowBegin + settings.durationNs
                                          : RecordingIntervals::kOpen) {
    std::lock_guard lock(m_mutex);
    apply(initNs, false);
}

bool RangeControl::inWindow(int64_t now) const {
    return now >= m_windowBegin && now < m_windowEnd;
}

void RangeControl::apply(int64_t now, bool windowEdge) {
    const bool want =
        inWindow(now) && m_recorderOpen && (!m_settings.profilerRange || m_profilerOpen);
    if (want == m_recording) return;
    m_recording = want;
    // The other gates change when they are called; only the window changes between calls,
    // so a change the timer finds is stamped at the window's edge, not when it was noticed.
    int64_t at = now;
    if (windowEdge) at = want ? std::min(now, m_windowBegin) : std::min(now, m_windowEnd);
    if (want)
        m_intervals.open(at);
    else
        m_intervals.close(at);
}

void RangeControl::recorderStart(int64_t now) {
    std::lock_guard lock(m_mutex);
    m_recorderOpen = true;
    apply(now, false);
}

void RangeControl::recorderStop(int64_t now) {
    std::lock_guard lock(m_mutex);
    m_recorderOpen = false;
    apply(now, false);
}

void RangeControl::profilerStart(int64_t now) {
    std::lock_guard lock(m_mutex);
    m_profilerOpen = true;
    apply(now, false);
}

void RangeControl::profilerStop(int64_t now) {
    std::lock_guard lock(m_mutex);
    m_profilerOpen = false;
    apply(now, false);
}

void RangeControl::tick(int64_t now) {
    std::lock_guard lock(m_mutex);
    apply(now, true);
}

bool RangeControl::recording() const {
    std::lock_guard lock(m_mutex);
    return m_recording;
}

int64_t RangeControl::nextDeadline(int64_t now) const {
    std::lock_guard lock(m_mutex);
    if (now < m_windowBegin) return m_windowBegin;
    if (now < m_windowEnd) return m_windowEnd;
    return RecordingIntervals::kOpen;
}

bool RangeControl::finished(int64_t now) const {
    std::lock_guard lock(m_mutex);
    return now >= m_windowEnd;
}

RecordingIntervals RangeControl::snapshot() const {
    std::lock_guard lock(m_mutex);
    return m_intervals;
}

void RangeControl::pruneBefore(int64_t t) {
    std::lock_guard lock(m_mutex);
    m_intervals.pruneBefore(t);
}

} // namespace stallscope::capture::cupti
