#pragma once
// The findings list (severity, title, estimated saving, share), the idle-cause chart and a
// detail pane with the explanation, what was waited for, the evidence and the fix snippet.
#include "document.h"

#include <QAbstractTableModel>
#include <QWidget>

#include <memory>

class QTableView;
class QTextBrowser;
class QPushButton;

namespace stallscope::gui {

class IdleChart;

class FindingsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Severity, Title, Saving, Share, ColumnCount };
    using QAbstractTableModel::QAbstractTableModel;
    void setAnalysis(std::shared_ptr<const analysis::AnalysisResult> analysis);
    [[nodiscard]] const analysis::Finding* finding(int row) const;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
};

class FindingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit FindingsPanel(QWidget* parent = nullptr);
    void setData(std::shared_ptr<const model::Trace> trace, std::shared_ptr<const analysis::AnalysisResult> analysis);
    void selectFinding(int row);
    [[nodiscard]] int selectedFinding() const { return m_selected; }
    [[nodiscard]] FindingsModel* model() const { return m_model; }
    [[nodiscard]] QTableView* view() const { return m_view; }
    [[nodiscard]] QTextBrowser* detail() const { return m_detail; }

Q_SIGNALS:
    void findingSelected(int row);
    void evidenceActivated(stallscope::model::SliceId slice);

private:
    void showDetail(int row);
    /// The device's what-if waterfall, this finding's fix highlighted.
    [[nodiscard]] QString waterfallHtml(const analysis::Finding& f) const;

    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
    FindingsModel* m_model;
    QTableView* m_view;
    IdleChart* m_chart;
    QTextBrowser* m_detail;
    QPushButton* m_copy;
    int m_selected = -1;
};

} // namespace stallscope::gui
