#include "screenshot.h"

#include "flame_panel.h"
#include "load_worker.h"
#include "main_window.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSplitter>
#include <QTabWidget>

namespace stallscope::gui {

int takeScreenshot(const ScreenshotOptions& o, QString* error) {
    auto doc = LoadWorker::loadNow(o.input, {}, error);
    if (!doc) return 1;
    MainWindow w;
    w.resize(o.size);
    w.setDocument(doc);
    if (o.finding > 0) w.selectFinding(o.finding - 1);
    if (o.view == "flame" || o.view == "stats" || o.view == "ranks" || o.view == "collectives") {
        w.showView(o.view == "flame"   ? MainWindow::View::Flame
                   : o.view == "stats" ? MainWindow::View::Stats
                                       : MainWindow::View::Ranks);
        if (auto* split = w.centralWidget()->findChild<QSplitter*>()) split->setSizes({o.size.height() * 2 / 5, o.size.height() * 3 / 5});
        // The Ranks panel's second view: the ranks side by side with their collectives linked.
        if (o.view == "collectives")
            if (auto* tabs = w.findChild<QTabWidget*>("ranksViews")) tabs->setCurrentIndex(1);
    }
    w.show();
    // The flame graph is built on the thread pool: wait for it (bounded) before the picture.
    QElapsedTimer waited;
    waited.start();
    const auto* flame = w.findChild<FlamePanel*>();
    while (flame && flame->building() && waited.elapsed() < 60000)
        QApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    const QPixmap shot = w.grab();
    if (!shot.save(o.output, "PNG")) {
        if (error) *error = "cannot write " + o.output;
        return 1;
    }
    return 0;
}

} // namespace stallscope::gui
