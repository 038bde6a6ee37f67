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

} // namespace stallscope::gui
