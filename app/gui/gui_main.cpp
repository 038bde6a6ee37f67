// stallscope: the desktop application.
//   stallscope [PATH...]          several files (a file manager's selection) open as one session
//   stallscope --baseline BEFORE AFTER   the compare view of two runs
//   stallscope --man              the man page (troff), from the --help text
//   stallscope --render-icon OUT.png --size NxN   the application icon at that size (packaging)
//   stallscope --screenshot OUT.png [--size WxH] [--finding N] [--capture N] [--view
//   timeline|flame|stats|ranks|collectives|captures] [--theme light|dark] PATH
#include "compare_window.h"
#include "main_window.h"
#include "preferences.h"
#include "screenshot.h"
#include "stallscope/base/huge_pages.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QIcon>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace stallscope::gui;

namespace {

/// The man page is the --help text, in troff.
int printManPage(const QCommandLineParser& p) {
    QString help = p.helpText();
    help.replace(QCoreApplication::arguments().constFirst(), QStringLiteral("stallscope"));
    help.replace('\\', "\\e").replace('-', "\\-");
    QStringList lines = help.split('\n');
    for (QString& l : lines)
        if (l.startsWith('.') || l.startsWith('\'')) l.prepend("\\&");
    std::printf(".TH STALLSCOPE 1 \"%s\" \"stallscope %s\" \"User Commands\"\n"
                ".SH NAME\nstallscope \\- why is my GPU idle? PyTorch trace diagnostics, "
                "desktop application\n"
                ".SH DESCRIPTION\nStallscope opens torch.profiler / TensorBoard traces, draws "
                "CPU and GPU "
                "timelines and flame graphs, finds idle gaps, blocking copies, launch\\-bound "
                "stretches, "
                "data\\-loading stalls and host syncs, and annotates each with its cost and "
                "the PyTorch fix. "
                "Help \\(-> Keyboard Shortcuts lists the keys.\n"
                ".SH USAGE\n.nf\n%s\n.fi\n"
                ".SH FILES\n.TP\n.I ~/.config/Stallscope/Stallscope.conf\nSettings: window "
                "layout, theme, recent "
                "files, last folder.\n"
                ".SH SEE ALSO\n.BR stallscope\\-cli (1)\n",
                STALLSCOPE_RELEASE_DATE, STALLSCOPE_VERSION, qPrintable(lines.join('\n')));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    stallscope::base::tuneMalloc(argv); // docs/decisions.md, "Import at the speed of the parser"
    // Screenshots run headless unless a platform was chosen explicitly.
    for (int i = 1; i < argc; ++i)
        if ((!std::strcmp(argv[i], "--screenshot") || !std::strcmp(argv[i], "--man") ||
             !std::strcmp(argv[i], "--render-icon") || !std::strcmp(argv[i], "--help") ||
             !std::strcmp(argv[i], "-h")) &&
            !std::getenv("QT_QPA_PLATFORM"))
            setenv("QT_QPA_PLATFORM", "offscreen", 1);
    QApplication app(argc, argv);
    QApplication::setApplicationName("Stallscope");
    QApplication::setOrganizationName("Stallscope");
    QApplication::setApplicationVersion(STALLSCOPE_VERSION);
    QApplication::setWindowIcon(QIcon(":/icons/stallscope.svg"));
    QGuiApplication::setDesktopFileName(
        "io.github.stallscope.Stallscope"); // Wayland: the icon and name

    QCommandLineParser p;
    p.setApplicationDescription("Why is my GPU idle? Opens PyTorch profiler traces and explains them.");
    p.addHelpOption();
    p.addVersionOption();
    p.addPositionalArgument(
        "path",
        "a .json / .json.gz trace or a TensorBoard log folder; several traces open as "
        "one session of ranks",
        "[PATH...]");
    const QCommandLineOption shot("screenshot", "render the main window to OUT.png and exit", "OUT.png");
    const QCommandLineOption size("size", "window size for --screenshot", "WxH", "1600x1000");
    const QCommandLineOption finding("finding", "finding to select (1 = the largest; 0 = none)", "N", "1");
    const QCommandLineOption view("view", stallscope::gui::viewHelp(), "VIEW", "timeline");
    const QCommandLineOption step("step",
                                  "with --screenshot: choose ProfilerStep#N in the Step box", "N");
    const QCommandLineOption capture(
        "capture", "with --screenshot: show capture N of the rank (default: its latest steady one)",
        "N", "0");
    const QCommandLineOption progressive(
        "progressive",
        "with --screenshot: open PATH as the window does (progressively) and take the picture "
        "at the first partial view, then cancel; prints the time to it as JSON");
    const QCommandLineOption operatorsOnly(
        "operators-only", "with --screenshot: CPU threads as their operators alone (no Python "
                          "frames), as the View menu's CPU threads: operators only");
    const QCommandLineOption theme("theme", "light, dark or system", "THEME", "system");
    const QCommandLineOption baseline(
        "baseline", "the compare view: BEFORE against PATH (with --screenshot, --view compare-TAB)",
        "BEFORE");
    const QCommandLineOption man("man", "print the man page (troff) and exit");
    const QCommandLineOption icon(
        "render-icon", "render the application icon to OUT.png at --size and exit", "OUT.png");
    p.addOptions({shot, size, finding, capture, step, view, operatorsOnly, progressive, theme,
                  baseline, man, icon});
    p.process(app);

    if (p.isSet(man)) return printManPage(p);
    if (p.isSet(icon)) {
        const QStringList wh = p.value(size).split('x');
        const int px = wh.size() == 2 ? wh[0].toInt() : 0;
        if (px < 8 || px > 1024 || wh[1].toInt() != px) {
            std::fprintf(stderr, "stallscope: --render-icon needs --size NxN (8..1024)\n");
            return 2;
        }
        QSvgRenderer svg(QStringLiteral(":/icons/stallscope.svg"));
        QImage img(px, px, QImage::Format_ARGB32_Premultiplied);
        img.fill(Qt::transparent);
        QPainter painter(&img);
        painter.setRenderHint(QPainter::Antialiasing);
        svg.render(&painter, QRectF(0, 0, px, px));
        painter.end();
        if (!img.save(p.value(icon))) {
            std::fprintf(stderr, "stallscope: cannot write %s\n", qPrintable(p.value(icon)));
            return 1;
        }
        return 0;
    }

    // --theme, else the one chosen last time (Preferences, View ▸ Theme).
    const QString t = p.isSet(theme) ? p.value(theme) : QString();
    const ThemeMode mode = t == "dark"                      ? ThemeMode::Dark
                           : t == "light"                   ? ThemeMode::Light
                           : t == "system" || p.isSet(shot) ? ThemeMode::System
                                                            : settings::theme();
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
        o.capture = p.value(capture).toInt();
        if (p.isSet(step)) o.step = p.value(step).toLongLong();
        o.progressive = p.isSet(progressive);
        o.operatorsOnly = p.isSet(operatorsOnly);
        o.baseline = p.value(baseline);
        o.theme = mode == ThemeMode::System ? ThemeMode::Light : mode;
        Theme::apply(app, o.theme);
        QString error;
        const int rc = takeScreenshot(o, &error);
        if (rc) std::fprintf(stderr, "stallscope: %s\n", qPrintable(error));
        return rc;
    }

    Theme::apply(app, mode);
    if (p.isSet(baseline)) {
        if (args.size() != 1) {
            std::fprintf(stderr, "stallscope: --baseline BEFORE needs one PATH (AFTER)\n");
            return 2;
        }
        CompareWindow c;
        c.resize(1600, 1000);
        c.openPaths(p.value(baseline), args.front());
        c.show();
        return QApplication::exec();
    }
    MainWindow w;
    w.restoreLayout();
    w.show();
    // Several traces (a file manager's selection): one session. None: the last one, when the
    // preferences say so.
    if (!args.isEmpty())
        w.openPaths(args);
    else if (settings::reopenLast() && !settings::lastSession().isEmpty() &&
             QFileInfo::exists(settings::lastSession()))
        w.openPath(settings::lastSession());
    return QApplication::exec();
}
