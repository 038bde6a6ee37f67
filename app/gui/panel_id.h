#pragma once
// The bottom views' ids, one per line of panels.def. panel.h declares the enum opaque, so
// adding a panel recompiles only the files that name one.

namespace stallscope::gui {

enum class PanelId {
#define STALLSCOPE_PANEL(Name) Name,
#include "panels.def"
#undef STALLSCOPE_PANEL
};

} // namespace stallscope::gui
