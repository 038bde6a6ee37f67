#include "stallscope/reports/palette.h"

#include <cstdio>

namespace stallscope::reports {

using analysis::FindingSeverity;
using analysis::IdleCause;
using model::EventKind;

uint32_t causeRgb(IdleCause c) {
    switch (c) {
    case IdleCause::DataLoading: return 0xD63031;
    case IdleCause::BlockingCopy: return 0xE67E22;
    case IdleCause::HostSync: return 0xF1C40F;
    case IdleCause::LaunchOverhead: return 0x9B59B6;
    case IdleCause::OptimizerCpu: return 0x3498DB;
    case IdleCause::IoLoggingCheckpoint: return 0x1ABC9C;
    case IdleCause::CpuCompute: return 0x2980B9;
    case IdleCause::HostUntraced: return 0x95A5A6;
    case IdleCause::GpuDependency: return 0x27AE60;
    case IdleCause::Allocator: return 0xC0392B;
    case IdleCause::Setup: return 0x7F8C8D;
    case IdleCause::Jit: return 0x8E44AD;
    case IdleCause::Count: break;
    }
    return 0x808080;
}

uint32_t severityRgb(FindingSeverity s) {
    switch (s) {
    case FindingSeverity::High: return 0xD63031;
    case FindingSeverity::Medium: return 0xE67E22;
    case FindingSeverity::Low: return 0x3478C8;
    case FindingSeverity::Note: break;
    }
    return 0x7F8C8D;
}

uint32_t kindRgb(EventKind k) {
    switch (k) {
    case EventKind::CpuOp: return 0x6A9BD8;
    case EventKind::UserAnnotation: return 0xA98BE0;
    case EventKind::PythonFunction: return 0x5EC4CF;
    case EventKind::Runtime:
    case EventKind::Driver: return 0xE8A05C;
    case EventKind::Kernel: return 0x4DB56A;
    case EventKind::Memcpy: return 0xE9C046;
    case EventKind::Memset: return 0xA7C44F;
    case EventKind::GpuUserAnnotation: return 0xC59AD6;
    case EventKind::CudaSync: return 0xE06666;
    case EventKind::Communication: return 0xD568AE;
    default: break;
    }
    return 0xA9B0BA;
}

uint32_t familyRgb(std::string_view family) {
    // Matrix math in blues, attention violet, memory-bound work in warm colours, data
    // movement green, communication the kernel-kind's colour for communication.
    struct Entry {
        std::string_view family;
        uint32_t rgb;
    };
    static constexpr Entry kFamilies[] = {
        {"gemm", 0x1F5FAD},      {"grouped_gemm", 0x3D7DD8}, {"conv", 0x4A90C8},
        {"attention", 0x7B4FB8}, {"norm", 0x1A9A8A},         {"elementwise", 0xE08A1E},
        {"reduction", 0xB8860B}, {"optimizer", 0xC2548C},    {"copy", 0x4C9A3F},
        {"memset", 0x8FA98A},
    };
    if (family == "comm") return kindRgb(EventKind::Communication);
    for (const Entry& e : kFamilies)
        if (e.family == family) return e.rgb;
    return 0x9AA0A8;
}

uint32_t breakdownRgb(size_t category) {
    switch (category) { // the order of analysis::breakdownCategories()
    case 0: return kindRgb(EventKind::Kernel);
    case 1: return kindRgb(EventKind::Memcpy);
    case 2: return kindRgb(EventKind::Memset);
    case 3: return kindRgb(EventKind::Communication);
    case 4: return kindRgb(EventKind::Runtime);
    case 5: return causeRgb(IdleCause::DataLoading);
    case 6: return kindRgb(EventKind::CpuOp);
    default: break;
    }
    return 0xDADDE1;
}

std::string hexColor(uint32_t rgb) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%06x", rgb & 0xFFFFFFu);
    return buf;
}

uint32_t heatRgb(double t) {
    // Stops of a yellow-orange-red ramp (as ColorBrewer's YlOrRd, 5 classes).
    static constexpr uint32_t stops[] = {0xFFFFB2, 0xFECC5C, 0xFD8D3C, 0xF03B20, 0xBD0026};
    constexpr size_t n = sizeof stops / sizeof stops[0];
    if (!(t > 0)) return stops[0];
    if (t >= 1) return stops[n - 1];
    const double x = t * double(n - 1);
    const size_t i = size_t(x);
    const double f = x - double(i);
    auto mix = [&](int shift) {
        const double a = double((stops[i] >> shift) & 0xFF),
                     b = double((stops[i + 1] >> shift) & 0xFF);
        return uint32_t(a + (b - a) * f + 0.5) << shift;
    };
    return mix(16) | mix(8) | mix(0);
}

} // namespace stallscope::reports
