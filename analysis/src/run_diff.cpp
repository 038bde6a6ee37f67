#include "stallscope/analysis/run_diff.h"

#include "stallscope/analysis/flame_graph.h"
#include "stallscope/analysis/operator_groups.h"
#include "stallscope/analysis/regression.h"
#include "stallscope/analysis/replay.h"
#include "stallscope/base/text_format.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace stallscope::analysis {

using namespace model;

std::string_view findingStatusName(FindingStatus s) {
    switch (s) {
    case FindingStatus::Resolved: return "resolved";
    case FindingStatus::New: return "new";
    case FindingStatus::Persisting: return "persisting";
    }
    return "?";
}

std::string_view rowChangeName(RowChange c) {
    switch (c) {
    case RowChange::Added: return "added";
    case RowChange::Removed: return "removed";
    case RowChange::Faster: return "faster";
    case RowChange::Slower: return "slower";
    case RowChange::Same: return "same";
    }
    return "?";
}

namespace {

/// Steps of a side's window (1 without steps: figures are per window).
double unitsOf(const AnalysisResult& r, bool perStep) {
    return perStep ? double(std::max<size_t>(1, r.stepTimes.count)) : 1.0;
}

StepTimeChange stepChange(const AnalysisResult& b, const AnalysisResult& a) {
    StepTimeChange s;
    s.beforeNs = comparedStepTimeNs(b);
    s.afterNs = comparedStepTimeNs(a);
    s.beforeSteps = b.stepTimes.count;
    s.afterSteps = a.stepTimes.count;
    s.beforeStddevNs = b.stepTimes.cv * double(b.stepTimes.meanNs);
    s.afterStddevNs = a.stepTimes.cv * double(a.stepTimes.meanNs);
    s.changePct = s.beforeNs > 0 ? 100.0 * double(s.afterNs - s.beforeNs) / double(s.beforeNs) : 0;
    if (s.beforeSteps >= 2 && s.afterSteps >= 2)
        s.noiseNs = 2 * std::sqrt(s.beforeStddevNs * s.beforeStddevNs / double(s.beforeSteps) +
                                  s.afterStddevNs * s.afterStddevNs / double(s.afterSteps));
    return s;
}

/// Device pairs: the same id on both sides, else the i-th of each.
std::vector<std::pair<const DeviceMetrics*, const DeviceMetrics*>>
devicePairs(const AnalysisResult& b, const AnalysisResult& a) {
    std::vector<std::pair<const DeviceMetrics*, const DeviceMetrics*>> out;
    bool sameIds = b.devices.size() == a.devices.size();
    for (size_t i = 0; sameIds && i < b.devices.size(); ++i)
        sameIds = b.devices[i].device == a.devices[i].device;
    if (!sameIds) {
        std::set<int32_t> ids;
        for (const auto& d : a.devices) ids.insert(d.device);
        bool all = true;
        for (const auto& d : b.devices) all &= ids.count(d.device) > 0;
        sameIds = all && b.devices.size() == a.devices.size();
    }
    for (size_t i = 0; i < b.devices.size(); ++i) {
        const DeviceMetrics* other = nullptr;
        if (sameIds) {
            for (const auto& d : a.devices)
                if (d.device == b.devices[i].device) other = &d;
        } else if (i < a.devices.size())
            other = &a.devices[i];
        if (other) out.emplace_back(&b.devices[i], other);
    }
    return out;
}

DeviceChange deviceChange(const DeviceMetrics& b, const DeviceMetrics& a, double ub, double ua) {
    DeviceChange d;
    d.beforeDevice = b.device;
    d.afterDevice = a.device;
    d.beforeName = b.name;
    d.afterName = a.name;
    d.beforeUtilization = b.utilization;
    d.afterUtilization = a.utilization;
    d.beforeIdleNs = int64_t(std::llround(double(b.idleNs) / ub));
    d.afterIdleNs = int64_t(std::llround(double(a.idleNs) / ua));
    d.beforeBusyNs = int64_t(std::llround(double(b.busyNs) / ub));
    d.afterBusyNs = int64_t(std::llround(double(a.busyNs) / ua));
    for (size_t k = 0; k < kIdleCauseCount; ++k) {
        const int64_t nb = b.idle.causes[k].ns, na = a.idle.causes[k].ns;
        if (nb <= 0 && na <= 0) continue;
        d.causes.push_back({static_cast<IdleCause>(k), int64_t(std::llround(double(nb) / ub)),
                            int64_t(std::llround(double(na) / ua))});
    }
    std::stable_sort(
        d.causes.begin(), d.causes.end(), [](const CauseChange& x, const CauseChange& y) {
            return std::llabs(x.afterNs - x.beforeNs) > std::llabs(y.afterNs - y.beforeNs);
        });
    return d;
}

/// A finding's id with its device named as BEFORE's device of the pair: "cpu_dispatch/gpu1"
/// after is "cpu_dispatch/gpu0" when AFTER's GPU 1 is compared with BEFORE's GPU 0.
std::string pairedId(const Finding& f, const std::map<int32_t, int32_t>& toBefore) {
    const auto it = toBefore.find(f.device);
    if (it == toBefore.end() || it->first == it->second) return f.id;
    const std::string from = "/gpu" + std::to_string(it->first);
    const size_t at = f.id.find(from);
    if (at == std::string::npos) return f.id;
    const size_t end = at + from.size();
    if (end < f.id.size() && f.id[end] != '/') return f.id;
    return f.id.substr(0, at) + "/gpu" + std::to_string(it->second) + f.id.substr(end);
}

/// Findings matched by id (AFTER's GPU named as its BEFORE partner); savings and idle time
/// per step (`ub`, `ua`: the steps of each window, 1 without steps).
std::vector<FindingChange> findingChanges(const AnalysisResult& b, const AnalysisResult& a,
                                          const std::vector<DeviceChange>& devices, double ub,
                                          double ua) {
    std::map<int32_t, int32_t> toBefore;
    for (const auto& d : devices) toBefore[d.afterDevice] = d.beforeDevice;
    std::map<std::string, const Finding*> before, after;
    for (const auto& f : b.findings) before.emplace(f.id, &f);
    for (const auto& f : a.findings) after.emplace(pairedId(f, toBefore), &f);
    auto per = [](int64_t ns, double units) { return int64_t(std::llround(double(ns) / units)); };
    std::vector<FindingChange> out;
    for (const auto& [id, f] : before)
        if (!after.count(id))
            out.push_back({id,
                           id,
                           {},
                           f->title,
                           FindingStatus::Resolved,
                           per(f->savingNs, ub),
                           -1,
                           per(f->idleNs, ub),
                           -1});
    for (const auto& [id, f] : after)
        if (!before.count(id))
            out.push_back({f->id,
                           {},
                           f->id,
                           f->title,
                           FindingStatus::New,
                           -1,
                           per(f->savingNs, ua),
                           -1,
                           per(f->idleNs, ua)});
    for (const auto& [id, f] : after)
        if (auto it = before.find(id); it != before.end())
            out.push_back({id, id, f->id, f->title, FindingStatus::Persisting,
                           per(it->second->savingNs, ub), per(f->savingNs, ua),
                           per(it->second->idleNs, ub), per(f->idleNs, ua)});
    return out;
}

RowChange classify(const AlignedRow& r, double threshold) {
    if (!r.before.present()) return RowChange::Added;
    if (!r.after.present()) return RowChange::Removed;
    const bool gpu = r.gpuTimed;
    const double pb = r.before.perCallNs(gpu), pa = r.after.perCallNs(gpu);
    if (pb <= 0) return pa > 0 ? RowChange::Slower : RowChange::Same;
    const double rel = (pa - pb) / pb;
    if (rel <= -threshold) return RowChange::Faster;
    if (rel >= threshold) return RowChange::Slower;
    return RowChange::Same;
}

void sortRows(std::vector<AlignedRow>& rows) {
    std::stable_sort(rows.begin(), rows.end(), [](const AlignedRow& x, const AlignedRow& y) {
        const double dx = std::abs(x.deltaNs()), dy = std::abs(y.deltaNs());
        if (dx != dy) return dx > dy;
        return std::max(x.compared(x.before), x.compared(x.after)) >
               std::max(y.compared(y.before), y.compared(y.after));
    });
}

// ---------------------------------------------------------------- operators

std::vector<AlignedRow> alignOperators(const Trace& tb, const AnalysisResult& b, double ub,
                                       const Trace& ta, const AnalysisResult& a, double ua,
                                       double threshold) {
    std::map<std::tuple<std::string, std::string, std::string>, AlignedRow> rows;
    auto add = [&](const Trace& t, const AnalysisResult& r, double units, bool after) {
        const OperatorGroups g = groupOperators(t, r, OperatorGrouping::InputShapesAndTypes);
        for (const OperatorGroup& o : g.rows) {
            const size_t nl = o.detail.find('\n');
            std::string shapes = nl == std::string::npos ? o.detail : o.detail.substr(0, nl);
            std::string dtypes = nl == std::string::npos ? std::string() : o.detail.substr(nl + 1);
            std::string name(t.str(o.stat.name));
            AlignedRow& row = rows[{name, shapes, dtypes}];
            row.name = std::move(name);
            row.shapes = std::move(shapes);
            row.dtypes = std::move(dtypes);
            RowSide& s = after ? row.after : row.before;
            s.calls = o.stat.count;
            s.totalNs = o.stat.totalNs;
            s.selfNs = o.stat.selfNs;
            s.gpuNs = o.stat.gpuNs;
            s.units = units;
            s.example = o.stat.example;
        }
    };
    add(tb, b, ub, false);
    add(ta, a, ua, true);
    std::vector<AlignedRow> out;
    out.reserve(rows.size());
    for (auto& [k, r] : rows) {
        r.gpuTimed = (!r.before.present() || r.before.gpuNs > 0) &&
                     (!r.after.present() || r.after.gpuNs > 0);
        r.change = classify(r, threshold);
        out.push_back(std::move(r));
    }
    sortRows(out);
    return out;
}

// ---------------------------------------------------------------- kernels

std::vector<AlignedRow> alignKernels(const Trace& tb, const AnalysisResult& b, double ub,
                                     const Trace& ta, const AnalysisResult& a, double ua,
                                     double threshold) {
    std::map<std::pair<std::string, std::string>, AlignedRow> rows; // (op, kernel)
    auto add = [&](const Trace& t, const AnalysisResult& r, double units, bool after) {
        for (const KernelOperatorStat& k : r.stats.kernelsByOperator) {
            std::string op = k.op.valid() ? std::string(t.str(k.op)) : std::string();
            std::string name(t.str(k.kernel));
            AlignedRow& row = rows[{op, name}];
            row.name = std::move(name);
            row.op = std::move(op);
            row.gpuTimed = true;
            RowSide& s = after ? row.after : row.before;
            s.calls += k.count;
            s.totalNs = satAdd(s.totalNs, k.totalNs);
            s.selfNs = s.gpuNs = s.totalNs;
            s.units = units;
            if (!s.example.valid()) s.example = k.example;
        }
    };
    add(tb, b, ub, false);
    add(ta, a, ua, true);
    // Rows of one side only, by (operator, family): where both sides have some, the kernels
    // of different names did the same job (another library, vendor or algorithm).
    std::map<std::pair<std::string, KernelFamily>, std::vector<AlignedRow*>> lone;
    for (auto& [k, r] : rows) {
        r.family = classifyKernel(r.name).family;
        if (r.before.present() != r.after.present() && r.family != KernelFamily::Other)
            lone[{r.op, r.family}].push_back(&r);
    }
    std::vector<AlignedRow> out;
    std::set<const AlignedRow*> merged;
    for (auto& [key, group] : lone) {
        bool hasBefore = false, hasAfter = false;
        for (const AlignedRow* r : group) (r->before.present() ? hasBefore : hasAfter) = true;
        if (!hasBefore || !hasAfter) continue;
        AlignedRow f;
        f.name = std::string(kernelFamilyName(key.second)) + " kernels";
        f.op = key.first;
        f.family = key.second;
        f.byFamily = true;
        f.gpuTimed = true;
        std::stable_sort(group.begin(), group.end(), [](const AlignedRow* x, const AlignedRow* y) {
            return std::max(x->before.totalNs, x->after.totalNs) >
                   std::max(y->before.totalNs, y->after.totalNs);
        });
        for (const AlignedRow* r : group) {
            const bool after = r->after.present();
            const RowSide& from = after ? r->after : r->before;
            RowSide& to = after ? f.after : f.before;
            to.calls += from.calls;
            to.totalNs = satAdd(to.totalNs, from.totalNs);
            to.selfNs = to.gpuNs = to.totalNs;
            to.units = from.units;
            if (!to.example.valid()) to.example = from.example;
            to.names.push_back(r->name);
            merged.insert(r);
        }
        f.change = classify(f, threshold);
        out.push_back(std::move(f));
    }
    for (auto& [k, r] : rows) {
        if (merged.count(&r)) continue;
        r.change = classify(r, threshold);
        out.push_back(std::move(r));
    }
    sortRows(out);
    return out;
}

// ---------------------------------------------------------------- predictions

std::vector<Prediction> predictions(const Trace& tb, const AnalysisResult& b,
                                    const AnalysisResult& a, const AnalysisOptions& options,
                                    const std::vector<FindingChange>& changes, double ub) {
    std::vector<Prediction> out;
    if (b.findings.empty()) return out;
    std::map<std::string, const FindingChange*> change;
    for (const auto& c : changes) change.emplace(c.id, &c);
    // A fix AFTER applied: its finding is gone, or its idle time per step at least halved.
    std::map<int32_t, std::vector<const Finding*>> applied;
    for (const Finding& f : b.findings) {
        if (f.replayFix == Fix::Count) continue;
        const FindingChange* c = change.at(f.id);
        const bool gone = c->status == FindingStatus::Resolved;
        const bool halved = c->status == FindingStatus::Persisting && c->beforeIdleNs > 0 &&
                            2 * c->afterIdleNs <= c->beforeIdleNs; // both per step
        if (gone || halved) applied[f.device].push_back(&f);
    }
    const int64_t beforeNs = comparedStepTimeNs(b), afterNs = comparedStepTimeNs(a);
    for (const auto& [deviceId, fs] : applied) {
        const int32_t device = deviceId; // captured below (clang 14 captures no bindings)
        const int64_t replayed = replayWindowNs(tb, options, device, 0);
        if (replayed <= 0) continue;
        auto predict = [&](std::vector<const Finding*> group) {
            Prediction p;
            p.device = device;
            for (const Finding* f : group) {
                p.findingIds.push_back(f->id);
                p.fixes |= fixBit(f->replayFix);
            }
            const int64_t fixed = replayWindowNs(tb, options, device, p.fixes);
            if (fixed < 0) return;
            p.beforeNs = beforeNs;
            p.predictedNs = beforeNs - int64_t(std::llround(double(replayed - fixed) / ub));
            p.afterNs = afterNs;
            out.push_back(std::move(p));
        };
        for (const Finding* f : fs) predict({f});
        std::set<Fix> distinct;
        for (const Finding* f : fs) distinct.insert(f->replayFix);
        if (distinct.size() > 1) predict(fs);
    }
    return out;
}

// ---------------------------------------------------------------- flame graph

DiffFlameGraph diffFlame(const Trace& tb, const AnalysisResult& b, double ub, const Trace& ta,
                         const AnalysisResult& a, double ua,
                         const std::pair<const DeviceMetrics*, const DeviceMetrics*>& dev) {
    DiffFlameGraph out;
    out.nodes.push_back({"all", -1, 0, 0, 0, {}, false});
    std::map<std::pair<int32_t, std::string>, int32_t> index;
    auto add = [&](const Trace& t, const AnalysisResult& r, int32_t device, double units,
                   bool after) {
        const FlameGraph g =
            buildFlameGraph(t, FlameMode::GpuTime, r.window.startNs, r.window.endNs, device);
        std::vector<int32_t> to(g.nodes.size(), 0);
        for (size_t i = 0; i < g.nodes.size(); ++i) {
            const FlameNode& n = g.nodes[i];
            int32_t m = 0;
            if (i > 0) {
                const int32_t parent = to[size_t(n.parent)];
                std::string name(flameNodeName(t, g, int32_t(i)));
                auto [it, fresh] = index.try_emplace({parent, name}, int32_t(out.nodes.size()));
                if (fresh) {
                    DiffFlameNode node;
                    node.name = std::move(name);
                    node.parent = parent;
                    node.depth = out.nodes[size_t(parent)].depth + 1;
                    node.gpuLeaf = isGpuLeaf(g, int32_t(i));
                    out.maxDepth = std::max(out.maxDepth, node.depth);
                    out.nodes.push_back(std::move(node));
                    out.nodes[size_t(parent)].children.push_back(it->second);
                }
                m = it->second;
            }
            to[i] = m;
            (after ? out.nodes[size_t(m)].afterNs : out.nodes[size_t(m)].beforeNs) +=
                int64_t(std::llround(double(n.totalNs) / units));
        }
    };
    add(tb, b, dev.first->device, ub, false);
    add(ta, a, dev.second->device, ua, true);
    for (DiffFlameNode& n : out.nodes)
        std::stable_sort(n.children.begin(), n.children.end(), [&](int32_t x, int32_t y) {
            const auto& nx = out.nodes[size_t(x)];
            const auto& ny = out.nodes[size_t(y)];
            return std::max(nx.beforeNs, nx.afterNs) > std::max(ny.beforeNs, ny.afterNs);
        });
    return out;
}

} // namespace

RunDiff diffRuns(const Trace& tb, const AnalysisResult& b, const Trace& ta, const AnalysisResult& a,
                 const AnalysisOptions& options, const DiffOptions& diff) {
    RunDiff d;
    d.step = stepChange(b, a);
    d.perStep = b.stepTimes.count > 0 && a.stepTimes.count > 0;
    const double ub = unitsOf(b, d.perStep), ua = unitsOf(a, d.perStep);
    if (!d.perStep)
        d.notes.push_back(b.stepTimes.count || a.stepTimes.count
                              ? "only one run has steps: the tables compare whole windows"
                              : "neither run has steps: the tables compare whole windows");
    if (d.step.noiseNs < 0 && d.perStep)
        d.notes.push_back("a run has a single step: its step-to-step spread is unknown, so the "
                          "change cannot be told from noise");
    const auto pairs = devicePairs(b, a);
    for (const auto& [db, da] : pairs) {
        d.devices.push_back(deviceChange(*db, *da, ub, ua));
        if (db->name != da->name && !db->name.empty() && !da->name.empty())
            d.notes.push_back("GPU " + std::to_string(db->device) + " before is " + db->name +
                              ", GPU " + std::to_string(da->device) + " after is " + da->name +
                              ": kernels of different names doing one job are matched by "
                              "family under their operator");
    }
    if (pairs.empty() && (!b.devices.empty() || !a.devices.empty()))
        d.notes.push_back("the runs have no GPU in common to compare");
    d.findings = findingChanges(b, a, d.devices, ub, ua);
    d.operators = alignOperators(tb, b, ub, ta, a, ua, diff.changeThreshold);
    d.kernels = alignKernels(tb, b, ub, ta, a, ua, diff.changeThreshold);
    d.predictions = predictions(tb, b, a, options, d.findings, ub);
    if (diff.flame && !pairs.empty()) d.flame = diffFlame(tb, b, ub, ta, a, ua, pairs.front());
    return d;
}

} // namespace stallscope::analysis
