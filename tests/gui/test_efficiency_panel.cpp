// The Efficiency tab as a user meets it: on the real ResNet-50 V100 trace, MFU against the
// V100's fp32 peak in the summary, the family rows as the analysis has them, a click on the
// roofline's GEMM point listing GEMM kernels only, a double-click on one selecting it on the
// timeline; and a trace without input shapes saying how to record them.
#include "test_support.h"
#include "trace_text.h"

#include "efficiency_panel.h"
#include "load_worker.h"
#include "main_window.h"
#include "timeline/timeline_view.h"

#include "stallscope/analysis/kernel_catalogue.h"

#include <QLabel>
#include <QMouseEvent>
#include <QTest>
#include <QTreeWidget>

#include <filesystem>

using namespace stallscope;
using namespace stallscope::gui;

class TestEfficiencyPanel : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void realResnet() {
        STALLSCOPE_REQUIRE_SHARED_TRACES();
        const auto path =
            test::sharedTraces() /
            "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
        QString error;
        auto doc = LoadWorker::loadNow(QString::fromStdString(path.string()), {}, &error);
        QVERIFY2(doc, qPrintable(error));
        MainWindow w;
        w.resize(1400, 900);
        w.setDocument(doc);
        auto* panel = w.findChild<EfficiencyPanel*>();
        QVERIFY(panel);
        const analysis::Efficiency& e = doc->traces.front().analysis->efficiency;
        QVERIFY(e.shapes);
        const analysis::DeviceEfficiency& d = e.devices.front();
        QVERIFY(d.mfu > 0.05 && d.mfu < 1); // fp32 cuDNN on a V100: tens of percent
        const QString summary = panel->summary()->text();
        QVERIFY2(summary.contains(QString("MFU %1 %").arg(d.mfu * 100, 0, 'f', 1)),
                 qPrintable(summary));
        QVERIFY2(summary.contains("v100-sxm2-32gb") && summary.contains("fp32"),
                 qPrintable(summary));
        // HTA's launch statistics of the same GPU under the MFU line.
        const auto launches =
            analysis::launchStatsLines(doc->traces.front().analysis->devices.at(0).launches);
        QCOMPARE(launches.size(), size_t(2));
        QVERIFY2(summary.contains(QString::fromStdString(launches[0]).toHtmlEscaped()),
                 qPrintable(summary));
        QCOMPARE(panel->families()->topLevelItemCount(), int(d.families.size()));
        QCOMPARE(panel->families()->topLevelItem(0)->text(0),
                 QString::fromStdString(d.families.front().family));
        // A click on the GEMM point lists GEMM kernels, and only those.
        RooflineWidget* roof = panel->roofline();
        roof->resize(700, 400);
        const analysis::Roofline r = analysis::rooflineOf(d);
        const auto gemm =
            std::find_if(r.points.begin(), r.points.end(),
                         [](const analysis::RooflinePoint& p) { return p.family == "gemm"; });
        QVERIFY(gemm != r.points.end());
        QPointF at;
        for (int x = 0; x < roof->width() && at.isNull(); ++x)
            for (int y = 0; y < roof->height(); ++y)
                if (roof->familyAt(QPointF(x, y)) == "gemm") {
                    at = QPointF(x, y);
                    break;
                }
        QVERIFY(!at.isNull());
        QTest::mouseClick(roof, Qt::LeftButton, {}, at.toPoint());
        QVERIFY(panel->kernels()->topLevelItemCount() > 0);
        for (int i = 0; i < panel->kernels()->topLevelItemCount(); ++i)
            QCOMPARE(
                QString::fromUtf8(analysis::kernelFamilyName(
                                      analysis::classifyKernel(
                                          panel->kernels()->topLevelItem(i)->text(0).toStdString())
                                          .family)
                                      .data()),
                QString("gemm"));
        // A double-click shows that kernel on the timeline.
        QTreeWidgetItem* first = panel->kernels()->topLevelItem(0);
        Q_EMIT panel->kernels()->itemDoubleClicked(first, 0);
        const model::SliceId sel = w.timeline()->state().selected;
        QVERIFY(sel.valid());
        const std::string_view selName = doc->traces.front().entry.trace->str(
            doc->traces.front().entry.trace->slices().name[sel.index()]);
        QCOMPARE(QString::fromUtf8(selName.data(), qsizetype(selName.size())), first->text(0));
        // The costliest operators, FLOPs first.
        QVERIFY(panel->operators()->topLevelItemCount() > 0);
        QCOMPARE(panel->operators()->topLevelItem(0)->text(0),
                 QString::fromStdString(e.operators.front().name));
    }

    void withoutShapes() {
        test::TraceText t;
        t.step(1, 0, 1000);
        t.cpu("aten::mm", 10, 100);
        t.launch("ampere_sgemm_128x64_nn", 20, 10, 40, 200);
        auto trace = t.load();
        QVERIFY(trace);
        auto a = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
        EfficiencyPanel p;
        p.setData(trace, a);
        QVERIFY2(p.summary()->text().contains("record_shapes=True"),
                 qPrintable(p.summary()->text()));
        QCOMPARE(p.families()->topLevelItemCount(), 1); // the GEMM family's busy time still shows
        QCOMPARE(p.operators()->topLevelItemCount(), 0);
    }
};

QTEST_MAIN(TestEfficiencyPanel)
#include "test_efficiency_panel.moc"
