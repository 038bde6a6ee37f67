// The Statistics tab: the four table models and their proxies under QAbstractItemModelTester,
// raw sort values against the analysis' tables, sorting, filtering, "show the example event"
// by double-click and Enter, a rendered panel, and the tables of a real ResNet-50 trace.
#include "test_support.h"
#include "trace_text.h"

#include "stats_models.h"
#include "stats_panel.h"
#include "theme.h"

#include "stallscope/analysis/analysis.h"
#include "stallscope/importers/importer.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <map>
#include <tuple>

#include <QComboBox>
#include <QElapsedTimer>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <memory>
#include <vector>

using namespace stallscope;
using namespace stallscope::gui;
using test::TraceText;

namespace {

constexpr int64_t us = 1000;

using Testers = std::vector<std::unique_ptr<QAbstractItemModelTester>>;

void attachTesters(Testers& out, StatsPanel& panel) {
    for (int t = 0; t < StatsPanel::TabCount; ++t) {
        out.push_back(std::make_unique<QAbstractItemModelTester>(
            panel.model(t), QAbstractItemModelTester::FailureReportingMode::QtTest));
        out.push_back(std::make_unique<QAbstractItemModelTester>(
            panel.proxy(t), QAbstractItemModelTester::FailureReportingMode::QtTest));
    }
}

QStringList column(const QAbstractItemModel* m, int col, int role = Qt::DisplayRole) {
    QStringList out;
    for (int r = 0; r < m->rowCount(); ++r) out << m->index(r, col).data(role).toString();
    return out;
}

/// Where the panel's renders go when STALLSCOPE_STATS_RENDER_DIR is set (for looking at them).
QString renderDir() { return qEnvironmentVariable("STALLSCOPE_STATS_RENDER_DIR"); }

} // namespace

class TestStatsModels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void modelsPassTester();
    void rowCountsAndRawValues();
    void displayTextAndRoles();
    void sortByTotalDescending();
    void filterByName();
    void doubleClickRequestsExample();
    void enterRequestsExample();
    void renderedBars();
    void emptyAndReset();
    void realResnetTrace();
    void mangledKernelNamesAreDemangled();
    void csvHasTheRowsShownWithRawValues();
    void kernelsByOperatorTab();
    void operatorGroupingByShapesAndStacks();
    void collectivesTabWithOverlap();
    void realResnetGroupedByShapes();

private:
    std::shared_ptr<const model::Trace> m_trace;
    std::shared_ptr<const analysis::AnalysisResult> m_analysis;
};

void TestStatsModels::initTestCase() {
    Theme::apply(*qobject_cast<QApplication*>(QCoreApplication::instance()), ThemeMode::Light);
    TraceText t;
    t.step(1, 0, 2000);
    auto kernelIn = [&](const std::string& op, int64_t ts, int64_t dur, const std::string& kernel, int64_t kts,
                        int64_t kdur, double blocks = -1, double occupancy = -1) {
        const int c = t.nextCorrelation();
        t.cpu(op, ts, dur);
        t.runtime("cudaLaunchKernel", ts + 10, 8, c);
        t.kernel(kernel, kts, kdur, c, 7, 0, blocks, occupancy);
    };
    kernelIn("aten::mm", 10, 200, "ampere_sgemm_128x64_nn", 100, 300, 2.0, 40);
    kernelIn("aten::mm", 300, 100, "ampere_sgemm_128x64_nn", 450, 200, 4.0, 50);
    kernelIn("aten::add", 420, 50, "vectorized_elementwise_kernel", 700, 10);
    kernelIn("aten::add", 480, 50, "vectorized_elementwise_kernel", 720, 12);
    kernelIn("aten::add", 540, 50, "vectorized_elementwise_kernel", 740, 8);
    kernelIn("aten::linear", 600, 100, "volta_h884gemm_64x64_nt", 800, 150);
    const int c1 = t.nextCorrelation(), c2 = t.nextCorrelation();
    t.cpu("aten::copy_", 720, 200);
    t.runtime("cudaMemcpyAsync", 730, 150, c1);
    t.memcpy("Memcpy HtoD (Pageable -> Device)", 1000, 100, c1, 4'000'000);
    t.cpu("aten::copy_", 950, 100);
    t.runtime("cudaMemcpyAsync", 960, 50, c2);
    t.memcpy("Memcpy DtoH (Device -> Pinned)", 1200, 50, c2, 1'000'000);
    t.runtime("cudaStreamSynchronize", 1300, 300, t.nextCorrelation());
    m_trace = t.load();
    QVERIFY(m_trace);
    m_analysis = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*m_trace));
    const analysis::StatsTables& s = m_analysis->stats;
    QCOMPARE(s.kernels.size(), size_t(3));
    QCOMPARE(s.copies.size(), size_t(2));
    QVERIFY(s.operators.size() >= 4);
    QVERIFY(s.runtime.size() >= 3);
}

void TestStatsModels::modelsPassTester() {
    StatsPanel panel;
    Testers testers;
    attachTesters(testers, panel);  // empty models first, then a reset to data, then back
    panel.setData(m_trace, m_analysis);
    for (int t = 0; t < StatsPanel::TabCount; ++t) {
        panel.view(t)->sortByColumn(1, Qt::AscendingOrder);
        panel.filter(t)->setText(QStringLiteral("a"));
        panel.filter(t)->clear();
    }
    panel.setData(nullptr, nullptr);
    panel.setData(m_trace, m_analysis);
}

void TestStatsModels::rowCountsAndRawValues() {
    KernelStatsModel k;
    OperatorStatsModel o;
    CopyStatsModel c;
    RuntimeStatsModel r;
    for (StatsTableModel* m : std::initializer_list<StatsTableModel*>{&k, &o, &c, &r})
        m->setData(m_trace, m_analysis);
    const analysis::StatsTables& s = m_analysis->stats;
    QCOMPARE(k.rowCount(), int(s.kernels.size()));
    QCOMPARE(o.rowCount(), int(s.operators.size()));
    QCOMPARE(c.rowCount(), int(s.copies.size()));
    QCOMPARE(r.rowCount(), int(s.runtime.size()));
    QCOMPARE(k.columnCount(), int(KernelStatsModel::ColumnCount));
    QCOMPARE(o.columnCount(), int(OperatorStatsModel::ColumnCount));
    QCOMPARE(c.columnCount(), int(CopyStatsModel::ColumnCount));
    QCOMPARE(r.columnCount(), int(RuntimeStatsModel::ColumnCount));

    auto raw = [](const QAbstractItemModel& m, int row, int col) { return m.index(row, col).data(SortRole); };
    for (int i = 0; i < k.rowCount(); ++i) {
        const analysis::KernelStat& x = s.kernels[size_t(i)];
        const std::string_view name = m_trace->str(x.name);
        QCOMPARE(raw(k, i, KernelStatsModel::Name).toString(), QString::fromUtf8(name.data(), qsizetype(name.size())));
        QCOMPARE(raw(k, i, KernelStatsModel::Calls).toULongLong(), qulonglong(x.count));
        QCOMPARE(raw(k, i, KernelStatsModel::Total).toLongLong(), qlonglong(x.totalNs));
        QCOMPARE(raw(k, i, KernelStatsModel::Min).toLongLong(), qlonglong(x.minNs));
        QCOMPARE(raw(k, i, KernelStatsModel::Max).toLongLong(), qlonglong(x.maxNs));
        QCOMPARE(raw(k, i, KernelStatsModel::Mean).toLongLong(), qlonglong(x.totalNs / int64_t(x.count)));
        QCOMPARE(raw(k, i, KernelStatsModel::BlocksPerSm).toDouble(), x.meanBlocksPerSm);
        QCOMPARE(raw(k, i, KernelStatsModel::Occupancy).toDouble(), x.meanOccupancy);
        QCOMPARE(raw(k, i, KernelStatsModel::TensorCores).toInt(), int(x.tensorCores));
        QCOMPARE(raw(k, i, KernelStatsModel::TcEligible).toInt(), int(x.gemmOrConv));
        QCOMPARE(k.index(i, 0).data(ExampleSliceRole).toULongLong(), qulonglong(x.example.value));
    }
    // The GEMM kernels are Tensor-Core eligible, the elementwise one is not.
    for (int i = 0; i < k.rowCount(); ++i) {
        const QString n = k.index(i, KernelStatsModel::Name).data().toString();
        QCOMPARE(k.index(i, KernelStatsModel::TcEligible).data().toString(),
                 QString(n.contains("gemm") ? "Yes" : "No"));
    }
    for (int i = 0; i < o.rowCount(); ++i) {
        const analysis::OperatorStat& x = s.operators[size_t(i)];
        QCOMPARE(raw(o, i, OperatorStatsModel::Calls).toULongLong(), qulonglong(x.count));
        QCOMPARE(raw(o, i, OperatorStatsModel::Self).toLongLong(), qlonglong(x.selfNs));
        QCOMPARE(raw(o, i, OperatorStatsModel::Total).toLongLong(), qlonglong(x.totalNs));
        QCOMPARE(raw(o, i, OperatorStatsModel::GpuTime).toLongLong(), qlonglong(x.gpuNs));
        QCOMPARE(o.index(i, 3).data(ExampleSliceRole).toULongLong(), qulonglong(x.example.value));
    }
    for (int i = 0; i < c.rowCount(); ++i) {
        const analysis::CopyStat& x = s.copies[size_t(i)];
        QCOMPARE(raw(c, i, CopyStatsModel::Kind).toString(), QString::fromStdString(x.kind));
        QCOMPARE(raw(c, i, CopyStatsModel::Count).toULongLong(), qulonglong(x.count));
        QCOMPARE(raw(c, i, CopyStatsModel::Bytes).toLongLong(), qlonglong(x.bytes));
        QCOMPARE(raw(c, i, CopyStatsModel::Total).toLongLong(), qlonglong(x.totalNs));
        QCOMPARE(raw(c, i, CopyStatsModel::Bandwidth).toDouble(), x.gbPerSecond);
    }
    for (int i = 0; i < r.rowCount(); ++i) {
        const analysis::RuntimeStat& x = s.runtime[size_t(i)];
        QCOMPARE(raw(r, i, RuntimeStatsModel::Calls).toULongLong(), qulonglong(x.count));
        QCOMPARE(raw(r, i, RuntimeStatsModel::Total).toLongLong(), qlonglong(x.totalNs));
        QCOMPARE(raw(r, i, RuntimeStatsModel::Max).toLongLong(), qlonglong(x.maxNs));
    }
    // The known answers of the inline trace.
    QCOMPARE(raw(k, 0, KernelStatsModel::Total).toLongLong(), qlonglong(500 * us));
    QCOMPARE(raw(k, 0, KernelStatsModel::Calls).toULongLong(), 2ull);
    QCOMPARE(raw(k, 0, KernelStatsModel::BlocksPerSm).toDouble(), (2.0 * 300 + 4.0 * 200) / 500);
}

void TestStatsModels::displayTextAndRoles() {
    QCOMPARE(statsformat::duration(850), QStringLiteral("850 ns"));
    QCOMPARE(statsformat::duration(12'345), QStringLiteral("12.3 µs"));
    QCOMPARE(statsformat::duration(1'234'000), QStringLiteral("1.234 ms"));
    QCOMPARE(statsformat::duration(2'345'000'000), QStringLiteral("2.345 s"));
    QCOMPARE(statsformat::durationShort(603'612'000), QStringLiteral("603.6 ms"));
    QCOMPARE(statsformat::count(1'234'567), QStringLiteral("1,234,567"));
    QCOMPARE(statsformat::bytes(4'000'000), QStringLiteral("4.00 MB"));
    QCOMPARE(statsformat::bytes(512), QStringLiteral("512 B"));

    KernelStatsModel k;
    k.setData(m_trace, m_analysis);
    QCOMPARE(k.index(0, KernelStatsModel::Total).data().toString(), QStringLiteral("500.0 µs"));
    QCOMPARE(k.index(0, KernelStatsModel::Mean).data().toString(), QStringLiteral("250.0 µs"));
    QCOMPARE(k.index(0, KernelStatsModel::Share).data().toString(), QStringLiteral("73.5 %"));  // 500 / 680
    QCOMPARE(k.index(0, KernelStatsModel::TensorCores).data().toString(), QStringLiteral("No"));
    QCOMPARE(k.index(1, KernelStatsModel::TensorCores).data().toString(), QStringLiteral("Yes"));  // h884gemm
    QCOMPARE(k.index(1, KernelStatsModel::BlocksPerSm).data().toString(), QStringLiteral("–"));
    QCOMPARE(k.index(0, KernelStatsModel::Name).data(Qt::ToolTipRole).toString(),
             QStringLiteral("ampere_sgemm_128x64_nn"));
    const auto align = [](const QVariant& v) { return Qt::Alignment(v.toInt()) & Qt::AlignHorizontal_Mask; };
    QCOMPARE(align(k.index(0, KernelStatsModel::Name).data(Qt::TextAlignmentRole)), Qt::AlignLeft);
    QCOMPARE(align(k.index(0, KernelStatsModel::Total).data(Qt::TextAlignmentRole)), Qt::AlignRight);
    QCOMPARE(align(k.headerData(KernelStatsModel::Calls, Qt::Horizontal, Qt::TextAlignmentRole)), Qt::AlignRight);
    for (int c = 0; c < k.columnCount(); ++c)
        QVERIFY2(!k.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty(),
                 qPrintable(QString::number(c)));
    QCOMPARE(k.headerData(KernelStatsModel::Share, Qt::Horizontal).toString(), QStringLiteral("% of kernel time"));
    QVERIFY(k.index(0, KernelStatsModel::Share).data(BarRole).isValid());
    QVERIFY(!k.index(0, KernelStatsModel::Total).data(BarRole).isValid());

    CopyStatsModel c;
    c.setData(m_trace, m_analysis);
    QCOMPARE(column(&c, CopyStatsModel::Kind), QStringList({"HtoD Pageable->Device", "DtoH Device->Pinned"}));
    QCOMPARE(c.index(0, CopyStatsModel::Bytes).data().toString(), QStringLiteral("4.00 MB"));
    QCOMPARE(c.index(0, CopyStatsModel::Bandwidth).data().toString(), QStringLiteral("40.00"));  // 4 MB / 100 us
    QVERIFY(c.index(0, CopyStatsModel::Kind).data(Qt::ToolTipRole).toString().contains("host to device"));
}

void TestStatsModels::sortByTotalDescending() {
    StatsPanel panel;
    panel.setData(m_trace, m_analysis);
    const QAbstractItemModel* p = panel.proxy(StatsPanel::KernelsTab);
    QCOMPARE(panel.view(StatsPanel::KernelsTab)->horizontalHeader()->sortIndicatorSection(),
             int(KernelStatsModel::Total));
    QCOMPARE(p->index(0, 0).data().toString(), QStringLiteral("ampere_sgemm_128x64_nn"));
    QCOMPARE(column(p, KernelStatsModel::Total, SortRole), QStringList({"500000", "150000", "30000"}));
    // Every tab starts sorted by its default column (total; self time for operators), biggest first.
    for (int t = 0; t < StatsPanel::TabCount; ++t) {
        const auto* m = static_cast<StatsTableModel*>(panel.model(t));
        const QAbstractItemModel* q = panel.proxy(t);
        for (int r = 1; r < q->rowCount(); ++r)
            QVERIFY2(q->index(r - 1, m->defaultSortColumn()).data(SortRole).toLongLong() >=
                         q->index(r, m->defaultSortColumn()).data(SortRole).toLongLong(),
                     qPrintable(QStringLiteral("tab %1 row %2").arg(t).arg(r)));
    }
    panel.view(StatsPanel::KernelsTab)->sortByColumn(KernelStatsModel::Calls, Qt::DescendingOrder);
    QCOMPARE(p->index(0, 0).data().toString(), QStringLiteral("vectorized_elementwise_kernel"));
    panel.view(StatsPanel::KernelsTab)->sortByColumn(KernelStatsModel::Name, Qt::AscendingOrder);
    QCOMPARE(column(p, 0), QStringList({"ampere_sgemm_128x64_nn", "vectorized_elementwise_kernel",
                                        "volta_h884gemm_64x64_nt"}));
    QCOMPARE(panel.summary(StatsPanel::KernelsTab)->text(), QStringLiteral("3 kernels, 6 calls, 680.0 µs total"));
    QCOMPARE(panel.view(StatsPanel::OperatorsTab)->horizontalHeader()->sortIndicatorSection(),
             int(OperatorStatsModel::Self));
}

void TestStatsModels::filterByName() {
    StatsPanel panel;
    Testers testers;
    attachTesters(testers, panel);
    panel.setData(m_trace, m_analysis);
    QLineEdit* f = panel.filter(StatsPanel::KernelsTab);
    QCOMPARE(f->placeholderText(), QStringLiteral("Filter by name"));
    QVERIFY(f->isClearButtonEnabled());
    f->setText(QStringLiteral("GEMM"));
    const QAbstractItemModel* p = panel.proxy(StatsPanel::KernelsTab);
    QCOMPARE(p->rowCount(), 2);
    for (const QString& n : column(p, 0)) QVERIFY2(n.contains("gemm", Qt::CaseInsensitive), qPrintable(n));
    QCOMPARE(panel.summary(StatsPanel::KernelsTab)->text(),
             QStringLiteral("2 of 3 kernels, 3 calls, 650.0 µs of 680.0 µs total (95.6 %)"));
    f->setText(QStringLiteral("no such kernel"));
    QCOMPARE(p->rowCount(), 0);
    f->clear();
    QCOMPARE(p->rowCount(), 3);

    panel.filter(StatsPanel::CopiesTab)->setText(QStringLiteral("pageable"));
    QCOMPARE(column(panel.proxy(StatsPanel::CopiesTab), 0), QStringList({"HtoD Pageable->Device"}));
}

void TestStatsModels::doubleClickRequestsExample() {
    StatsPanel panel;
    panel.resize(1000, 400);
    panel.setData(m_trace, m_analysis);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy spy(&panel, &StatsPanel::eventRequested);
    QTableView* v = panel.view(StatsPanel::KernelsTab);
    const QRect cell = v->visualRect(panel.proxy(StatsPanel::KernelsTab)->index(0, KernelStatsModel::Calls));
    QVERIFY(cell.isValid());
    // What a real double-click delivers: press, release, then the double-click event.
    QTest::mouseClick(v->viewport(), Qt::LeftButton, {}, cell.center());
    QCOMPARE(spy.count(), 0);
    QTest::mouseDClick(v->viewport(), Qt::LeftButton, {}, cell.center());
    QCOMPARE(spy.count(), 1);
    const auto slice = spy.at(0).at(0).value<model::SliceId>();
    QCOMPARE(slice, m_analysis->stats.kernels[0].example);
    QVERIFY(m_trace->str(m_trace->slices().name[slice.index()]) == "ampere_sgemm_128x64_nn");
}

void TestStatsModels::enterRequestsExample() {
    StatsPanel panel;
    panel.setData(m_trace, m_analysis);
    QSignalSpy spy(&panel, &StatsPanel::eventRequested);
    QTableView* v = panel.view(StatsPanel::CopiesTab);
    v->setCurrentIndex(panel.proxy(StatsPanel::CopiesTab)->index(1, CopyStatsModel::Bytes));
    QTest::keyClick(v, Qt::Key_Return);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).value<model::SliceId>(), m_analysis->stats.copies[1].example);
}

void TestStatsModels::renderedBars() {
    StatsPanel panel;
    panel.resize(1000, 300);
    panel.setData(m_trace, m_analysis);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTableView* v = panel.view(StatsPanel::KernelsTab);
    const QImage img = v->viewport()->grab().toImage();
    if (!renderDir().isEmpty()) panel.grab().save(renderDir() + "/stats_inline_kernels.png");
    // Row 0 holds 73 % of the kernel time: the left part of its share cell is bar-coloured,
    // the right end is not; row 2 (4 %) is background almost all the way.
    auto differs = [&](int row, double at) {
        const QRect r = v->visualRect(panel.proxy(StatsPanel::KernelsTab)->index(row, KernelStatsModel::Share));
        const QPoint pt(r.left() + int(r.width() * at), r.top() + 5);
        const QColor bg = v->palette().color(row % 2 ? QPalette::AlternateBase : QPalette::Base);
        return img.pixelColor(pt) != bg;
    };
    QVERIFY(differs(0, 0.1));
    QVERIFY(!differs(0, 0.97));
    QVERIFY(!differs(2, 0.5));
}

void TestStatsModels::emptyAndReset() {
    StatsPanel panel;
    Testers testers;
    attachTesters(testers, panel);
    for (int t = 0; t < StatsPanel::TabCount; ++t) {
        QCOMPARE(panel.model(t)->rowCount(), 0);
        QCOMPARE(panel.summary(t)->text(), QStringLiteral("No trace loaded"));
    }
    QCOMPARE(panel.tabs()->count(), int(StatsPanel::TabCount));
    QCOMPARE(panel.tabs()->tabText(StatsPanel::CollectivesTab), QStringLiteral("Collectives"));
    QCOMPARE(panel.tabs()->tabText(StatsPanel::RuntimeTab), QStringLiteral("Runtime calls"));
    panel.setData(m_trace, m_analysis);
    QVERIFY(panel.summary(StatsPanel::CopiesTab)->text().startsWith("2 copy kinds, 2 copies"));
    panel.setData(m_trace, nullptr);
    QCOMPARE(panel.model(StatsPanel::KernelsTab)->rowCount(), 0);
}

void TestStatsModels::realResnetTrace() {
    STALLSCOPE_REQUIRE_SHARED_TRACES();
    const auto path =
        test::sharedTraces() / "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
    if (!std::filesystem::exists(path)) QSKIP("the ResNet-50 trace is not in ../shared/traces");
    auto imported = importers::importFile(path);
    QVERIFY2(imported, imported ? "" : imported.error().message.c_str());
    std::shared_ptr<const model::Trace> trace = imported.value();
    auto result = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
    QVERIFY(!result->stats.kernels.empty());

    StatsPanel panel;
    Testers testers;
    attachTesters(testers, panel);
    panel.resize(1200, 500);
    panel.setData(trace, result);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));

    const QAbstractItemModel* k = panel.model(StatsPanel::KernelsTab);
    QCOMPARE(k->rowCount(), int(result->stats.kernels.size()));
    int64_t modelSum = 0, statsSum = 0;
    for (int r = 0; r < k->rowCount(); ++r)
        modelSum += k->index(r, KernelStatsModel::Total).data(SortRole).toLongLong();
    for (const analysis::KernelStat& s : result->stats.kernels) statsSum += s.totalNs;
    QCOMPARE(modelSum, statsSum);
    QVERIFY(panel.summary(StatsPanel::KernelsTab)->text().startsWith(
        statsformat::count(result->stats.kernels.size()) + " kernels"));
    QVERIFY(column(panel.model(StatsPanel::CopiesTab), CopyStatsModel::Kind).contains("HtoD Pageable->Device"));
    QCOMPARE(panel.model(StatsPanel::OperatorsTab)->rowCount(), int(result->stats.operators.size()));
    QCOMPARE(panel.model(StatsPanel::RuntimeTab)->rowCount(), int(result->stats.runtime.size()));

    if (!renderDir().isEmpty()) {
        panel.tabs()->setCurrentIndex(StatsPanel::KernelsTab);
        QVERIFY(panel.grab().save(renderDir() + "/stats_kernels.png"));
        panel.tabs()->setCurrentIndex(StatsPanel::CopiesTab);
        QVERIFY(panel.grab().save(renderDir() + "/stats_copies.png"));
        panel.tabs()->setCurrentIndex(StatsPanel::OperatorsTab);
        QVERIFY(panel.grab().save(renderDir() + "/stats_operators.png"));
        panel.tabs()->setCurrentIndex(StatsPanel::RuntimeTab);
        QVERIFY(panel.grab().save(renderDir() + "/stats_runtime.png"));
        panel.tabs()->setCurrentIndex(StatsPanel::KernelsByOperatorTab);
        QVERIFY(panel.grab().save(renderDir() + "/stats_kernels_by_operator.png"));
    }
    // Filtering a large table keeps the proxies consistent (the testers watch).
    panel.filter(StatsPanel::KernelsTab)->setText(QStringLiteral("gemm"));
    QVERIFY(panel.proxy(StatsPanel::KernelsTab)->rowCount() > 0);
    for (const QString& n : column(panel.proxy(StatsPanel::KernelsTab), 0))
        QVERIFY(n.contains("gemm", Qt::CaseInsensitive));
}

// Template kernels reach the trace mangled: the table shows them as C++ reads; the trace's
// name stays the sort key and the filter still finds the demangled text.
void TestStatsModels::mangledKernelNamesAreDemangled() {
    TraceText t;
    t.step(1, 0, 1000);
    const int c = t.nextCorrelation();
    t.runtime("cudaLaunchKernel", 10, 8, c);
    t.kernel("_Z5saxpyifPfS_", 100, 50, c);
    auto trace = t.load();
    auto a = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
    KernelStatsModel k;
    k.setData(trace, a);
    QCOMPARE(k.rowCount(), 1);
    QCOMPARE(k.index(0, KernelStatsModel::Name).data().toString(),
             QStringLiteral("saxpy(int, float, float*, float*)"));
}

// Export CSV: the rows the tab shows (filtered, sorted), the column titles, raw values
// (times in ns), fields with commas or quotes quoted.
void TestStatsModels::csvHasTheRowsShownWithRawValues() {
    StatsPanel panel;
    panel.setData(m_trace, m_analysis);
    const QString all = panel.csv(StatsPanel::KernelsTab);
    QStringList lines = all.split("\r\n", Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), int(m_analysis->stats.kernels.size()) + 1);
    QVERIFY2(lines.front().startsWith("Name,Calls,Total,Mean,Min,Max"), qPrintable(lines.front()));
    QVERIFY(lines.front().endsWith("Tensor Cores,TC eligible"));
    const analysis::KernelStat* sgemm = nullptr;
    for (const auto& k : m_analysis->stats.kernels)
        if (m_trace->str(k.name) == "ampere_sgemm_128x64_nn") sgemm = &k;
    QVERIFY(sgemm);
    QVERIFY(all.contains(
        QString("ampere_sgemm_128x64_nn,%1,%2,").arg(sgemm->count).arg(sgemm->totalNs)));
    panel.filter(StatsPanel::KernelsTab)->setText("vectorized");
    lines = panel.csv(StatsPanel::KernelsTab).split("\r\n", Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY(lines.at(1).startsWith("vectorized_elementwise_kernel,3,"));
    // A name with a comma and a quote is one quoted field, its quote doubled.
    TraceText t;
    t.step(1, 0, 1000);
    const int c = t.nextCorrelation();
    t.runtime("cudaLaunchKernel", 10, 8, c);
    t.kernel("k<int, 2> \\\"x\\\"", 100, 50, c);
    auto trace = t.load();
    StatsPanel other;
    other.setData(trace,
                  std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace)));
    QVERIFY2(other.csv(StatsPanel::KernelsTab).contains("\r\n\"k<int, 2> \"\"x\"\"\",1,50000,"),
             qPrintable(other.csv(StatsPanel::KernelsTab)));
}

void TestStatsModels::kernelsByOperatorTab() {
    StatsPanel panel;
    panel.setData(m_trace, m_analysis);
    const QAbstractItemModel* m = panel.model(StatsPanel::KernelsByOperatorTab);
    QCOMPARE(m->rowCount(), int(m_analysis->stats.kernelsByOperator.size()));
    bool mmSgemm = false;
    int64_t sum = 0;
    for (int r = 0; r < m->rowCount(); ++r) {
        sum += m->index(r, KernelOperatorStatsModel::Total).data(SortRole).toLongLong();
        if (m->index(r, KernelOperatorStatsModel::Operator).data().toString() == "aten::mm" &&
            m->index(r, KernelOperatorStatsModel::Kernel).data().toString() ==
                "ampere_sgemm_128x64_nn")
            mmSgemm =
                m->index(r, KernelOperatorStatsModel::Total).data(SortRole).toLongLong() ==
                    500 * us &&
                m->index(r, KernelOperatorStatsModel::Calls).data(SortRole).toULongLong() == 2;
    }
    QVERIFY(mmSgemm);
    QCOMPARE(sum, int64_t(300 + 200 + 10 + 12 + 8 + 150) * us); // every kernel once
    QVERIFY(panel.summary(StatsPanel::KernelsByOperatorTab)
                ->text()
                .startsWith("3 operator-kernel pairs, 6 calls"));
}

void TestStatsModels::operatorGroupingByShapesAndStacks() {
    TraceText t;
    t.step(1, 0, 2000);
    t.python("train.py(10): step", 0, 1000);
    auto mm = [&](int64_t ts, const char* dims) {
        const int c = t.nextCorrelation();
        t.add(R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 1, "ts": )" +
              std::to_string(ts) + R"(, "dur": 50, "args": {"Input Dims": )" + dims + "}}");
        t.runtime("cudaLaunchKernel", ts + 10, 8, c);
        t.kernel("sgemm", ts + 100, 40, c);
    };
    mm(10, "[[8, 16], [16, 4]]");
    mm(100, "[[8, 16], [16, 4]]");
    mm(200, "[[64, 16], [16, 4]]");
    auto trace = t.load();
    auto result = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
    StatsPanel panel;
    Testers testers;
    attachTesters(testers, panel);
    panel.setData(trace, result);
    QTableView* v = panel.view(StatsPanel::OperatorsTab);
    QVERIFY(v->isColumnHidden(OperatorStatsModel::Detail));
    QVERIFY(!panel.csv(StatsPanel::OperatorsTab).contains("Input shapes"));
    const QAbstractItemModel* m = panel.model(StatsPanel::OperatorsTab);
    QCOMPARE(m->rowCount(), 1);
    QCOMPARE(m->index(0, OperatorStatsModel::DeviceSelf).data(SortRole).toLongLong(), 120 * us);
    QCOMPARE(m->index(0, OperatorStatsModel::GpuTime).data(SortRole).toLongLong(), 120 * us);

    panel.operatorGrouping()->setCurrentIndex(1); // name + input shapes
    QVERIFY(!v->isColumnHidden(OperatorStatsModel::Detail));
    QCOMPARE(m->headerData(OperatorStatsModel::Detail, Qt::Horizontal).toString(),
             QString("Input shapes"));
    QCOMPARE(m->rowCount(), 2);
    QStringList shapes = column(m, OperatorStatsModel::Detail);
    shapes.sort();
    QCOMPARE(shapes, QStringList({"[[64, 16], [16, 4]]", "[[8, 16], [16, 4]]"}));
    for (int r = 0; r < 2; ++r) {
        const bool small =
            m->index(r, OperatorStatsModel::Detail).data().toString().startsWith("[[8,");
        QCOMPARE(m->index(r, OperatorStatsModel::Calls).data(SortRole).toULongLong(),
                 qulonglong(small ? 2 : 1));
        QCOMPARE(m->index(r, OperatorStatsModel::DeviceSelf).data(SortRole).toLongLong(),
                 (small ? 80 : 40) * us);
    }
    QVERIFY(panel.csv(StatsPanel::OperatorsTab).startsWith("Name,Input shapes,Calls,"));
    QVERIFY2(panel.summary(StatsPanel::OperatorsTab)->text().startsWith("2 groups, 3 calls"),
             qPrintable(panel.summary(StatsPanel::OperatorsTab)->text()));

    panel.operatorGrouping()->setCurrentIndex(2); // name + call stack: the python frame
    QCOMPARE(m->headerData(OperatorStatsModel::Detail, Qt::Horizontal).toString(),
             QString("Call stack"));
    QCOMPARE(m->rowCount(), 1);
    QCOMPARE(m->index(0, OperatorStatsModel::Detail).data().toString(),
             QString("train.py(10): step"));

    // A trace without shapes says so, and how to record them.
    panel.operatorGrouping()->setCurrentIndex(1);
    panel.setData(m_trace, m_analysis);
    QVERIFY2(panel.summary(StatsPanel::OperatorsTab)
                 ->text()
                 .contains("no input shapes (profile with record_shapes=True)"),
             qPrintable(panel.summary(StatsPanel::OperatorsTab)->text()));
    panel.operatorGrouping()->setCurrentIndex(0);
    QVERIFY(v->isColumnHidden(OperatorStatsModel::Detail));
    QCOMPARE(m->rowCount(), int(m_analysis->stats.operators.size()));
}

void TestStatsModels::collectivesTabWithOverlap() {
    TraceText t;
    t.step(1, 0, 5000);
    // An all-reduce of 1,000,000 floats over 2 ranks on stream 20, [1000, 2000); a compute
    // kernel on stream 7 covers [1500, 2500): half the communication overlaps computation.
    const int c = t.nextCorrelation();
    t.runtime("cudaLaunchKernel", 900, 10, c);
    t.add(
        R"J({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(x)", "pid": 0, "tid": 20,)J"
        R"J( "ts": 1000, "dur": 1000, "args": {"correlation": )J" +
        std::to_string(c) +
        R"J(, "stream": 20, "device": 0, "Collective name": "allreduce", "In msg nelems": 1000000,)J"
        R"J( "Out msg nelems": 1000000, "dtype": "Float", "Group size": 2}})J");
    t.launch("sgemm", 1400, 10, 1500, 1000);
    auto trace = t.load();
    auto result = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
    StatsPanel panel;
    panel.setData(trace, result);
    const QAbstractItemModel* m = panel.model(StatsPanel::CollectivesTab);
    QCOMPARE(m->rowCount(), 1);
    QCOMPARE(m->index(0, CollectiveStatsModel::Type).data().toString(), QString("allreduce"));
    QCOMPARE(m->index(0, CollectiveStatsModel::Algorithms).data().toString(), QString("RING LL"));
    QCOMPARE(m->index(0, CollectiveStatsModel::Bytes).data().toString(), QString("4.00 MB"));
    QCOMPARE(m->index(0, CollectiveStatsModel::Group).data().toString(), QString("2"));
    QCOMPARE(m->index(0, CollectiveStatsModel::AlgBw).data().toString(), QString("4.00"));
    QCOMPARE(m->index(0, CollectiveStatsModel::BusBw).data().toString(),
             QString("4.00")); // 2(n-1)/n = 1
    const QString summary = panel.summary(StatsPanel::CollectivesTab)->text();
    QVERIFY2(
        summary.contains(
            "GPU 0: communication 1.000 ms, 500.0 µs of it (50.0 %) overlapped with computation"),
        qPrintable(summary));
    // No collectives: the table says so.
    panel.setData(m_trace, m_analysis);
    QCOMPARE(panel.summary(StatsPanel::CollectivesTab)->text(),
             QString("No collective types in the analysis window"));
}

void TestStatsModels::realResnetGroupedByShapes() {
    STALLSCOPE_REQUIRE_SHARED_TRACES();
    const auto path =
        test::sharedTraces() /
        "kineto-tb-plugin/resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz";
    if (!std::filesystem::exists(path)) QSKIP("the ResNet-50 trace is not in ../shared/traces");
    auto imported = importers::importFile(path);
    QVERIFY(imported);
    std::shared_ptr<const model::Trace> trace = imported.value();
    auto result = std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*trace));
    for (auto g :
         {analysis::OperatorGrouping::InputShapes, analysis::OperatorGrouping::CallStack}) {
        QElapsedTimer clock;
        clock.start();
        const analysis::OperatorGroups groups = analysis::groupOperators(*trace, *result, g);
        qInfo("grouped %llu calls into %zu rows in %lld ms (%llu with %s)",
              qulonglong(groups.calls), groups.rows.size(), qlonglong(clock.elapsed()),
              qulonglong(groups.callsWithDetail),
              g == analysis::OperatorGrouping::InputShapes ? "shapes" : "a stack");
        QVERIFY(groups.callsWithDetail > groups.calls / 2); // recorded with shapes and stacks
        // Every name's groups add up to its row in the table by name.
        std::map<std::string, std::tuple<uint64_t, int64_t, int64_t, int64_t>> byName;
        for (const auto& row : groups.rows) {
            auto& [n, self, gpu, gpuSelf] = byName[std::string(trace->str(row.stat.name))];
            n += row.stat.count;
            self += row.stat.selfNs;
            gpu += row.stat.gpuNs;
            gpuSelf += row.stat.gpuSelfNs;
        }
        QCOMPARE(byName.size(), result->stats.operators.size());
        for (const auto& o : result->stats.operators) {
            const auto& [n, self, gpu, gpuSelf] = byName[std::string(trace->str(o.name))];
            QCOMPARE(n, o.count);
            QCOMPARE(self, o.selfNs);
            QCOMPARE(gpu, o.gpuNs);
            QCOMPARE(gpuSelf, o.gpuSelfNs);
        }
    }
    if (!renderDir().isEmpty()) {
        StatsPanel panel;
        panel.resize(1400, 500);
        panel.setData(trace, result);
        panel.tabs()->setCurrentIndex(StatsPanel::OperatorsTab);
        panel.operatorGrouping()->setCurrentIndex(1);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(panel.grab().save(renderDir() + "/stats_operators_by_shape.png"));
        const auto nccl = test::sharedTraces() / "hta/nccl_parser_config/nccl_data.json.gz";
        auto other = importers::importFile(nccl);
        QVERIFY(other);
        std::shared_ptr<const model::Trace> t2 = other.value();
        panel.setData(t2, std::make_shared<const analysis::AnalysisResult>(analysis::analyze(*t2)));
        panel.tabs()->setCurrentIndex(StatsPanel::CollectivesTab);
        QVERIFY(panel.grab().save(renderDir() + "/stats_collectives.png"));
    }
}

QTEST_MAIN(TestStatsModels)
#include "test_stats_models.moc"
