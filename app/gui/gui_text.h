#pragma once
// Durations as the GUI writes them, in one place.
#include <QString>

#include <cstdint>

namespace stallscope::gui {

/// "1.234 ms", "12.3 µs" with `decimals` after the point (none for ns), unit by magnitude.
QString durationText(int64_t ns, int decimals = 3);
/// One CSV field (RFC 4180): quoted, its quotes doubled, when it holds a comma, a quote or a
/// line break; as is otherwise.
QString csvField(QString value);
/// About four significant digits: "680.0 µs", "12.35 ms", "1.234 s".
QString significantDuration(int64_t ns);

} // namespace stallscope::gui
