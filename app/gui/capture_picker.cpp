#include "capture_picker.h"

#include "gui_text.h"

#include <QAbstractItemView>
#include <QFileInfo>
#include <QPainter>
#include <QPixmap>

#include <algorithm>

namespace stallscope::gui {

using workspace::Capture;
using workspace::CapturePhase;
using workspace::RankSeries;

namespace {

/// A dot in the phase's colour: amber for warm-up, green for steady (the same in both themes).
QIcon phaseIcon(CapturePhase p) {
    static const QIcon warm = [] {
        QPixmap pm(24, 24);
        pm.fill(Qt::transparent);
        QPainter g(&pm);
        g.setRenderHint(QPainter::Antialiasing);
        g.setPen(QPen(QColor(0xb0, 0x6a, 0x10), 1.5));
        g.setBrush(QColor(0xf0, 0xa0, 0x30));
        g.drawEllipse(QRectF(5, 5, 14, 14));
        return QIcon(pm);
    }();
    static const QIcon steady = [] {
        QPixmap pm(24, 24);
        pm.fill(Qt::transparent);
        QPainter g(&pm);
        g.setRenderHint(QPainter::Antialiasing);
        g.setPen(QPen(QColor(0x1e, 0x7a, 0x44), 1.5));
        g.setBrush(QColor(0x3c, 0xb3, 0x6e));
        g.drawEllipse(QRectF(5, 5, 14, 14));
        return QIcon(pm);
    }();
    return p == CapturePhase::WarmUp ? warm : steady;
}

QString percent(double share) {
    return QString::number(share * 100, 'f', 1);
}

/// The whole capture's utilisation; without it (warm-up set apart in a trace without steps)
/// the analysed part's, said so.
QString busyText(const Capture& c) {
    if (c.windowUtilization < 0) return QObject::tr("no GPU work");
    if (c.utilization < 0)
        return QObject::tr("after warm-up GPU %1 % busy").arg(percent(c.windowUtilization));
    return QObject::tr("GPU %1 % busy").arg(percent(c.utilization));
}

} // namespace

CapturePicker::CapturePicker(QWidget* parent) : QComboBox(parent) {
    setObjectName("capturesCombo");
    setSizeAdjustPolicy(QComboBox::AdjustToContents);
    setMinimumContentsLength(30);
    setToolTip(tr("The captures of this rank, in time order: warm-up ones are dominated by "
                  "one-off work (set-up, compiling, allocator growth); the rank's summaries use "
                  "its latest steady capture"));
    connect(this, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) Q_EMIT traceChosen(itemData(i).toInt());
    });
}

QString CapturePicker::captureText(const Capture& c, size_t index) {
    return tr("#%1  %2 · %3 · %4")
        .arg(index + 1)
        .arg(QString::fromUtf8(workspace::capturePhaseName(c.phase).data(),
                               qsizetype(workspace::capturePhaseName(c.phase).size())))
        .arg(significantDuration(c.wholeNs))
        .arg(busyText(c));
}

QString CapturePicker::captureToolTip(const RankSeries& s, size_t index) {
    const Capture& c = s.captures[index];
    QString tip = tr("Capture %1 of %2 of rank %3: %4")
                      .arg(index + 1)
                      .arg(s.captures.size())
                      .arg(s.rank)
                      .arg(QFileInfo(QString::fromStdString(c.path)).fileName());
    if (index > 0)
        tip += "\n" + tr("Started %1 after the first capture")
                          .arg(significantDuration(c.startNs - s.captures.front().startNs));
    if (c.phase == CapturePhase::WarmUp)
        tip += "\n" + (c.warmupNs >= c.wholeNs ? tr("Warm-up: the whole window is one-off work")
                                               : tr("Warm-up: %1 of its %2 window is one-off work")
                                                     .arg(significantDuration(c.warmupNs),
                                                          significantDuration(c.wholeNs)));
    else if (c.warmupNs > 0)
        tip += "\n" + tr("Steady after %1 of warm-up, which the findings leave out")
                          .arg(significantDuration(c.warmupNs));
    if (c.warmupNs > 0 && c.warmupNs < c.wholeNs && c.windowUtilization >= 0)
        tip += "\n" + tr("After its warm-up: GPU %1 % busy over %2")
                          .arg(percent(c.windowUtilization), significantDuration(c.windowNs));
    else
        tip += "\n" + tr("Steady: no warm-up found");
    if (c.stepMeanNs >= 0)
        tip +=
            "\n" +
            tr("%n step(s), mean %1", nullptr, int(c.steps)).arg(significantDuration(c.stepMeanNs));
    if (index == s.representative)
        tip +=
            "\n" + (s.onlyWarmUp()
                        ? tr("Every capture is warm-up: the rank's summaries use this, the latest")
                        : tr("The latest steady capture: the rank's summaries use it"));
    return tip;
}

void CapturePicker::setSeries(const RankSeries* series, size_t current) {
    const QSignalBlocker block(this);
    clear();
    if (!series || series->captures.size() < 2) return;
    for (size_t i = 0; i < series->captures.size(); ++i) {
        const Capture& c = series->captures[i];
        addItem(phaseIcon(c.phase), captureText(c, i), int(c.trace));
        setItemData(int(i), captureToolTip(*series, i), Qt::ToolTipRole);
    }
    setCurrentIndex(int(current));
}

void CapturePicker::showPopup() {
    QComboBox::showPopup();
    // The open list as wide as its longest line: a drop-down list is as wide as the box, which
    // leaves less room for the text than the box has (the list's frame and the icon's margins).
    int text = 0;
    for (int i = 0; i < count(); ++i)
        text = std::max(text, view()->fontMetrics().horizontalAdvance(itemText(i)));
    QWidget* popup = view()->window();
    const int want = text + iconSize().width() + 48;
    if (popup->width() < want) popup->resize(want, popup->height());
}

} // namespace stallscope::gui
