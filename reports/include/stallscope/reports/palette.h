#pragma once
// Colours shared by the GUI and the reports (0xRRGGBB), so a cause or a severity looks the
// same on the screen, in HTML, in Markdown badges and in the PDF.
#include "stallscope/analysis/analysis.h"
#include "stallscope/model/event_kind.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace stallscope::reports {

uint32_t causeRgb(analysis::IdleCause c);
uint32_t severityRgb(analysis::FindingSeverity s);
/// Fill of an event kind on a light background (the GUI varies it by name).
uint32_t kindRgb(model::EventKind k);
/// Fill of a category of the time-per-step breakdown (analysis::breakdownCategories()
/// index): the colour of the event kind it is made of, data loading its cause's colour,
/// other (nothing traced) a light grey.
uint32_t breakdownRgb(size_t category);
/// A sequential heat colour for t in [0, 1]: pale yellow (low) through orange to dark red
/// (high), readable on white and for the common colour-vision deficiencies (one hue ramp).
uint32_t heatRgb(double t);
/// Fill of a kernel family ("gemm", "norm", ...: the kernel catalogue's names); grey for
/// "other" and names it does not know.
uint32_t familyRgb(std::string_view family);
/// "#rrggbb"
std::string hexColor(uint32_t rgb);

} // namespace stallscope::reports
