// Cross-rank analysis: see cross_rank.h and docs/analysis.md "Ranks".
#include "stallscope/analysis/cross_rank.h"

#include "stallscope/analysis/detector_catalogue.h"
#include "stallscope/analysis/kernel_catalogue.h"
#include "stallscope/base/text_format.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace stallscope::analysis {

using namespace model;

namespace {

const DeviceMetrics* busiestDevice(const AnalysisResult& a) {
    const DeviceMetrics* busiest = nullptr;
    for (const DeviceMetrics& d : a.devices)
        if (!busiest || d.busyNs > busiest->busyNs) busiest = &d;
    return busiest;
}

int64_t median(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
}

/// What launched a GPU slice, as a phase name (cross_rank.h DigestCollective::phase).
std::string phaseOf(const Trace& t, SliceId gpu) {
    const SliceTable& s = t.slices();
    const SliceId launch = t.launchOf(gpu);
    if (!launch.valid()) return {};
    // The outermost annotation or operator under the step (Python frames skipped).
    SliceId pick;
    for (SliceId p = s.parent[launch.index()]; p.valid(); p = s.parent[p.index()]) {
        const std::string_view name = t.str(s.name[p.index()]);
        if (name.rfind("ProfilerStep#", 0) == 0) continue;
        const EventKind k = s.kind[p.index()];
        if (k == EventKind::UserAnnotation || k == EventKind::CpuOp) pick = p;
    }
    if (!pick.valid()) return {};
    std::string name(t.str(s.name[pick.index()]));
    constexpr std::string_view autograd = "autograd::engine::evaluate_function: ";
    if (name.rfind(autograd, 0) == 0)
        name = "backward (autograd: " + name.substr(autograd.size()) + ")";
    if (name.size() > 80) name = name.substr(0, 77) + "...";
    return name;
}

/// Kineto's NCCL arguments of each collective's kernel: its process group and "Seq".
void readNcclArgs(const Trace& t, const std::vector<SliceId>& kernels,
                  std::vector<DigestCollective>& out) {
    t.slicesArgs(kernels, [&](size_t i, bool ok, std::vector<ArgValue>& args) {
        if (!ok) return;
        std::string name, description;
        for (const ArgValue& a : args) {
            auto text = [&] {
                return a.json.size() >= 2 && a.json.front() == '"'
                           ? a.json.substr(1, a.json.size() - 2)
                           : a.json;
            };
            if (a.key == "Seq") {
                int64_t v = 0;
                bool digits = !a.json.empty();
                for (const char c : a.json) digits &= c >= '0' && c <= '9', v = v * 10 + (c - '0');
                if (digits && a.json.size() < 18) out[i].seq = v;
            } else if (a.key == "Process Group Name") {
                name = text();
            } else if (a.key == "Process Group Description") {
                description = text();
            }
        }
        out[i].group = !name.empty() ? name : description;
    });
}

/// Matches the ranks' collectives by (process group, Seq) when every collective of every
/// rank carries both: keeps, on each rank, those every rank has, in rank 0's order. False
/// (nothing changed) when any lacks them.
bool matchBySequence(std::vector<RankDigest>& in, std::vector<std::string>& notes) {
    for (const RankDigest& d : in) {
        if (d.collectives.empty()) return false;
        for (const DigestCollective& c : d.collectives)
            if (c.seq < 0) return false;
    }
    using Key = std::pair<std::string, int64_t>;
    std::vector<std::map<Key, size_t>> index(in.size());
    for (size_t i = 0; i < in.size(); ++i)
        for (size_t k = 0; k < in[i].collectives.size(); ++k)
            index[i].try_emplace({in[i].collectives[k].group, in[i].collectives[k].seq}, k);
    std::vector<std::vector<DigestCollective>> kept(in.size());
    for (const DigestCollective& c : in[0].collectives) {
        const Key key{c.group, c.seq};
        bool everywhere = true;
        for (size_t i = 1; i < in.size() && everywhere; ++i) everywhere = index[i].count(key) > 0;
        if (!everywhere) continue;
        for (size_t i = 0; i < in.size(); ++i)
            kept[i].push_back(in[i].collectives[index[i].at(key)]);
    }
    size_t total = 0;
    for (const RankDigest& d : in) total = std::max(total, d.collectives.size());
    for (size_t i = 0; i < in.size(); ++i) in[i].collectives = std::move(kept[i]);
    if (const size_t missing = total - in[0].collectives.size(); missing > 0)
        notes.push_back(std::to_string(missing) +
                        (missing == 1 ? " collective is" : " collectives are") +
                        " not on every rank (by process group and Seq): only the " +
                        std::to_string(in[0].collectives.size()) + " on all are compared");
    return true;
}

std::string stepLabel(const DigestStep& s, size_t position) {
    if (s.number >= 0) return "#" + std::to_string(s.number);
    if (!s.label.empty()) return s.label;
    return "step " + std::to_string(position + 1);
}

/// A straggler is a rank that is last clearly more often than its share by chance: at least
/// twice as often as 1/n of `total` (or the only collective there is).
int32_t clearStraggler(const std::vector<size_t>& last, size_t total, size_t& best) {
    best = 0;
    for (size_t i = 1; i < last.size(); ++i)
        if (last[i] > last[best]) best = i;
    if (total == 0 || last.empty()) return -1;
    const double share = double(last[best]) / double(total);
    return share * double(last.size()) >= 2.0 || total == 1 ? int32_t(best) : -1;
}

} // namespace

RankDigest digestRank(const RankInput& in) {
    RankDigest d;
    d.rank = in.rank;
    d.label = in.label;
    d.path = in.path;
    const Trace& t = *in.trace;
    const AnalysisResult& a = *in.analysis;
    d.windowStartNs = a.window.startNs;
    d.windowEndNs = a.window.endNs;
    for (const Finding& f : a.findings)
        if (detectorEntry(f.kind).stage != DetectorStage::Context)
            d.findings.push_back({f.kind, f.savingShare, f.title});
    const DeviceMetrics* busiest = busiestDevice(a);
    if (!busiest) return d;
    d.device = busiest->device;
    d.deviceName = busiest->name;
    d.utilization = busiest->utilization;
    for (size_t k = 0; k < kIdleCauseCount; ++k) d.idle[k] = busiest->idle.causes[k].ns;
    for (size_t i = 0; i < busiest->steps.size(); ++i) {
        const StepMetrics& sm = busiest->steps[i];
        DigestStep s;
        s.number = sm.number;
        if (i < a.steps.size()) s.label = a.steps[i].label;
        s.startNs = sm.startNs;
        s.endNs = sm.endNs;
        s.busyNs = sm.busyNs;
        s.idle = sm.idleByCause;
        d.steps.push_back(std::move(s));
    }

    // The communication kernels (the catalogue's comm family) inside the window, by start.
    const SliceTable& sl = t.slices();
    std::unordered_map<uint32_t, bool> comm; // per kernel name
    std::vector<SliceId> kernels;            // of d.collectives, in the same order
    for (const TrackInfo& tr : t.tracks()) {
        if (tr.kind != TrackKind::GpuStream || t.process(tr.process).gpuDevice != busiest->device)
            continue;
        for (uint32_t i = tr.sliceBegin; i < tr.sliceEnd; ++i) {
            if (sl.kind[i] != EventKind::Kernel || sl.start[i] < a.window.startNs ||
                sl.start[i] >= a.window.endNs)
                continue;
            auto [it, added] = comm.try_emplace(sl.name[i].value);
            if (added) it->second = classifyKernel(t.str(sl.name[i])).family == KernelFamily::Comm;
            if (it->second) {
                DigestCollective c;
                c.name = std::string(t.str(sl.name[i]));
                c.phase = phaseOf(t, SliceId(i));
                c.startNs = sl.start[i];
                c.endNs = sl.end(i);
                d.collectives.push_back(std::move(c));
                kernels.push_back(SliceId(i));
            }
        }
    }
    readNcclArgs(t, kernels, d.collectives);
    std::stable_sort(
        d.collectives.begin(), d.collectives.end(),
        [](const DigestCollective& x, const DigestCollective& y) { return x.startNs < y.startNs; });
    for (size_t k = 0; k < d.collectives.size(); ++k) {
        DigestCollective& c = d.collectives[k];
        for (size_t s = 0; s < d.steps.size(); ++s)
            if (c.startNs >= d.steps[s].startNs && c.startNs < d.steps[s].endNs) {
                c.step = int32_t(s);
                break;
            }
        // What the GPU did before it arrived: from the previous one's end, on its own clock.
        const int64_t from = k > 0 ? d.collectives[k - 1].endNs : d.windowStartNs;
        const int64_t to = c.startNs;
        if (to <= from) continue;
        int64_t idle = 0;
        for (size_t q = 0; q < kIdleCauseCount; ++q) {
            c.beforeIdle[q] = lengthWithin(busiest->idle.intervals[q], from, to);
            idle += c.beforeIdle[q];
        }
        c.beforeBusyNs = std::max<int64_t>(0, (to - from) - idle);
    }
    return d;
}

CrossRankResult analyzeRanks(const std::vector<RankInput>& inputs) {
    std::vector<RankDigest> digests;
    digests.reserve(inputs.size());
    for (const RankInput& in : inputs) digests.push_back(digestRank(in));
    return analyzeRanks(std::move(digests));
}

CrossRankResult analyzeRanks(std::vector<RankDigest> in) {
    CrossRankResult r;
    std::stable_sort(in.begin(), in.end(),
                     [](const RankDigest& a, const RankDigest& b) { return a.rank < b.rank; });
    // A rank given twice (two spans of one worker, a summary next to a merged copy of it) is
    // compared once: the first.
    {
        std::vector<int32_t> twice;
        auto last =
            std::unique(in.begin(), in.end(), [&](const RankDigest& a, const RankDigest& b) {
                if (a.rank != b.rank) return false;
                if (twice.empty() || twice.back() != a.rank) twice.push_back(a.rank);
                return true;
            });
        in.erase(last, in.end());
        if (!twice.empty()) {
            std::string list;
            for (size_t i = 0; i < twice.size() && i < 8; ++i)
                list += (i ? ", " : "") + std::to_string(twice[i]);
            r.notes.push_back(
                "rank" + std::string(twice.size() > 1 ? "s " : " ") + list +
                (twice.size() > 8 ? ", ..." : "") +
                " given more than once (several spans or summaries): each compared once");
        }
    }
    const size_t n = in.size();
    for (const RankDigest& d : in) {
        RankSummary rs;
        rs.rank = d.rank;
        rs.label = d.label;
        rs.path = d.path;
        rs.windowNs = d.windowEndNs - d.windowStartNs;
        rs.utilization = d.utilization;
        for (size_t k = 0; k < kIdleCauseCount; ++k)
            if (d.idle[k] > rs.topCauseNs)
                rs.topCauseNs = d.idle[k], rs.topCause = static_cast<IdleCause>(k);
        double top = -1;
        for (const DigestFinding& f : d.findings)
            if (f.savingShare > top) top = f.savingShare, rs.topFinding = f.title;
        r.ranks.push_back(rs);
    }
    if (n < 2) {
        r.notes.push_back("one rank: nothing to compare");
        return r;
    }
    // Findings across the ranks instead of one row per rank and GPU.
    std::map<FindingKind, RankFinding> byKind;
    for (const RankDigest& d : in) {
        std::map<FindingKind, double> best; // a rank's largest saving per kind (its GPUs)
        for (const DigestFinding& f : d.findings)
            best[f.kind] = std::max(best[f.kind], f.savingShare);
        for (const auto& [kind, share] : best) {
            RankFinding& rf = byKind[kind];
            rf.kind = kind;
            if (rf.ranks == 0 || share < rf.minShare) rf.minShare = share;
            if (rf.ranks == 0 || share > rf.maxShare) rf.maxShare = share, rf.worstRank = d.rank;
            ++rf.ranks;
        }
    }
    for (auto& [k, rf] : byKind) r.findings.push_back(rf);
    std::stable_sort(r.findings.begin(), r.findings.end(),
                     [](const RankFinding& a, const RankFinding& b) {
                         return a.ranks != b.ranks ? a.ranks > b.ranks : a.maxShare > b.maxShare;
                     });
    int64_t slow = 0, fast = INT64_MAX;
    for (const RankSummary& rs : r.ranks)
        slow = std::max(slow, rs.windowNs), fast = std::min(fast, rs.windowNs);
    r.stepImbalance = fast > 0 ? double(slow) / double(fast) - 1 : 0;

    // Steps as columns: by number when every rank has the same numbers, else by position.
    bool sameNumbers = true;
    size_t columns = SIZE_MAX;
    for (const RankDigest& d : in) {
        columns = std::min(columns, d.steps.size());
        sameNumbers &= d.steps.size() == in[0].steps.size();
        for (size_t s = 0; sameNumbers && s < d.steps.size(); ++s)
            sameNumbers = d.steps[s].number == in[0].steps[s].number;
    }
    if (!sameNumbers && columns > 0)
        r.notes.push_back("the ranks' steps differ in number or count: steps are compared by "
                          "position over the first " +
                          std::to_string(columns));
    for (size_t s = 0; s < columns; ++s) r.stepLabels.push_back(stepLabel(in[0].steps[s], s));
    r.cells.assign(n, std::vector<RankStepCell>(columns));
    for (size_t i = 0; i < n; ++i)
        for (size_t s = 0; s < columns; ++s) {
            const DigestStep& st = in[i].steps[s];
            RankStepCell& c = r.cells[i][s];
            c.present = true;
            c.startNs = st.startNs;
            c.stepNs = st.endNs - st.startNs;
            c.busyNs = st.busyNs;
            c.idle = st.idle;
        }
    r.stepStraggler.assign(columns, -1);

    // Match by Kineto's process group and Seq when every collective has them, else by order:
    // the common prefix whose names agree on every rank.
    const bool bySequence = matchBySequence(in, r.notes);
    size_t m = SIZE_MAX;
    for (const RankDigest& d : in) m = std::min(m, d.collectives.size());
    size_t agreed = bySequence ? m : 0; // matched by key: the kernels' names may differ
    for (; agreed < m; ++agreed) {
        bool same = true;
        for (size_t i = 1; i < n && same; ++i)
            same = in[i].collectives[agreed].name == in[0].collectives[agreed].name;
        if (!same) break;
    }
    bool equalCounts = true;
    for (const RankDigest& d : in) equalCounts &= d.collectives.size() == in[0].collectives.size();
    r.collectives = agreed;
    r.matching = bySequence ? "by process group and sequence number (Kineto's NCCL \"Seq\")"
                            : "by order of the communication kernels on each rank's busiest GPU";
    if (!bySequence && (!equalCounts || agreed < m))
        r.notes.push_back("the ranks' collectives differ after #" + std::to_string(agreed) +
                          " (counts or kernel names): only the first " + std::to_string(agreed) +
                          " are compared");
    if (agreed == 0) {
        r.notes.push_back(
            "no collective common to all ranks: waiting and stragglers cannot be told");
        return r;
    }

    // Clock offsets from the collectives' ends (a collective ends within microseconds on
    // every rank): the median difference to rank order's first rank; applied when any is
    // beyond 50 us (the hosts' clocks disagree), else the ranks share a clock.
    std::vector<int64_t> offset(n, 0);
    for (size_t i = 1; i < n; ++i) {
        std::vector<int64_t> diff;
        diff.reserve(agreed);
        for (size_t k = 0; k < agreed; ++k)
            diff.push_back(in[i].collectives[k].endNs - in[0].collectives[k].endNs);
        offset[i] = median(std::move(diff));
        if (std::abs(offset[i]) > 50'000) r.clocksAligned = true;
    }
    if (!r.clocksAligned) std::fill(offset.begin(), offset.end(), 0);
    for (size_t i = 0; i < n; ++i) r.ranks[i].clockOffsetNs = offset[i];
    for (size_t i = 0; i < n; ++i)
        for (size_t s = 0; s < columns; ++s)
            r.cells[i][s].startNs = in[i].steps[s].startNs - offset[i];
    r.collectiveSpans.assign(n, {});
    for (size_t i = 0; i < n; ++i) {
        r.collectiveSpans[i].reserve(agreed);
        for (size_t k = 0; k < agreed; ++k)
            r.collectiveSpans[i].push_back(
                {in[i].collectives[k].startNs - offset[i], in[i].collectives[k].endNs - offset[i]});
    }
    for (size_t k = 0; k < agreed; ++k) {
        r.collectiveNames.push_back(in[0].collectives[k].name);
        const int32_t s = in[0].collectives[k].step;
        r.collectiveColumn.push_back(s >= 0 && size_t(s) < columns ? s : -1);
    }

    // Each collective: the last arrival sets its end; the others wait for it.
    std::vector<std::vector<size_t>> lastByColumn(columns, std::vector<size_t>(n, 0));
    std::vector<size_t> collectivesByColumn(columns, 0);
    std::vector<std::map<std::string, size_t>> latePhases(n);
    r.collectiveLastNs.reserve(agreed);
    auto column = [&](size_t i, size_t k) -> int64_t {
        const int32_t s = in[i].collectives[k].step;
        return s >= 0 && size_t(s) < columns ? s : -1;
    };
    for (size_t k = 0; k < agreed; ++k) {
        int64_t last = INT64_MIN, second = INT64_MIN;
        size_t who = 0;
        for (size_t i = 0; i < n; ++i) {
            const int64_t arrive = in[i].collectives[k].startNs - offset[i];
            if (arrive > last)
                second = last, last = arrive, who = i;
            else if (arrive > second)
                second = arrive;
        }
        for (size_t i = 0; i < n; ++i) {
            const DigestCollective& c = in[i].collectives[k];
            const int64_t arrive = c.startNs - offset[i];
            const int64_t dur = c.endNs - c.startNs;
            const int64_t wait = std::clamp<int64_t>(last - arrive, 0, dur);
            r.ranks[i].collectiveNs += dur;
            r.ranks[i].waitNs += wait;
            r.ranks[i].transferNs += dur - wait;
            if (const int64_t s = column(i, k); s >= 0) {
                r.cells[i][size_t(s)].collectiveNs += dur;
                r.cells[i][size_t(s)].waitNs += wait;
            }
        }
        r.collectiveLastNs.push_back(last);
        if (!in[who].collectives[k].phase.empty()) ++latePhases[who][in[who].collectives[k].phase];
        RankSummary& rs = r.ranks[who];
        ++rs.lastArrivals;
        rs.lateNs += second == INT64_MIN ? 0 : last - second;
        if (const int64_t s = column(who, k); s >= 0) {
            ++r.cells[who][size_t(s)].lastArrivals;
            ++lastByColumn[size_t(s)][who];
            ++collectivesByColumn[size_t(s)];
        }
        // What the last rank did before arriving (measured when it was digested).
        const DigestCollective& c = in[who].collectives[k];
        const int64_t from = k > 0 ? in[who].collectives[k - 1].endNs : in[who].windowStartNs;
        if (c.startNs > from) {
            rs.lateStretchNs += c.startNs - from;
            rs.lateBusyNs += c.beforeBusyNs;
            for (size_t q = 0; q < kIdleCauseCount; ++q) rs.lateIdle[q] += c.beforeIdle[q];
        }
    }
    // The phase each rank was last in most often.
    for (size_t i = 0; i < n; ++i)
        for (const auto& [phase, count] : latePhases[i])
            if (count > r.ranks[i].latePhaseCount)
                r.ranks[i].latePhase = phase, r.ranks[i].latePhaseCount = count;
    std::vector<size_t> last(n);
    for (size_t i = 0; i < n; ++i) last[i] = r.ranks[i].lastArrivals;
    size_t best = 0;
    if (clearStraggler(last, agreed, best) >= 0) r.straggler = r.ranks[best].rank;
    r.stragglerShare = double(r.ranks[best].lastArrivals) / double(agreed);
    for (size_t s = 0; s < columns; ++s) {
        size_t b = 0;
        if (clearStraggler(lastByColumn[s], collectivesByColumn[s], b) >= 0)
            r.stepStraggler[s] = r.ranks[b].rank;
    }
    return r;
}

std::vector<std::string> crossRankSentences(const CrossRankResult& r) {
    using base::formatDuration;
    using base::formatPercent;
    std::vector<std::string> out;
    if (r.collectives > 0)
        out.push_back(std::to_string(r.collectives) + " collectives matched " + r.matching +
                      (r.clocksAligned
                           ? "; the ranks' clocks disagreed and were aligned on the collectives' "
                             "ends"
                           : "") +
                      ".");
    const RankSummary* s = nullptr;
    for (const RankSummary& x : r.ranks)
        if (x.rank == r.straggler) s = &x;
    if (s) {
        out.push_back("Straggler: rank " + std::to_string(r.straggler) + " arrives last at " +
                      formatPercent(r.stragglerShare) + " of the collectives, " +
                      formatDuration(s->lateNs) + " after the next-to-last rank in all" +
                      (s->latePhase.empty()
                           ? std::string()
                           : ", mostly at collectives launched in " + s->latePhase + " (" +
                                 std::to_string(s->latePhaseCount) + " of " +
                                 std::to_string(s->lastArrivals) + ")") +
                      "; its GPU's largest idle cause: " + std::string(idleCauseName(s->topCause)) +
                      " " + formatDuration(s->topCauseNs) + ".");
        if (s->lateStretchNs > 0) {
            std::vector<std::pair<int64_t, std::string>> parts{{s->lateBusyNs, "GPU busy"}};
            for (size_t k = 0; k < kIdleCauseCount; ++k)
                if (s->lateIdle[k] > 0)
                    parts.emplace_back(s->lateIdle[k], std::string(idleCauseName(IdleCause(k))));
            std::sort(parts.rbegin(), parts.rend());
            std::string line = "Before those late arrivals (" + formatDuration(s->lateStretchNs) +
                               " in all) it was: ";
            for (size_t i = 0; i < parts.size() && i < 4; ++i)
                line += (i ? ", " : "") + parts[i].second + " " +
                        formatPercent(double(parts[i].first) / double(s->lateStretchNs));
            out.push_back(line + ".");
        }
    }
    // The ranks whose time in collectives is mostly waiting for the last rank: their exposed
    // communication is the straggler's stall, not their transfer (one rank's own findings
    // cannot tell the two apart, so it is said here).
    if (s) {
        std::vector<const RankSummary*> waiting;
        double lo = 1, hi = 0;
        for (const RankSummary& x : r.ranks)
            if (x.rank != r.straggler && x.collectiveNs > 0 &&
                model::satMul(x.waitNs, 2) >= x.collectiveNs) {
                waiting.push_back(&x);
                const double w = double(x.waitNs) / double(x.collectiveNs);
                lo = std::min(lo, w), hi = std::max(hi, w);
            }
        if (!waiting.empty()) {
            std::string ranks;
            for (size_t i = 0; i < waiting.size(); ++i)
                ranks += (i ? ", " : "") + std::to_string(waiting[i]->rank);
            out.push_back("Waiting, not transferring: in collectives, rank" +
                          std::string(waiting.size() == 1 ? " " : "s ") + ranks + " wait " +
                          (waiting.size() == 1 ? formatPercent(lo)
                                               : formatPercent(lo) + "-" + formatPercent(hi)) +
                          " of the time for the last rank to arrive: their exposed communication "
                          "is rank " +
                          std::to_string(r.straggler) +
                          "'s stall, and the fix is there, not in overlapping their own.");
        }
    }
    if (!s && r.collectives > 0 && !r.ranks.empty()) {
        const RankSummary* most = &r.ranks.front();
        for (const RankSummary& x : r.ranks)
            if (x.lastArrivals > most->lastArrivals) most = &x;
        out.push_back("No clear straggler: the last arrival moves between ranks (most often rank " +
                      std::to_string(most->rank) + ", " + std::to_string(most->lastArrivals) +
                      " of " + std::to_string(r.collectives) + ").");
    }
    return out;
}

} // namespace stallscope::analysis
