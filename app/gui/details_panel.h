#pragma once
// Everything about the selected event: name, category, times, row, correlation, its stack,
// its arguments (read back on demand), and its launch <-> GPU partner with a "go to" link.
#include "stallscope/model/trace.h"

#include <QWidget>

#include <memory>

class QTextBrowser;

namespace stallscope::gui {

class DetailsPanel : public QWidget {
    Q_OBJECT
public:
    explicit DetailsPanel(QWidget* parent = nullptr);
    void setTrace(std::shared_ptr<const model::Trace> trace, int64_t timeOrigin);
    void showSlice(model::SliceId slice);
    [[nodiscard]] QTextBrowser* browser() const { return m_browser; }

Q_SIGNALS:
    void sliceActivated(stallscope::model::SliceId slice);

private:
    std::shared_ptr<const model::Trace> m_trace;
    int64_t m_origin = 0;
    QTextBrowser* m_browser;
};

} // namespace stallscope::gui
