#pragma once
#include "analysis_context.h"

namespace stallscope::analysis::detail {

/// CPU-side activity shared by every device's role breakdown.
struct CpuActivity {
    Intervals runtime;     // runtime / driver calls
    Intervals dataLoader;  // DataLoader ranges
    Intervals cpu;         // any CPU-side slice except ProfilerStep ranges
};

CpuActivity collectCpuActivity(const Context& c);

/// Utilisation, SM efficiency, occupancy, queues, communication overlap, utilisation
/// series, the role breakdown, and per-step figures (idle causes filled in by the caller).
DeviceMetrics computeDeviceMetrics(const Context& c, const DeviceActivity& d, const CpuActivity& cpu,
                                   const std::vector<Interval>& tiles);

/// The device's launch statistics over [lo, hi) (launch_stats.cpp).
LaunchStats computeLaunchStats(const Context& c, const DeviceActivity& d, int64_t lo, int64_t hi);

/// Priority role breakdown of [lo, hi) (Kernel > Memcpy > Memset > Communication > Runtime >
/// DataLoader > CPU exec > Other).
RoleBreakdown roleBreakdown(const Intervals& kernels, const Intervals& memcpy, const Intervals& memset,
                            const Intervals& comm, const CpuActivity& cpu, int64_t lo, int64_t hi);
/// roleBreakdown() of [lo, hi) and of each tile (sorted, disjoint, inside [lo, hi)) in one sweep.
void roleBreakdowns(const Intervals& kernels, const Intervals& memcpy, const Intervals& memset,
                    const Intervals& comm, const CpuActivity& cpu, int64_t lo, int64_t hi,
                    const std::vector<Interval>& tiles, RoleBreakdown& whole,
                    std::vector<RoleBreakdown>& perTile);

} // namespace stallscope::analysis::detail
