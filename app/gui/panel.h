#pragma once
// The views in the main window's bottom tabs behind one small interface, created from one
// list (panels.def): adding a view is its file (its widget and its row, which creates it,
// connects it to the window and says how it shows a trace) and one line in panels.def. The window
// makes the tabs, switches them (MainWindow::showView) and hands every panel the trace it
// shows from the list; it holds no pointer to any particular panel.
#include "document.h"

#include <QString>

#include <QWidget>

#include <functional>
#include <memory>
#include <vector>

namespace stallscope::gui {

class MainWindow;

/// The trace a panel shows: one of the document's traces (a rank, a worker).
struct PanelContext {
    const Document* document = nullptr;
    int rank = 0; // index into document->traces
    /// A step or range chosen as the scope (MainWindow::scopeTo): its analysis, or null for the
    /// trace's own window.
    std::shared_ptr<const analysis::AnalysisResult> scope = {};
    [[nodiscard]] const LoadedTrace& trace() const {
        return document->traces[static_cast<size_t>(rank)];
    }
    /// The analysis the panel shows: the scope's when one is chosen, else the trace's.
    [[nodiscard]] const std::shared_ptr<const analysis::AnalysisResult>& analysis() const {
        return scope ? scope : trace().analysis;
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

/// A bottom view: its values are in panel_id.h (one per line of panels.def).
enum class PanelId;

/// A widget and how it shows a trace: what most rows' create returns (makePanel).
template <class W> class WidgetPanel final : public Panel {
public:
    WidgetPanel(W* widget, std::function<void(W&, const PanelContext&)> show)
        : m_widget(widget), m_show(std::move(show)) {}
    [[nodiscard]] QWidget* widget() const override { return m_widget; }
    void showTrace(const PanelContext& c) override { m_show(*m_widget, c); }

private:
    W* m_widget;
    std::function<void(W&, const PanelContext&)> m_show;
};

template <class W>
std::unique_ptr<Panel> makePanel(W* w, std::function<void(W&, const PanelContext&)> show) {
    return std::make_unique<WidgetPanel<W>>(w, std::move(show));
}

/// A panel's row: defined in its file as `extern const PanelInfo kPanel<Name>{...}` (extern:
/// the list finds it by name) and registered by one line in panels.def.
struct PanelInfo {
    PanelId id;
    const char* key;   // --view KEY (stallscope --screenshot): "flame"
    const char* title; // the tab's title, translated in the "MainWindow" context
    /// Creates the panel as a child of the window and connects it to it (the timeline,
    /// the other views through MainWindow's public functions).
    std::function<std::unique_ptr<Panel>(MainWindow& window)> create;
    /// Shown again with PanelContext::scope when a step or range is chosen (statistics, flame
    /// graph, overview, modules); the others keep the trace's window.
    bool followsScope = false;
};

/// Every bottom view, in tab order.
const std::vector<PanelInfo>& panels();
/// The row whose key is `key`, or null.
const PanelInfo* findPanel(std::string_view key);

} // namespace stallscope::gui
