// A panel added as one file (this) plus one line in panels.def, by
// tests/extension/scratch_build.py: it names the trace it shows.
#include "main_window.h"
#include "panel.h"
#include "panel_id.h"

#include <QLabel>

namespace stallscope::gui {

extern const PanelInfo kPanelScratch{
    PanelId::Scratch, "scratch", "Scratch", [](MainWindow& mw) {
        auto* w = new QLabel(&mw);
        w->setObjectName("scratchPanel");
        return makePanel<QLabel>(w, [](QLabel& l, const PanelContext& c) {
            l.setText(QString::fromStdString(c.trace().entry.path));
        });
    }};

} // namespace stallscope::gui
