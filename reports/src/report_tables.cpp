// The statistics tables of a report.
#include "report_common.h"

#include "stallscope/base/text_format.h"

#include <cstdio>

namespace stallscope::reports::detail {

using base::formatBytes;
using base::formatCount;
using base::formatDuration;

using namespace analysis;

namespace {

std::string perSecond(double gbps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f GB/s", gbps);
    return buf;
}

} // namespace

void statistics(ReportDocument& doc, const ReportInput& in, const std::string& prefix, const ReportOptions& o) {
    const model::Trace& t = *in.trace;
    const StatsTables& s = in.analysis->stats;
    if (s.kernels.empty() && s.operators.empty() && s.copies.empty()) return;
    doc.heading(2, prefix + "Statistics", anchor(prefix + "statistics"));
    int64_t kernelTotal = 0;
    for (const auto& k : s.kernels) kernelTotal += k.totalNs;
    if (!s.kernels.empty()) {
        doc.heading(3, "Top kernels");
        Table tb;
        tb.header = {"Kernel", "Calls", "Total", "Mean", "Share", "Tensor Cores"};
        tb.rightAlign = {false, true, true, true, true, false};
        for (size_t i = 0; i < s.kernels.size() && i < o.tableRows; ++i) {
            const KernelStat& k = s.kernels[i];
            tb.rows.push_back({{{shortName(t.str(k.name)), Style::Code}}, plain(formatCount(k.count)),
                               plain(formatDuration(k.totalNs)),
                               plain(formatDuration(k.totalNs / int64_t(std::max<uint64_t>(1, k.count)))),
                               plain(pct(double(k.totalNs) / double(std::max<int64_t>(1, kernelTotal)))),
                               plain(k.tensorCores ? "yes" : k.gemmOrConv ? "no (GEMM/conv)" : "no")});
        }
        doc.table(std::move(tb));
    }
    if (!s.operators.empty()) {
        doc.heading(3, "Top CPU operators by self time");
        Table tb;
        tb.header = {"Operator", "Calls", "Self", "Total", "GPU work launched"};
        tb.rightAlign = {false, true, true, true, true};
        for (size_t i = 0; i < s.operators.size() && i < o.tableRows; ++i) {
            const OperatorStat& op = s.operators[i];
            tb.rows.push_back({{{shortName(t.str(op.name)), Style::Code}}, plain(formatCount(op.count)),
                               plain(formatDuration(op.selfNs)), plain(formatDuration(op.totalNs)),
                               plain(formatDuration(op.gpuNs))});
        }
        doc.table(std::move(tb));
    }
    if (!s.copies.empty()) {
        doc.heading(3, "Copies");
        Table tb;
        tb.header = {"Kind", "Count", "Bytes", "Time", "Throughput"};
        tb.rightAlign = {false, true, true, true, true};
        for (const CopyStat& c : s.copies)
            tb.rows.push_back({plain(c.kind), plain(formatCount(c.count)), plain(formatBytes(uint64_t(std::max<int64_t>(0, c.bytes)))),
                               plain(formatDuration(c.totalNs)), plain(perSecond(c.gbPerSecond))});
        doc.table(std::move(tb));
    }
    if (!s.runtime.empty()) {
        doc.heading(3, "Runtime calls");
        Table tb;
        tb.header = {"Call", "Count", "Total", "Longest"};
        tb.rightAlign = {false, true, true, true};
        for (size_t i = 0; i < s.runtime.size() && i < std::min<size_t>(o.tableRows, 8); ++i) {
            const RuntimeStat& r = s.runtime[i];
            tb.rows.push_back({{{shortName(t.str(r.name)), Style::Code}}, plain(formatCount(r.count)),
                               plain(formatDuration(r.totalNs)), plain(formatDuration(r.maxNs))});
        }
        doc.table(std::move(tb));
    }
}

} // namespace stallscope::reports::detail
