#include "gui_text.h"

#include "stallscope/base/text_format.h"

namespace stallscope::gui {

QString durationText(int64_t ns, int decimals) {
    return QString::fromStdString(
        base::formatDuration(ns, {decimals, decimals, decimals, true, false}));
}

QString significantDuration(int64_t ns) {
    return QString::fromStdString(base::formatDuration(ns, base::kDurationSignificant));
}

QString csvField(QString v) {
    if (v.contains(QLatin1Char(',')) || v.contains(QLatin1Char('"')) ||
        v.contains(QLatin1Char('\n')) || v.contains(QLatin1Char('\r')))
        v = QLatin1Char('"') + v.replace(QLatin1Char('"'), QLatin1String("\"\"")) +
            QLatin1Char('"');
    return v;
}

} // namespace stallscope::gui
