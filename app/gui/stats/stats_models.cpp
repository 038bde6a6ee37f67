#include "stats_models.h"

#include "stallscope/base/demangle.h"

#include <QCoreApplication>

#include <cstdint>

namespace stallscope::gui {

namespace fmt = statsformat;

namespace {

QString tr(const char* s) { return QCoreApplication::translate("StatsModels", s); }

QString fromView(std::string_view v) { return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size())); }

int64_t mean(int64_t total, uint64_t count) { return count ? total / static_cast<int64_t>(count) : 0; }

double share(int64_t part, int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

template <class Rows, class Get>
int64_t sumOf(const Rows& table, const std::vector<int>& rows, Get get) {
    int64_t s = 0;
    for (int r : rows) s += get(table[size_t(r)]);
    return s;
}

/// What a table's rows and their events are called, singular and plural.
struct Nouns {
    const char* row;
    const char* rows;
    const char* call;
    const char* calls;
    const char* what;  // what the time is: "total", "self time"
};

QString counted(uint64_t n, const char* one, const char* many) {
    return fmt::count(n) + QLatin1Char(' ') + tr(n == 1 ? one : many);
}

/// "312 kernels, 4,512 calls, 603.6 ms total" or, filtered,
/// "12 of 312 kernels, 512 calls, 45.6 ms of 603.6 ms total (7.6 %)".
QString summaryLine(const Nouns& n, int shown, size_t all, uint64_t calls, int64_t ns, int64_t allNs,
                    bool filtered) {
    if (all == 0) return tr("No %1 in the analysis window").arg(tr(n.rows));
    QString s = filtered ? fmt::count(uint64_t(shown)) + tr(" of ") + counted(all, n.row, n.rows)
                         : counted(all, n.row, n.rows);
    s += QStringLiteral(", ") + counted(calls, n.call, n.calls) + QStringLiteral(", ");
    if (filtered)
        return s + tr("%1 of %2 %3 (%4)")
                       .arg(fmt::durationShort(ns), fmt::durationShort(allNs), tr(n.what),
                            fmt::percent(100.0 * share(ns, allNs)));
    return s + fmt::durationShort(ns) + QLatin1Char(' ') + tr(n.what);
}

} // namespace

// ---------------------------------------------------------------- kernels

KernelStatsModel::KernelStatsModel(QObject* parent)
    : StatsTableModel(
          {{tr("Name"),
            tr("Kernel name as the trace reports it, C++ names demangled (the event's details show "
               "both). Hover a name to see all of it."),
            false},
           {tr("Calls"), tr("Executions of the kernel in the analysis window.")},
           {tr("Total"), tr("Sum of the kernel's GPU durations in the analysis window.")},
           {tr("Mean"), tr("Mean duration of one execution (Total / Calls).")},
           {tr("Min"), tr("Shortest single execution.")},
           {tr("Max"), tr("Longest single execution.")},
           {tr("% of kernel time"), tr("Share of all kernel time in the window (durations summed; "
                                       "kernels overlapping on several "
                                       "streams count in full).")},
           {tr("Blocks/SM"),
            tr("Mean thread blocks per SM, weighted by duration. Below 1 some SMs had no work: the "
               "grid is "
               "too small for the GPU. Empty when the trace has no 'blocks per SM' values.")},
           {tr("Occupancy %"), tr("Estimated achieved occupancy (Kineto's 'est. achieved occupancy "
                                  "%'), weighted by duration: "
                                  "resident warps as a share of the SM's maximum.")},
           {tr("Tensor Cores"), tr("Yes when the kernel's name shows that it runs on Tensor Cores "
                                   "(hmma, xmma, tf32, bf16, "
                                   "tensorop, ...).")},
           {tr("TC eligible"),
            tr("Yes when the kernel is a matrix multiply or convolution (the kernel catalogue's "
               "GEMM "
               "family): work Tensor Cores could run. Eligible and not on Tensor Cores is the time "
               "FP16/BF16 or TF32 could speed up (the TensorBoard plugin's column).")}},
          parent) {}

int KernelStatsModel::load() {
    const auto& k = stats().kernels;
    m_totalNs = 0;
    m_names.reserve(k.size());
    for (const analysis::KernelStat& s : k) {
        m_names.push_back(QString::fromStdString(base::demangle(trace().str(s.name))));
        m_totalNs += s.totalNs;
    }
    return static_cast<int>(k.size());
}

QString KernelStatsModel::text(int row, int column) const {
    const analysis::KernelStat& s = stats().kernels[size_t(row)];
    switch (column) {
    case Name: return name(row);
    case Calls: return fmt::count(s.count);
    case Total: return fmt::duration(s.totalNs);
    case Mean: return fmt::duration(mean(s.totalNs, s.count));
    case Min: return fmt::duration(s.minNs);
    case Max: return fmt::duration(s.maxNs);
    case Share: return fmt::percent(100.0 * share(s.totalNs, m_totalNs));
    case BlocksPerSm:
        return s.meanBlocksPerSm < 0 ? QStringLiteral("–") : QString::number(s.meanBlocksPerSm, 'f', 2);
    case Occupancy: return s.meanOccupancy < 0 ? QStringLiteral("–") : fmt::percent(s.meanOccupancy);
    case TensorCores: return s.tensorCores ? tr("Yes") : tr("No");
    case TcEligible: return s.gemmOrConv ? tr("Yes") : tr("No");
    default: return {};
    }
}

QVariant KernelStatsModel::sortValue(int row, int column) const {
    const analysis::KernelStat& s = stats().kernels[size_t(row)];
    switch (column) {
    case Name: return name(row);
    case Calls: return qulonglong(s.count);
    case Total: return qlonglong(s.totalNs);
    case Mean: return qlonglong(mean(s.totalNs, s.count));
    case Min: return qlonglong(s.minNs);
    case Max: return qlonglong(s.maxNs);
    case Share: return 100.0 * share(s.totalNs, m_totalNs);
    case BlocksPerSm: return s.meanBlocksPerSm;
    case Occupancy: return s.meanOccupancy;
    case TensorCores: return int(s.tensorCores);
    case TcEligible: return int(s.gemmOrConv);
    default: return {};
    }
}

model::SliceId KernelStatsModel::example(int row) const { return stats().kernels[size_t(row)].example; }

double KernelStatsModel::bar(int row, int column) const {
    return column == Share ? share(stats().kernels[size_t(row)].totalNs, m_totalNs) : -1;
}

bool KernelStatsModel::muted(int row, int column) const {
    const analysis::KernelStat& s = stats().kernels[size_t(row)];
    return (column == BlocksPerSm && s.meanBlocksPerSm < 0) ||
           (column == Occupancy && s.meanOccupancy < 0) ||
           (column == TensorCores && !s.tensorCores) || (column == TcEligible && !s.gemmOrConv);
}

QString KernelStatsModel::summary(const std::vector<int>& rows, bool filtered) const {
    if (!haveData()) return tr("No trace loaded");
    const auto& k = stats().kernels;
    static constexpr Nouns kNouns{"kernel", "kernels", "call", "calls", "total"};
    return summaryLine(kNouns, int(rows.size()), k.size(),
                       uint64_t(sumOf(k, rows, [](const auto& s) { return int64_t(s.count); })),
                       sumOf(k, rows, [](const auto& s) { return s.totalNs; }), m_totalNs, filtered);
}

// ---------------------------------------------------------------- operators

OperatorStatsModel::OperatorStatsModel(QObject* parent)
    : StatsTableModel(
          {{tr("Name"), tr("CPU operator (aten:: ops and other cpu_op events)."), false},
           {tr("Input shapes"), tr("The group's input shapes or call stack."), false},
           {tr("Calls"), tr("Calls of the operator in the analysis window.")},
           {tr("Host self"), tr("Exclusive CPU time: the operator's own time minus the events "
                                "nested directly inside it.")},
           {tr("Host total"),
            tr("Inclusive CPU time: wall time on the thread, nested calls included.")},
           {tr("Device self"), tr("GPU time (kernels, copies, memsets) of the work the operator "
                                  "launched itself, with no "
                                  "other operator in between.")},
           {tr("Device total"), tr("GPU time (kernels, copies, memsets) of the work launched from "
                                   "inside the operator, at any "
                                   "depth.")},
           {tr("% of host self"), tr("Share of all operators' self time in the window.")}},
          parent) {}

void OperatorStatsModel::setGrouping(analysis::OperatorGrouping g) {
    if (g == m_grouping) return;
    m_grouping = g;
    reload();
    Q_EMIT headerDataChanged(Qt::Horizontal, Detail, Detail);
}

QVariant OperatorStatsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && section == Detail && role == Qt::DisplayRole)
        return m_grouping == analysis::OperatorGrouping::CallStack ? tr("Call stack")
                                                                   : tr("Input shapes");
    if (orientation == Qt::Horizontal && section == Detail && role == Qt::ToolTipRole)
        return m_grouping == analysis::OperatorGrouping::CallStack
                   ? tr("Python frames around the calls, innermost first (the \"Call stack\" "
                        "argument or "
                        "the python_function events; recorded with with_stack=True).")
                   : tr("Input shapes of the calls, one list per input (\"Input Dims\"; recorded "
                        "with "
                        "record_shapes=True). [] is an input that is not a tensor.");
    return StatsTableModel::headerData(section, orientation, role);
}

int OperatorStatsModel::load() {
    m_groups = {};
    if (m_grouping == analysis::OperatorGrouping::Name) {
        for (const analysis::OperatorStat& o : stats().operators) {
            m_groups.rows.push_back({o, {}});
            m_groups.calls += o.count;
        }
    } else {
        m_groups = analysis::groupOperators(trace(), *analysis(), m_grouping);
    }
    m_selfNs = 0;
    m_names.reserve(m_groups.rows.size());
    for (const analysis::OperatorGroup& g : m_groups.rows) {
        m_names.push_back(fromView(trace().str(g.stat.name)));
        m_selfNs += g.stat.selfNs;
    }
    return static_cast<int>(m_groups.rows.size());
}

QString OperatorStatsModel::text(int row, int column) const {
    const analysis::OperatorGroup& g = m_groups.rows[size_t(row)];
    const analysis::OperatorStat& s = g.stat;
    switch (column) {
    case Name: return name(row);
    case Detail:
        if (g.detail.empty())
            return m_grouping == analysis::OperatorGrouping::Name ? QString()
                                                                  : tr("(none recorded)");
        return QString::fromStdString(g.detail).replace(QLatin1Char('\n'), QStringLiteral("  ‹  "));
    case Calls: return fmt::count(s.count);
    case Self: return fmt::duration(s.selfNs);
    case Total: return fmt::duration(s.totalNs);
    case DeviceSelf: return fmt::duration(s.gpuSelfNs);
    case GpuTime: return fmt::duration(s.gpuNs);
    case SelfShare: return fmt::percent(100.0 * share(s.selfNs, m_selfNs));
    default: return {};
    }
}

QVariant OperatorStatsModel::sortValue(int row, int column) const {
    const analysis::OperatorGroup& g = m_groups.rows[size_t(row)];
    const analysis::OperatorStat& s = g.stat;
    switch (column) {
    case Name: return name(row);
    case Detail: return QString::fromStdString(g.detail);
    case Calls: return qulonglong(s.count);
    case Self: return qlonglong(s.selfNs);
    case Total: return qlonglong(s.totalNs);
    case DeviceSelf: return qlonglong(s.gpuSelfNs);
    case GpuTime: return qlonglong(s.gpuNs);
    case SelfShare: return 100.0 * share(s.selfNs, m_selfNs);
    default: return {};
    }
}

model::SliceId OperatorStatsModel::example(int row) const {
    return m_groups.rows[size_t(row)].stat.example;
}

double OperatorStatsModel::bar(int row, int column) const {
    return column == SelfShare ? share(m_groups.rows[size_t(row)].stat.selfNs, m_selfNs) : -1;
}

bool OperatorStatsModel::muted(int row, int column) const {
    const analysis::OperatorGroup& g = m_groups.rows[size_t(row)];
    return (column == Detail && g.detail.empty()) ||
           (column == DeviceSelf && g.stat.gpuSelfNs == 0) ||
           (column == GpuTime && g.stat.gpuNs == 0);
}

QString OperatorStatsModel::toolTip(int row, int column) const {
    if (column != Detail) return StatsTableModel::toolTip(row, column);
    const std::string& d = m_groups.rows[size_t(row)].detail;
    return d.empty() ? QString() : QString::fromStdString(d);
}

QString OperatorStatsModel::summary(const std::vector<int>& rows, bool filtered) const {
    if (!haveData()) return tr("No trace loaded");
    const auto& o = m_groups.rows;
    static constexpr Nouns kNouns{"operator", "operators", "call", "calls", "self time"};
    static constexpr Nouns kGroups{"group", "groups", "call", "calls", "self time"};
    QString s = summaryLine(
        m_grouping == analysis::OperatorGrouping::Name ? kNouns : kGroups, int(rows.size()),
        o.size(), uint64_t(sumOf(o, rows, [](const auto& g) { return int64_t(g.stat.count); })),
        sumOf(o, rows, [](const auto& g) { return g.stat.selfNs; }), m_selfNs, filtered);
    if (m_grouping == analysis::OperatorGrouping::Name || o.empty()) return s;
    const bool shapes = m_grouping == analysis::OperatorGrouping::InputShapes;
    if (m_groups.callsWithDetail == 0)
        return s + (shapes
                        ? tr(" — this trace has no input shapes (profile with record_shapes=True)")
                        : tr(" — this trace has no call stacks (profile with with_stack=True)"));
    if (m_groups.callsWithDetail < m_groups.calls)
        return s + tr(" — %1 of %2 calls have %3")
                       .arg(fmt::count(m_groups.callsWithDetail), fmt::count(m_groups.calls),
                            shapes ? tr("shapes") : tr("a stack"));
    return s;
}

// ---------------------------------------------------------------- kernels by operator

KernelOperatorStatsModel::KernelOperatorStatsModel(QObject* parent)
    : StatsTableModel(
          {{tr("Operator"),
            tr("The innermost CPU operator around the kernel's launch call; \"(no operator)\" for "
               "kernels launched outside any."),
            false},
           {tr("Kernel"), tr("Kernel name, C++ names demangled."), false},
           {tr("Calls"), tr("Executions of the kernel launched from this operator.")},
           {tr("Total"), tr("Sum of their GPU durations in the analysis window.")},
           {tr("Mean"), tr("Mean duration of one execution.")},
           {tr("Min"), tr("Shortest single execution.")},
           {tr("Max"), tr("Longest single execution.")},
           {tr("% of kernel time"), tr("Share of all kernel time in the window.")}},
          parent) {}

int KernelOperatorStatsModel::load() {
    const auto& k = stats().kernelsByOperator;
    m_totalNs = 0;
    m_kernels.clear();
    m_names.reserve(k.size());
    m_kernels.reserve(k.size());
    for (const analysis::KernelOperatorStat& s : k) {
        m_names.push_back(s.op.valid() ? fromView(trace().str(s.op)) : tr("(no operator)"));
        m_kernels.push_back(QString::fromStdString(base::demangle(trace().str(s.kernel))));
        m_totalNs += s.totalNs;
    }
    return static_cast<int>(k.size());
}

QString KernelOperatorStatsModel::text(int row, int column) const {
    const analysis::KernelOperatorStat& s = stats().kernelsByOperator[size_t(row)];
    switch (column) {
    case Operator: return name(row);
    case Kernel: return m_kernels[size_t(row)];
    case Calls: return fmt::count(s.count);
    case Total: return fmt::duration(s.totalNs);
    case Mean: return fmt::duration(mean(s.totalNs, s.count));
    case Min: return fmt::duration(s.minNs);
    case Max: return fmt::duration(s.maxNs);
    case Share: return fmt::percent(100.0 * share(s.totalNs, m_totalNs));
    default: return {};
    }
}

QVariant KernelOperatorStatsModel::sortValue(int row, int column) const {
    const analysis::KernelOperatorStat& s = stats().kernelsByOperator[size_t(row)];
    switch (column) {
    case Operator: return name(row);
    case Kernel: return m_kernels[size_t(row)];
    case Calls: return qulonglong(s.count);
    case Total: return qlonglong(s.totalNs);
    case Mean: return qlonglong(mean(s.totalNs, s.count));
    case Min: return qlonglong(s.minNs);
    case Max: return qlonglong(s.maxNs);
    case Share: return 100.0 * share(s.totalNs, m_totalNs);
    default: return {};
    }
}

model::SliceId KernelOperatorStatsModel::example(int row) const {
    return stats().kernelsByOperator[size_t(row)].example;
}

double KernelOperatorStatsModel::bar(int row, int column) const {
    return column == Share ? share(stats().kernelsByOperator[size_t(row)].totalNs, m_totalNs) : -1;
}

bool KernelOperatorStatsModel::muted(int row, int column) const {
    return column == Operator && !stats().kernelsByOperator[size_t(row)].op.valid();
}

QString KernelOperatorStatsModel::toolTip(int row, int column) const {
    if (column == Kernel) return m_kernels[size_t(row)];
    return StatsTableModel::toolTip(row, column);
}

QString KernelOperatorStatsModel::summary(const std::vector<int>& rows, bool filtered) const {
    if (!haveData()) return tr("No trace loaded");
    const auto& k = stats().kernelsByOperator;
    static constexpr Nouns kNouns{"operator-kernel pair", "operator-kernel pairs", "call", "calls",
                                  "total"};
    return summaryLine(kNouns, int(rows.size()), k.size(),
                       uint64_t(sumOf(k, rows, [](const auto& s) { return int64_t(s.count); })),
                       sumOf(k, rows, [](const auto& s) { return s.totalNs; }), m_totalNs,
                       filtered);
}

// ---------------------------------------------------------------- collectives

CollectiveStatsModel::CollectiveStatsModel(QObject* parent)
    : StatsTableModel(
          {{tr("Collective"),
            tr("Collective type, from the kernel's NCCL arguments, the nccl:* range or "
               "record_param_comms "
               "around its launch, or the kernel name; \"unknown\" when none says."),
            false},
           {tr("Algorithm"),
            tr("Algorithm and protocol named by the NCCL kernels (RING, TREE; LL, LL128, SIMPLE)."),
            false},
           {tr("Type"), tr("Element type of the messages; \"mixed\" when the calls differ."),
            false},
           {tr("Calls"), tr("Collective kernels of this type in the analysis window.")},
           {tr("Total"), tr("Their GPU time. It includes waiting for the other ranks to arrive.")},
           {tr("Mean"), tr("Mean kernel time of one call.")},
           {tr("Bytes"),
            tr("Total message size of the calls whose size the trace records (nccl-tests' S: "
               "the larger of input and output).")},
           {tr("Mean size"), tr("Mean message size of those calls.")},
           {tr("Ranks"),
            tr("Ranks in the group (\"Group size\"); with no group recorded, the trace's "
               "world size (distributedInfo), marked *.")},
           {tr("Alg GB/s"),
            tr("Algorithm bandwidth: bytes / kernel time of the sized calls (10^9 bytes/s).")},
           {tr("Bus GB/s"), tr("Bus bandwidth as nccl-tests defines it: algorithm bandwidth x "
                               "2(n-1)/n for all-reduce, "
                               "x (n-1)/n for all-gather, reduce-scatter and all-to-all, x 1 "
                               "otherwise. Compare it with "
                               "the link's bandwidth.")}},
          parent) {}

int CollectiveStatsModel::load() {
    const auto& c = stats().collectives;
    m_totalNs = 0;
    m_names.reserve(c.size());
    for (const analysis::CollectiveStat& s : c) {
        m_names.push_back(QString::fromStdString(s.type));
        m_totalNs += s.totalNs;
    }
    return static_cast<int>(c.size());
}

QString CollectiveStatsModel::text(int row, int column) const {
    const analysis::CollectiveStat& s = stats().collectives[size_t(row)];
    switch (column) {
    case Type: return name(row);
    case Algorithms:
        return s.algorithms.empty() ? QStringLiteral("–") : QString::fromStdString(s.algorithms);
    case Dtype: return s.dtype.empty() ? QStringLiteral("–") : QString::fromStdString(s.dtype);
    case Calls: return fmt::count(s.count);
    case Total: return fmt::duration(s.totalNs);
    case Mean: return fmt::duration(mean(s.totalNs, s.count));
    case Bytes: return s.sizedCount ? fmt::bytes(s.bytes) : QStringLiteral("–");
    case MeanBytes:
        return s.sizedCount ? fmt::bytes(s.bytes / static_cast<int64_t>(s.sizedCount))
                            : QStringLiteral("–");
    case Group:
        if (s.groupSize < 0) return QStringLiteral("–");
        if (s.groupSize == 0) return tr("mixed");
        return QString::number(s.groupSize) + (s.groupFromWorld ? QStringLiteral("*") : QString());
    case AlgBw: return s.algGbps < 0 ? QStringLiteral("–") : QString::number(s.algGbps, 'f', 2);
    case BusBw: return s.busGbps < 0 ? QStringLiteral("–") : QString::number(s.busGbps, 'f', 2);
    default: return {};
    }
}

QVariant CollectiveStatsModel::sortValue(int row, int column) const {
    const analysis::CollectiveStat& s = stats().collectives[size_t(row)];
    switch (column) {
    case Type: return name(row);
    case Algorithms: return QString::fromStdString(s.algorithms);
    case Dtype: return QString::fromStdString(s.dtype);
    case Calls: return qulonglong(s.count);
    case Total: return qlonglong(s.totalNs);
    case Mean: return qlonglong(mean(s.totalNs, s.count));
    case Bytes: return qlonglong(s.bytes);
    case MeanBytes:
        return qlonglong(s.sizedCount ? s.bytes / static_cast<int64_t>(s.sizedCount) : 0);
    case Group: return s.groupSize;
    case AlgBw: return s.algGbps;
    case BusBw: return s.busGbps;
    default: return {};
    }
}

model::SliceId CollectiveStatsModel::example(int row) const {
    return stats().collectives[size_t(row)].example;
}

double CollectiveStatsModel::bar(int row, int column) const {
    return column == Total ? share(stats().collectives[size_t(row)].totalNs, m_totalNs) : -1;
}

bool CollectiveStatsModel::muted(int row, int column) const {
    const analysis::CollectiveStat& s = stats().collectives[size_t(row)];
    return ((column == Bytes || column == MeanBytes) && s.sizedCount == 0) ||
           (column == AlgBw && s.algGbps < 0) || (column == BusBw && s.busGbps < 0) ||
           (column == Group && s.groupSize < 0);
}

QString CollectiveStatsModel::toolTip(int row, int column) const {
    const analysis::CollectiveStat& s = stats().collectives[size_t(row)];
    if ((column == Bytes || column == MeanBytes) && s.sizedCount)
        return tr("%1 of %2 calls have a recorded size; smallest %3, largest %4")
            .arg(fmt::count(s.sizedCount), fmt::count(s.count), fmt::bytes(s.minBytes),
                 fmt::bytes(s.maxBytes));
    if (column == Group && s.groupFromWorld)
        return tr(
            "No call records its group size: this is the trace's world size (distributedInfo), "
            "right when the collectives use the default group.");
    return StatsTableModel::toolTip(row, column);
}

QString CollectiveStatsModel::summary(const std::vector<int>& rows, bool filtered) const {
    if (!haveData()) return tr("No trace loaded");
    const auto& c = stats().collectives;
    static constexpr Nouns kNouns{"collective type", "collective types", "call", "calls", "total"};
    QString s =
        summaryLine(kNouns, int(rows.size()), c.size(),
                    uint64_t(sumOf(c, rows, [](const auto& x) { return int64_t(x.count); })),
                    sumOf(c, rows, [](const auto& x) { return x.totalNs; }), m_totalNs, filtered);
    // Computation / communication / overlap per GPU of this worker.
    for (const analysis::DeviceMetrics& d : analysis()->devices) {
        if (d.commNs <= 0) continue;
        s += tr("; GPU %1: communication %2, %3 of it (%4) overlapped with computation")
                 .arg(d.device)
                 .arg(fmt::durationShort(d.commNs), fmt::durationShort(d.commOverlapNs),
                      fmt::percent(100.0 * share(d.commOverlapNs, d.commNs)));
    }
    return s;
}

// ---------------------------------------------------------------- copies

CopyStatsModel::CopyStatsModel(QObject* parent)
    : StatsTableModel(
          {{tr("Kind"),
            tr("Direction (HtoD host to device, DtoH device to host, DtoD, HtoH, PtoP between devices) and "
               "source->destination memory. Copies from pageable host memory are synchronous with the host."),
            false},
           {tr("Count"), tr("Copies of this kind in the analysis window.")},
           {tr("Bytes"), tr("Bytes copied (decimal units: 1 MB = 1,000,000 bytes).")},
           {tr("Total time"), tr("Sum of the copies' GPU durations.")},
           {tr("GB/s"), tr("Achieved bandwidth: bytes / total time, in 10^9 bytes per second.")}},
          parent) {}

int CopyStatsModel::load() {
    const auto& c = stats().copies;
    m_totalNs = 0;
    m_names.reserve(c.size());
    for (const analysis::CopyStat& s : c) {
        m_names.push_back(QString::fromStdString(s.kind));
        m_totalNs += s.totalNs;
    }
    return static_cast<int>(c.size());
}

QString CopyStatsModel::text(int row, int column) const {
    const analysis::CopyStat& s = stats().copies[size_t(row)];
    switch (column) {
    case Kind: return name(row);
    case Count: return fmt::count(s.count);
    case Bytes: return fmt::bytes(s.bytes);
    case Total: return fmt::duration(s.totalNs);
    case Bandwidth: return QString::number(s.gbPerSecond, 'f', 2);
    default: return {};
    }
}

QVariant CopyStatsModel::sortValue(int row, int column) const {
    const analysis::CopyStat& s = stats().copies[size_t(row)];
    switch (column) {
    case Kind: return name(row);
    case Count: return qulonglong(s.count);
    case Bytes: return qlonglong(s.bytes);
    case Total: return qlonglong(s.totalNs);
    case Bandwidth: return s.gbPerSecond;
    default: return {};
    }
}

model::SliceId CopyStatsModel::example(int row) const { return stats().copies[size_t(row)].example; }

double CopyStatsModel::bar(int row, int column) const {
    return column == Total ? share(stats().copies[size_t(row)].totalNs, m_totalNs) : -1;
}

QString CopyStatsModel::toolTip(int row, int column) const {
    if (column == Bytes) return fmt::count(uint64_t(stats().copies[size_t(row)].bytes)) + tr(" bytes");
    if (column != Kind) return {};
    const QString& k = name(row);
    QString dir;
    if (k.startsWith(QLatin1String("HtoD"))) dir = tr("host to device");
    else if (k.startsWith(QLatin1String("DtoH"))) dir = tr("device to host");
    else if (k.startsWith(QLatin1String("DtoD"))) dir = tr("device to device");
    else if (k.startsWith(QLatin1String("HtoH"))) dir = tr("host to host");
    else if (k.startsWith(QLatin1String("PtoP"))) dir = tr("peer to peer (between devices)");
    QString tip = dir.isEmpty() ? k : k + QStringLiteral(": ") + dir;
    if (k.contains(QLatin1String("Pageable")))
        tip += tr("\nPageable host memory: the copy is staged through a pinned buffer and blocks the host. "
                  "Use pin_memory=True and non_blocking=True.");
    return tip;
}

QString CopyStatsModel::summary(const std::vector<int>& rows, bool filtered) const {
    if (!haveData()) return tr("No trace loaded");
    const auto& c = stats().copies;
    static constexpr Nouns kNouns{"copy kind", "copy kinds", "copy", "copies", "total"};
    QString s = summaryLine(kNouns, int(rows.size()), c.size(),
                            uint64_t(sumOf(c, rows, [](const auto& x) { return int64_t(x.count); })),
                            sumOf(c, rows, [](const auto& x) { return x.totalNs; }), m_totalNs, filtered);
    if (!c.empty()) s += QStringLiteral(", ") + fmt::bytes(sumOf(c, rows, [](const auto& x) { return x.bytes; }));
    return s;
}

// ---------------------------------------------------------------- runtime calls

RuntimeStatsModel::RuntimeStatsModel(QObject* parent)
    : StatsTableModel(
          {{tr("Name"),
            tr("CUDA runtime or driver call (cudaLaunchKernel, cudaMemcpyAsync, cudaStreamSynchronize, ...)."),
            false},
           {tr("Calls"), tr("Calls in the analysis window.")},
           {tr("Total"), tr("CPU time spent in the calls.")},
           {tr("Mean"), tr("Mean CPU time of one call (Total / Calls).")},
           {tr("Max"), tr("Longest single call. Long synchronisations and blocking copies show up here.")}},
          parent) {}

int RuntimeStatsModel::load() {
    const auto& r = stats().runtime;
    m_totalNs = 0;
    m_names.reserve(r.size());
    for (const analysis::RuntimeStat& s : r) {
        m_names.push_back(fromView(trace().str(s.name)));
        m_totalNs += s.totalNs;
    }
    return static_cast<int>(r.size());
}

QString RuntimeStatsModel::text(int row, int column) const {
    const analysis::RuntimeStat& s = stats().runtime[size_t(row)];
    switch (column) {
    case Name: return name(row);
    case Calls: return fmt::count(s.count);
    case Total: return fmt::duration(s.totalNs);
    case Mean: return fmt::duration(mean(s.totalNs, s.count));
    case Max: return fmt::duration(s.maxNs);
    default: return {};
    }
}

QVariant RuntimeStatsModel::sortValue(int row, int column) const {
    const analysis::RuntimeStat& s = stats().runtime[size_t(row)];
    switch (column) {
    case Name: return name(row);
    case Calls: return qulonglong(s.count);
    case Total: return qlonglong(s.totalNs);
    case Mean: return qlonglong(mean(s.totalNs, s.count));
    case Max: return qlonglong(s.maxNs);
    default: return {};
    }
}

model::SliceId RuntimeStatsModel::example(int row) const { return stats().runtime[size_t(row)].example; }

double RuntimeStatsModel::bar(int row, int column) const {
    return column == Total ? share(stats().runtime[size_t(row)].totalNs, m_totalNs) : -1;
}

QString RuntimeStatsModel::summary(const std::vector<int>& rows, bool filtered) const {
    if (!haveData()) return tr("No trace loaded");
    const auto& r = stats().runtime;
    static constexpr Nouns kNouns{"runtime function", "runtime functions", "call", "calls", "total"};
    return summaryLine(kNouns, int(rows.size()), r.size(),
                       uint64_t(sumOf(r, rows, [](const auto& s) { return int64_t(s.count); })),
                       sumOf(r, rows, [](const auto& s) { return s.totalNs; }), m_totalNs, filtered);
}

} // namespace stallscope::gui
