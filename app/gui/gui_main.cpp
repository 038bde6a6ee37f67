// stallscope: the desktop application.
//   stallscope [PATH]
//   stallscope --screenshot OUT.png [--size WxH] [--finding N] [--view
//   timeline|flame|stats|ranks|collectives] [--theme light|dark] PATH
#include "main_window.h"
#include "screenshot.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QIcon>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace stallscope::gui;

int main(int argc, char** argv) {
    // Screenshots run headless unless a platform was chosen explicitly.
    for (int i = 1; i < argc; ++i)
        if (!std::strcmp(argv[i], "--screenshot") && !std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    QApplication app(argc, argv);
    QApplication::setApplicationName("Stallscope");
    QApplication::setOrganizationName("Stallscope");
    QApplication::setApplicationVersion(STALLSCOPE_VERSION);
    QApplication::setWindowIcon(QIcon(":/icons/stallscope.svg"));

    QCommandLineParser p;
    p.setApplicationDescription("Why is my GPU idle? Opens PyTorch profiler traces and explains them.");
    p.addHelpOption();
    p.addVersionOption();
    p.addPositionalArgument("path", "a .json / .json.gz trace or a TensorBoard log folder");
    const QCommandLineOption shot("screenshot", "render the main window to OUT.png and exit", "OUT.png");
    const QCommandLineOption size("size", "window size for --screenshot", "WxH", "1600x1000");
    const QCommandLineOption finding("finding", "finding to select (1 = the largest; 0 = none)", "N", "1");
    const QCommandLineOption view("view",
                                  "bottom view for --screenshot: timeline, flame, stats, ranks or "
                                  "collectives (the ranks side by side)",
                                  "VIEW", "timeline");
    const QCommandLineOption theme("theme", "light, dark or system", "THEME", "system");
    p.addOptions({shot, size, finding, view, theme});
    p.process(app);

    const QString t = p.value(theme);
    const ThemeMode mode = t == "dark" ? ThemeMode::Dark : t == "light" ? ThemeMode::Light : ThemeMode::System;
    const QStringList args = p.positionalArguments();

    if (p.isSet(shot)) {
        if (args.isEmpty()) {
            std::fprintf(stderr, "stallscope: --screenshot needs a PATH\n");
            return 2;
        }
        ScreenshotOptions o;
        o.input = args.front();
        o.output = p.value(shot);
        const QStringList wh = p.value(size).split('x');
        if (wh.size() == 2) o.size = QSize(wh[0].toInt(), wh[1].toInt());
        if (!o.size.isValid() || o.size.width() < 400 || o.size.height() < 300) {
            std::fprintf(stderr, "stallscope: --size needs WxH of at least 400x300\n");
            return 2;
        }
        o.finding = p.value(finding).toInt();
        o.view = p.value(view);
        o.theme = t == "system" ? ThemeMode::Light : mode;
        Theme::apply(app, o.theme);
        QString error;
        const int rc = takeScreenshot(o, &error);
        if (rc) std::fprintf(stderr, "stallscope: %s\n", qPrintable(error));
        return rc;
    }

    Theme::apply(app, mode);
    MainWindow w;
    w.show();
    if (!args.isEmpty()) w.openPath(args.front());
    return QApplication::exec();
}
