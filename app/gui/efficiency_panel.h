#pragma once
// The Efficiency tab (docs/analysis.md "Efficiency"): MFU per GPU against its datasheet peak,
// the roofline with a point per kernel family (a click lists that family's kernels; a
// double-click on a kernel shows an instance on the timeline), busy time by family with the
// achieved rates, and the operators doing the most work by FLOPs.
#include "stallscope/analysis/analysis.h"

#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QTreeWidget;

namespace stallscope::gui {

/// The roofline of one GPU (analysis::rooflineOf), drawn with QPainter.
class RooflineWidget : public QWidget {
    Q_OBJECT
public:
    explicit RooflineWidget(QWidget* parent = nullptr);
    void setDevice(const analysis::DeviceEfficiency* device);
    void setSelected(const QString& family);
    [[nodiscard]] QSize sizeHint() const override { return {560, 320}; }
    /// The family whose point is under `pos` ("" for none).
    [[nodiscard]] QString familyAt(QPointF pos) const;

Q_SIGNALS:
    void familyClicked(const QString& family);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;

private:
    [[nodiscard]] QRectF plotRect() const;
    [[nodiscard]] QPointF at(double intensity, double tflops) const;
    analysis::Roofline m_roof;
    bool m_has = false;
    QString m_title, m_selected;
};

class EfficiencyPanel : public QWidget {
    Q_OBJECT
public:
    explicit EfficiencyPanel(QWidget* parent = nullptr);
    void setData(std::shared_ptr<const model::Trace> trace,
                 std::shared_ptr<const analysis::AnalysisResult> analysis);
    [[nodiscard]] QLabel* summary() const { return m_summary; }
    [[nodiscard]] QTreeWidget* families() const { return m_families; }
    [[nodiscard]] QTreeWidget* kernels() const { return m_kernels; }
    [[nodiscard]] QTreeWidget* operators() const { return m_operators; }
    [[nodiscard]] RooflineWidget* roofline() const { return m_roofline; }
    /// Lists the kernels of `family` on the shown GPU (a roofline click, a family row).
    void showFamily(const QString& family);

Q_SIGNALS:
    void eventRequested(stallscope::model::SliceId slice);

private:
    void showDevice(int index);
    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    QLabel* m_summary = nullptr;
    QComboBox* m_device = nullptr;
    RooflineWidget* m_roofline = nullptr;
    QTreeWidget* m_families = nullptr;
    QTreeWidget* m_kernels = nullptr;
    QTreeWidget* m_operators = nullptr;
};

} // namespace stallscope::gui
