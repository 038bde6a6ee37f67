#pragma once
// The views in the main window's bottom tabs behind one small interface, created from one
// list (panels.cpp): adding a view is its widget (a new file) and one row in that list,
// which creates it, connects it to the window and says how it shows a trace. The window
// makes the tabs, switches them (MainWindow::showView) and hands every panel the trace it
// shows from the list; it holds no pointer to any particular panel.
#include "document.h"

#include <QString>

#include <functional>
#include <memory>
#include <vector>

class QWidget;

namespace stallscope::gui {

class MainWindow;

/// The trace a panel shows: one of the document's traces (a rank, a worker).
struct PanelContext {
    const Document* document = nullptr;
    int rank = 0; // index into document->traces
    [[nodiscard]] const LoadedTrace& trace() const {
        return document->traces[static_cast<size_t>(rank)];
    }
};

class Panel {
public:
    virtual ~Panel() = default;
    /// The tab's widget (owned by the window, as Qt widgets are).
    [[nodiscard]] virtual QWidget* widget() const = 0;
    /// The window shows another trace: a new document, or another rank of it.
    virtual void showTrace(const PanelContext& context) = 0;
};

enum class PanelId { Details, Flame, Stats, Range, Ranks, Notes };

struct PanelInfo {
    PanelId id;
    const char* title; // the tab's title, translated in the "MainWindow" context
    /// Creates the panel as a child of the window and connects it to it (the timeline,
    /// the other views through MainWindow's public functions).
    std::function<std::unique_ptr<Panel>(MainWindow& window)> create;
};

/// Every bottom view, in tab order.
const std::vector<PanelInfo>& panels();

} // namespace stallscope::gui
