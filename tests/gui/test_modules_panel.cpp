// The Modules tab as a user meets it: the nn.Module tree of a with_stack trace with host and
// device time (the real H100 transformer trace, its figures against the slice table), a
// double-click showing the module on the timeline, and a trace without modules saying how to
// record them.
#include "test_support.h"
#include "trace_text.h"

#include "load_worker.h"
#include "main_window.h"
#include "modules_panel.h"
#include "panel_id.h"
#include "timeline/timeline_view.h"

#include <QApplication>
#include <QLabel>
#include <QTest>
#include <QTreeWidget>

#include <filesystem>

using namespace stallscope;
using namespace stallscope::gui;

class TestModulesPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realTransformerTree() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path =
            test::sharedTraces() /
            "memory/kineto/"
            "sidnb13_h100_transformer_dc3b0e7228dd_851.1752215573993169006.pt.trace.json";
        if (!std::filesystem::exists(path))
            QSKIP("the transformer trace is not in ../shared/traces");
        QString error;
        auto doc = LoadWorker::loadNow(QString::fromStdString(path.string()), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.resize(1400, 900);
        w.setDocument(doc);
        auto* panel = w.findChild<ModulesPanel*>();
        QVERIFY(panel);
        const analysis::ModuleTree& m = panel->modules();
        QVERIFY(!m.empty());
        // The top-level modules' host total is the sum of the outermost nn.Module ranges
        // starting in the window, read from the slice table.
        const model::Trace& t = *doc->traces.front().entry.trace;
        const auto& a = *doc->traces.front().analysis;
        const model::SliceTable& s = t.slices();
        int64_t outermost = 0;
        size_t ranges = 0;
        for (uint32_t i = 0; i < s.size(); ++i) {
            if (t.str(s.name[i]).rfind("nn.Module: ", 0) != 0) continue;
            if (s.start[i] < a.window.startNs || s.start[i] >= a.window.endNs) continue;
            ++ranges;
            bool nested = false;
            for (model::SliceId p = s.parent[i]; p.valid() && !nested; p = s.parent[p.index()])
                nested = t.str(s.name[p.index()]).rfind("nn.Module: ", 0) == 0;
            if (!nested) outermost += s.dur[i];
        }
        int64_t roots = 0;
        uint64_t occurrences = 0;
        for (int32_t r : m.roots) roots += m.nodes[size_t(r)].hostTotalNs;
        for (const auto& n : m.nodes) occurrences += n.occurrences;
        QCOMPARE(roots, outermost);
        QCOMPARE(occurrences, uint64_t(ranges));
        // Children never exceed their parent.
        for (const auto& n : m.nodes) {
            int64_t host = 0, device = 0;
            for (int32_t c : n.children) {
                host += m.nodes[size_t(c)].hostTotalNs;
                device += m.nodes[size_t(c)].deviceTotalNs;
            }
            QVERIFY(host <= n.hostTotalNs);
            QCOMPARE(device + n.deviceSelfNs, n.deviceTotalNs);
        }
        // On screen: the tree, its rows sorted by host total, a double-click shows the range.
        w.showView(PanelId::Modules);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTreeWidget* tree = panel->tree();
        QCOMPARE(tree->topLevelItemCount(), int(m.roots.size()));
        QTreeWidgetItem* top = tree->topLevelItem(0);
        QCOMPARE(top->text(ModulesPanel::Name),
                 QString::fromStdString(m.nodes[size_t(m.roots[0])].name));
        QVERIFY(panel->summary()->text().contains(QString("%1 modules").arg(m.nodes.size())));
        Q_EMIT tree->itemActivated(top, 0);
        QCOMPARE(w.timeline()->state().selected, m.nodes[size_t(m.roots[0])].example);
        // The CSV has every module once, with the tree's raw values.
        const QStringList lines = panel->csv().split("\r\n", Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), int(m.nodes.size()) + 1);
        QVERIFY(lines.front().startsWith("Path,Module,Depth,Occurrences"));
        const analysis::ModuleNode& first = m.nodes[size_t(m.roots[0])];
        QCOMPARE(lines.at(1), QString("%1,%1,0,%2,%3,%4,%5,%6,%7")
                                  .arg(QString::fromStdString(first.name))
                                  .arg(first.occurrences)
                                  .arg(first.operators)
                                  .arg(first.hostTotalNs)
                                  .arg(first.hostSelfNs)
                                  .arg(first.deviceTotalNs)
                                  .arg(first.deviceSelfNs));
        if (!first.children.empty())
            QVERIFY(lines.at(2).startsWith(QString::fromStdString(
                first.name + " > " + m.nodes[size_t(first.children[0])].name)));
        if (const QString dir = qEnvironmentVariable("STALLSCOPE_STATS_RENDER_DIR"); !dir.isEmpty())
            QVERIFY(w.grab().save(dir + "/modules.png"));
    }

    void withoutModulesSaysHowToRecordThem() {
        test::TraceText t;
        t.step(1, 0, 1000);
        t.launch("k", 10, 5, 100, 300);
        ModulesPanel panel;
        auto trace = t.load();
        panel.setData(trace,
                      std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace)));
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(panel.modules().empty());
        QCOMPARE(panel.tree()->topLevelItemCount(), 0);
        QVERIFY2(panel.summary()->text().contains("with_stack=True"),
                 qPrintable(panel.summary()->text()));
    }
};

QTEST_MAIN(TestModulesPanel)
#include "test_modules_panel.moc"
