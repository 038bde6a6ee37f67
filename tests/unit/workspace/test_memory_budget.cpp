// The memory budget's inputs: the room a cgroup leaves (v2 and v1, a limit on an ancestor,
// none), STALLSCOPE_MEMORY_BUDGET, and the default the CLI and the GUI share
// (docs/security.md: in a 6 GiB container the host's MemAvailable is not what binds).
#include "stallscope/workspace/memory_budget.h"

#include "test_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

using namespace stallscope;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    test::writeFile(p, text);
}

} // namespace

class TestMemoryBudget : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void cgroupV2LimitOnAnAncestor() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        put(root / "self_cgroup", "0::/job.slice/step/task\n");
        put(root / "cg/job.slice/memory.max", "6442450944\n"); // 6 GiB on the slice
        put(root / "cg/job.slice/memory.current", "1073741824\n");
        put(root / "cg/job.slice/step/memory.max", "max\n");
        put(root / "cg/job.slice/step/memory.current", "536870912\n");
        put(root / "cg/job.slice/step/task/memory.max", "max\n");
        put(root / "cg/job.slice/step/task/memory.current", "1\n");
        const auto room = workspace::cgroupRoomBytes(root / "self_cgroup", root / "cg");
        QVERIFY(room.has_value());
        QCOMPARE(*room, uint64_t(6442450944 - 1073741824));
        // A tighter limit lower down wins.
        put(root / "cg/job.slice/step/memory.max", "1000000000\n");
        QCOMPARE(*workspace::cgroupRoomBytes(root / "self_cgroup", root / "cg"),
                 uint64_t(1000000000 - 536870912));
    }
    void cgroupV1AndNoLimit() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        put(root / "self_cgroup", "12:cpu,cpuacct:/x\n7:memory:/docker/abc\n");
        put(root / "cg/memory/docker/abc/memory.limit_in_bytes", "2147483648\n");
        put(root / "cg/memory/docker/abc/memory.usage_in_bytes", "147483648\n");
        put(root / "cg/memory/docker/memory.limit_in_bytes", "9223372036854771712\n"); // no limit
        put(root / "cg/memory/docker/memory.usage_in_bytes", "5\n");
        QCOMPARE(*workspace::cgroupRoomBytes(root / "self_cgroup", root / "cg"),
                 uint64_t(2000000000));
        // No limit anywhere: nothing to say.
        put(root / "none", "0::/\n");
        put(root / "cg2/memory.max", "max\n");
        QVERIFY(!workspace::cgroupRoomBytes(root / "none", root / "cg2").has_value());
        QVERIFY(!workspace::cgroupRoomBytes(root / "missing", root / "cg2").has_value());
        // Over the limit already: no room, never a wrap-around.
        put(root / "over", "0::/o\n");
        put(root / "cg3/o/memory.max", "100\n");
        put(root / "cg3/o/memory.current", "200\n");
        QCOMPARE(*workspace::cgroupRoomBytes(root / "over", root / "cg3"), uint64_t(0));
    }
    void theDefaultBudget() {
        qputenv("STALLSCOPE_MEMORY_BUDGET", "512M");
        QCOMPARE(workspace::defaultMemoryBudget(), uint64_t(512) << 20);
        qunsetenv("STALLSCOPE_MEMORY_BUDGET");
        // 80 % of what is available (which moves with the machine's other work: a range).
        const double budget = double(workspace::defaultMemoryBudget());
        const double available = double(workspace::availableMemoryBytes());
        QVERIFY(available > 0);
        QVERIFY2(budget > 0.4 * available && budget < 1.2 * available,
                 qPrintable(QString("%1 of %2").arg(budget).arg(available)));
    }
};

QTEST_GUILESS_MAIN(TestMemoryBudget)
#include "test_memory_budget.moc"
