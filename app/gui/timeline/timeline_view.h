#pragma once
// The timeline widget: the renderer plus navigation (W/S/A/D, Ctrl+wheel, drag, F, 0/Home),
// selection (click an event, drag a range on the ruler or with Shift), search and the
// shading of a selected finding.
#include "timeline_layout.h"
#include "timeline_renderer.h"

#include "../background_job.h"

#include <QWidget>

#include <memory>

class QMenu;
class QScrollBar;

namespace stallscope::gui {

class TimelineView : public QWidget {
    Q_OBJECT
public:
    explicit TimelineView(QWidget* parent = nullptr);

    /// Shows a trace; `index` (lanes and counters) is built here when not given.
    void setData(std::shared_ptr<const model::Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis,
                 std::shared_ptr<const TimelineIndex> index = nullptr);
    /// A new snapshot of a trace being recorded: the view keeps following the whole trace
    /// while it shows all of it, else keeps the user's zoom; collapsed groups stay collapsed.
    /// `analysis` (optional): a progressive open's preliminary analysis of the part read.
    void setLiveData(std::shared_ptr<const model::Trace> trace,
                     std::shared_ptr<const TimelineIndex> index,
                     std::shared_ptr<const analysis::AnalysisResult> analysis = nullptr);
    /// True while the view shows the whole trace (a newer snapshot keeps it that way).
    [[nodiscard]] bool showsAll() const;
    [[nodiscard]] const TimelineLayout& layout() const { return m_layout; }
    [[nodiscard]] const TimelineViewport& viewport() const { return m_vp; }
    [[nodiscard]] const TimelineState& state() const { return m_state; }
    [[nodiscard]] const RenderStats& renderStats() const { return m_renderer.stats(); }

    void zoomTo(int64_t lo, int64_t hi, double margin = 0.05);
    void zoomBy(double factor, double anchorX);
    /// Where keyboard zooms anchor: the mouse when it is over the tracks, else the centre.
    [[nodiscard]] double anchorX() const;
    void panByPixels(double px);
    void fitAll();
    void fitSelection();
    void scrollToRow(int row);
    void selectSlice(model::SliceId slice, bool reveal);
    void setRange(int64_t lo, int64_t hi);
    void clearSelection();
    /// Shades the finding's ranges on the rows it concerns and zooms to them (null clears).
    void showFinding(const analysis::Finding* finding);
    void toggleGroup(int group);
    /// Every CPU thread with Python frames drawn as its operators alone (kept for the next
    /// traces shown), or all slices again.
    void setOperatorsOnly(bool on);
    [[nodiscard]] bool operatorsOnly() const { return m_operatorsOnly; }

    /// Case-insensitive substring search over event names, run off the GUI thread:
    /// searchFinished(count) says when the matches are known (at once for an empty text).
    void setSearch(const QString& text);
    /// True while a search runs.
    [[nodiscard]] bool searching() const { return m_searchJob.busy(); }
    /// Selects the next/previous match after/before the current selection or view centre;
    /// while a search runs, once its matches are known.
    void nextMatch(bool forward);
    [[nodiscard]] size_t matchCount() const { return m_state.search ? m_state.search->slices.size() : 0; }
    [[nodiscard]] int currentMatch() const { return m_matchIndex; }
    /// What a counter row reads at widget x (the tooltip over it): utilisation over the 9
    /// pixels around x, a memory or queue counter's value in force at that time; empty
    /// when `row` is not a counter row.
    [[nodiscard]] QString counterReadout(int row, double x) const;
    /// The context menu of widget point `pos` (the event under it, else the view), built
    /// but not shown: for tests and contextMenuEvent.
    [[nodiscard]] QMenu* contextMenuAt(QPoint pos);

    /// Bookmarks (drawn on the ruler, listed in Go ▸ Bookmarks, saved per trace by the
    /// window): times of the trace with a label.
    void addBookmark(int64_t ns, const QString& label);
    /// At the selected event's start (its name as the label), else the range's start, else
    /// the middle of the view.
    void addBookmarkHere();
    void removeBookmark(int index);
    void setBookmarks(std::vector<TimelineState::Bookmark> bookmarks);
    [[nodiscard]] const std::vector<TimelineState::Bookmark>& bookmarks() const {
        return m_state.bookmarks;
    }
    /// Centres the view on bookmark `index`, keeping the zoom.
    void goToBookmark(int index);

Q_SIGNALS:
    void sliceSelected(stallscope::model::SliceId slice);
    void rangeSelected(int64_t start, int64_t end);
    void viewChanged();
    void searchFinished(size_t matches);
    /// Context menu: "Find similar" (search for the name) and "Show in statistics".
    void searchRequested(const QString& text);
    void statisticsRequested(stallscope::model::SliceId slice);
    void bookmarksChanged();

protected:
    void paintEvent(QPaintEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void wheelEvent(QWheelEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mouseReleaseEvent(QMouseEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void keyPressEvent(QKeyEvent* e) override;
    bool event(QEvent* e) override;
    void contextMenuEvent(QContextMenuEvent* e) override;

private:
    void updateScrollBar();
    void clampView();

    TimelineLayout m_layout;
    TimelineViewport m_vp;
    TimelineState m_state;
    TimelineRenderer m_renderer;
    QScrollBar* m_vscroll = nullptr;
    enum class Drag { None, Pending, Pan, Range } m_drag = Drag::None;
    QPoint m_pressPos;
    int64_t m_pressStartNs = 0;
    int m_pressScrollY = 0;
    int64_t m_rangeAnchor = 0;
    int m_matchIndex = -1;
    bool m_operatorsOnly = false; // View ▸ Operators only, applied to every trace shown
    LatestJob<std::shared_ptr<const TimelineSearchResult>> m_searchJob{this};
    enum class PendingMatch { None, Next, Previous } m_pendingMatch = PendingMatch::None;
};

} // namespace stallscope::gui
