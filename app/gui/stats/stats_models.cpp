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
           {tr("Calls"), tr("Calls of the operator in the analysis window.")},
           {tr("Self"),
            tr("Exclusive CPU time: the operator's own time minus the events nested directly inside it.")},
           {tr("Total"), tr("Inclusive CPU time: wall time on the thread, nested calls included.")},
           {tr("GPU time launched"),
            tr("GPU time (kernels, copies, memsets) of the work launched from inside the operator, at any "
               "depth.")},
           {tr("% of self"), tr("Share of all operators' self time in the window.")}},
          parent) {}

int OperatorStatsModel::load() {
    const auto& o = stats().operators;
    m_selfNs = 0;
    m_names.reserve(o.size());
    for (const analysis::OperatorStat& s : o) {
        m_names.push_back(fromView(trace().str(s.name)));
        m_selfNs += s.selfNs;
    }
    return static_cast<int>(o.size());
}

QString OperatorStatsModel::text(int row, int column) const {
    const analysis::OperatorStat& s = stats().operators[size_t(row)];
    switch (column) {
    case Name: return name(row);
    case Calls: return fmt::count(s.count);
    case Self: return fmt::duration(s.selfNs);
    case Total: return fmt::duration(s.totalNs);
    case GpuTime: return fmt::duration(s.gpuNs);
    case SelfShare: return fmt::percent(100.0 * share(s.selfNs, m_selfNs));
    default: return {};
    }
}

QVariant OperatorStatsModel::sortValue(int row, int column) const {
    const analysis::OperatorStat& s = stats().operators[size_t(row)];
    switch (column) {
    case Name: return name(row);
    case Calls: return qulonglong(s.count);
    case Self: return qlonglong(s.selfNs);
    case Total: return qlonglong(s.totalNs);
    case GpuTime: return qlonglong(s.gpuNs);
    case SelfShare: return 100.0 * share(s.selfNs, m_selfNs);
    default: return {};
    }
}

model::SliceId OperatorStatsModel::example(int row) const { return stats().operators[size_t(row)].example; }

double OperatorStatsModel::bar(int row, int column) const {
    return column == SelfShare ? share(stats().operators[size_t(row)].selfNs, m_selfNs) : -1;
}

QString OperatorStatsModel::summary(const std::vector<int>& rows, bool filtered) const {
    if (!haveData()) return tr("No trace loaded");
    const auto& o = stats().operators;
    static constexpr Nouns kNouns{"operator", "operators", "call", "calls", "self time"};
    return summaryLine(kNouns, int(rows.size()), o.size(),
                       uint64_t(sumOf(o, rows, [](const auto& s) { return int64_t(s.count); })),
                       sumOf(o, rows, [](const auto& s) { return s.selfNs; }), m_selfNs, filtered);
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
