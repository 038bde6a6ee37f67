#pragma once
// What the GUI shows is the loader's workspace (workspace/workspace.h): the traces of an
// opened file or folder, each with its analysis and timeline index, the ranks compared, many
// ranks as digests — all built on the load worker, so the first paint is only a paint.
#include "timeline/timeline_layout.h"

#include "stallscope/workspace/workspace.h"

#include <QString>

namespace stallscope::gui {

using Document = workspace::Workspace;
using LoadedTrace = workspace::AnalysedTrace;
using workspace::kDetailRanks;

/// The path the document was opened from, for titles and messages.
inline QString documentPath(const Document& doc) {
    return QString::fromStdString(doc.path);
}

} // namespace stallscope::gui
