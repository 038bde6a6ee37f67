#include "gui_text.h"

#include <cmath>

namespace stallscope::gui {

QString durationText(int64_t ns, int decimals) {
    const double a = std::abs(double(ns));
    if (a >= 1e9) return QString::number(double(ns) / 1e9, 'f', decimals) + QStringLiteral(" s");
    if (a >= 1e6) return QString::number(double(ns) / 1e6, 'f', decimals) + QStringLiteral(" ms");
    if (a >= 1e3) return QString::number(double(ns) / 1e3, 'f', decimals) + QStringLiteral(" µs");
    return QString::number(ns) + QStringLiteral(" ns");
}

QString significantDuration(int64_t ns) {
    const double a = std::abs(double(ns));
    auto sig = [](double v, const char* unit) {
        const double m = std::abs(v);
        const int decimals = m >= 100 ? 1 : m >= 10 ? 2 : 3;
        return QString::number(v, 'f', decimals) + QString::fromUtf8(unit);
    };
    if (a >= 1e9) return sig(double(ns) / 1e9, " s");
    if (a >= 1e6) return sig(double(ns) / 1e6, " ms");
    if (a >= 1e3) return sig(double(ns) / 1e3, " µs");
    return QString::number(ns) + QStringLiteral(" ns");
}

} // namespace stallscope::gui
