#pragma once
// Helpers of the capture tests: comparing two traces event by event, temporary paths.
#include "stallscope/capture/protocol.h"
#include "stallscope/capture/session.h"
#include "stallscope/model/trace.h"

#include <QString>
#include <QTest>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace capture_test {

using Row = std::tuple<int64_t, int64_t, int64_t, int64_t, std::string, std::string, int, uint32_t, uint64_t>;

/// Every slice as (pid, tid, start, dur, name, category, kind, correlation, extra), sorted.
inline std::vector<Row> rows(const stallscope::model::Trace& t) {
    std::vector<Row> out;
    const auto& s = t.slices();
    for (size_t i = 0; i < s.size(); ++i) {
        const auto& tr = t.track(s.track[i]);
        const auto& p = t.process(tr.process);
        out.emplace_back(p.key.number, tr.key.number, s.start[i], s.dur[i], std::string(t.str(s.name[i])),
                         std::string(t.str(s.category[i])), static_cast<int>(s.kind[i]), s.correlation[i], s.extra[i]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Launches of GPU work found through the correlation index.
inline size_t linkedGpuWork(const stallscope::model::Trace& t) {
    size_t n = 0;
    const auto& s = t.slices();
    for (size_t i = 0; i < s.size(); ++i)
        if (stallscope::model::isGpuWork(s.kind[i]) &&
            t.launchOf(stallscope::model::SliceId(static_cast<uint32_t>(i))).valid())
            ++n;
    return n;
}

/// QVERIFY-style comparison of the parts a recording and its re-import must share.
inline bool sameTrace(const stallscope::model::Trace& a, const stallscope::model::Trace& b, QString& why) {
    const auto ra = rows(a), rb = rows(b);
    if (ra.size() != rb.size()) return why = QString("slices %1 vs %2").arg(ra.size()).arg(rb.size()), false;
    for (size_t i = 0; i < ra.size(); ++i)
        if (ra[i] != rb[i])
            return why = QString("slice %1 differs: %2 vs %3")
                             .arg(i)
                             .arg(QString::fromStdString(std::get<4>(ra[i])))
                             .arg(QString::fromStdString(std::get<4>(rb[i]))),
                   false;
    if (a.instants().size() != b.instants().size()) return why = "instant counts differ", false;
    if (a.flows().size() != b.flows().size())
        return why = QString("flows %1 vs %2").arg(a.flows().size()).arg(b.flows().size()), false;
    if (linkedGpuWork(a) != linkedGpuWork(b)) return why = "launch links differ", false;
    if (a.metadata().devices.size() != b.metadata().devices.size()) return why = "device counts differ", false;
    for (size_t i = 0; i < a.metadata().devices.size(); ++i) {
        const auto &da = a.metadata().devices[i], &db = b.metadata().devices[i];
        if (da.name != db.name || da.numSms != db.numSms || da.computeMajor != db.computeMajor)
            return why = "devices differ", false;
    }
    auto names = [](const stallscope::model::Trace& t) {
        std::vector<std::tuple<int64_t, int64_t, std::string, std::string>> v;
        for (const auto& tr : t.tracks()) {
            const auto& p = t.process(tr.process);
            v.emplace_back(p.key.number, tr.key.number, std::string(t.str(p.name)), std::string(t.str(tr.name)));
        }
        std::sort(v.begin(), v.end());
        return v;
    };
    if (names(a) != names(b)) return why = "process or thread names differ", false;
    return true;
}

/// Feeds envelopes into a session as one numbered source (several sources in one test).
class SourceSink final : public stallscope::capture::EnvelopeSink {
public:
    SourceSink(stallscope::capture::CaptureSession& s, uint32_t id) : m_s(s), m_id(id) {}
    bool send(const stallscope::capture::pb::Envelope& e) override { return m_s.receive(m_id, e); }

private:
    stallscope::capture::CaptureSession& m_s;
    uint32_t m_id;
};

} // namespace capture_test
