#pragma once
// Two pictures of the Memory tab after torch.cuda._memory_viz:
//  * ActiveMemoryWidget ("Active blocks", memory_viz's "Active Memory Timeline"): the
//    allocated memory over the window as a stack of the blocks live at each moment, in the
//    order they were allocated (a freed block lets the ones above it fall), the largest
//    blocks (bytes x lifetime) each in a colour, the rest grey; what was allocated before the
//    events began at the bottom. Hover names a block; a click selects it. For traces and
//    allocator snapshots alike (analysis::DeviceMemory's rows).
//  * SegmentMapWidget ("Allocator", memory_viz's "Allocator State"): an allocator snapshot's
//    segments, one bar each scaled to the largest, its blocks coloured by state, so that
//    fragments (free gaps between allocations) and empty segments show as what they are.
#include "stallscope/analysis/memory.h"

#include <QWidget>

#include <vector>

namespace stallscope::gui {

class ActiveMemoryWidget : public QWidget {
    Q_OBJECT
public:
    static constexpr size_t kColoured = 150;

    explicit ActiveMemoryWidget(QWidget* parent = nullptr);
    void setDevice(const model::Trace* trace, const analysis::DeviceMemory* device, int64_t startNs,
                   int64_t endNs);
    [[nodiscard]] QSize sizeHint() const override { return {600, 220}; }
    /// The row (an allocation of DeviceMemory::rows) drawn at a widget point, or -1.
    [[nodiscard]] int blockAt(QPoint p) const;
    /// "2.1 GB · forward (model.py:42) · allocated +1.2 ms, freed +3.4 ms".
    [[nodiscard]] QString blockText(int row) const;
    [[nodiscard]] const std::vector<size_t>& coloured() const { return m_coloured; }

Q_SIGNALS:
    void blockActivated(int row);

protected:
    void paintEvent(QPaintEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;

private:
    struct Column {
        int64_t total = 0, peak = 0;
    };
    /// Replays the rows column by column (of `columns` over the window) up to column `last`;
    /// `visit(column, peak, base, below, live)` sees, after each column's events, the column's
    /// largest total, what was allocated before the events, the bytes live below each block
    /// and the coloured blocks live.
    template <class Visit> void sweep(int columns, int last, Visit&& visit) const;
    [[nodiscard]] QRectF plot() const;

    const model::Trace* m_trace = nullptr;
    const analysis::DeviceMemory* m_device = nullptr;
    int64_t m_start = 0, m_end = 1;
    int64_t m_base = 0;             // allocated before the first event
    int64_t m_max = 1;              // the y scale
    std::vector<int32_t> m_allocOf; // a free's allocation row (-1: none)
    std::vector<size_t> m_coloured;
    std::vector<int32_t> m_colourOf; // row -> index in m_coloured (-1: grey)
};

class SegmentMapWidget : public QWidget {
    Q_OBJECT
public:
    explicit SegmentMapWidget(QWidget* parent = nullptr);
    void setSnapshot(const model::AllocatorSnapshot* snapshot, int32_t device);
    [[nodiscard]] QSize sizeHint() const override;
    [[nodiscard]] int segmentCount() const { return int(m_segments.size()); }
    /// The segment (index in AllocatorSnapshot::segments) drawn at a widget y, or -1.
    [[nodiscard]] int segmentAt(QPoint p) const;

protected:
    void paintEvent(QPaintEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;

private:
    const model::AllocatorSnapshot* m_snap = nullptr;
    std::vector<uint32_t> m_segments; // this device's, largest first
    int64_t m_largest = 1;
};

} // namespace stallscope::gui
