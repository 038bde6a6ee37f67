// tuneMalloc: the program restarts once with glibc's malloc on transparent huge pages,
// and what it runs later inherits the caller's GLIBC_TUNABLES, not ours.
#include "sanitizer.h"

#include <QProcess>
#include <QTest>

#include <fstream>
#include <map>
#include <string>

namespace {

std::map<QString, QString> probe(const std::map<QString, QString>& set,
                                 const QStringList& unset = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const QString& name : unset) env.remove(name);
    env.remove("GLIBC_TUNABLES");
    env.remove("STALLSCOPE_NO_MALLOC_TUNING");
    for (const auto& [k, v] : set) env.insert(k, v);
    p.setProcessEnvironment(env);
    p.start(STALLSCOPE_HUGE_PAGES_PROBE, {});
    if (!p.waitForFinished(30000) || p.exitCode() != 0) return {};
    std::map<QString, QString> out;
    for (const QString& line :
         QString::fromUtf8(p.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts))
        out[line.section('=', 0, 0)] = line.section('=', 1);
    return out;
}

#if STALLSCOPE_TEST_ASAN
constexpr bool kSanitized = true; // AddressSanitizer's allocator, not glibc's, serves malloc
#else
constexpr bool kSanitized = false;
#endif

/// The kernel gives huge pages only on request ("madvise"): a fresh block has them only if
/// the tunable took effect.
bool thpOnRequestOnly() {
    if (kSanitized) return false;
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    std::getline(f, s);
    return s.find("[madvise]") != std::string::npos;
}

} // namespace

// (glibc rewrites GLIBC_TUNABLES in place while reading it, so /proc/self/environ does not
// tell what the program started with; the huge pages under a fresh block and the number of
// arenas after a second thread allocated do.)
class TestHugePages : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void restartsWithTheTunablesAndPutsTheCallersBack() {
        const auto r = probe({});
        QCOMPARE(r.at("now"), QString("(unset)")); // a recorded program inherits nothing of it
        QCOMPARE(r.at("marker"), QString("(unset)"));
        QCOMPARE(r.at("comm"), QString("huge_pages_prob")); // its own name, not "exe"
        if (!kSanitized) QCOMPARE(r.at("heaps"), QString("1"));
        if (thpOnRequestOnly()) QVERIFY2(r.at("huge_kb").toLong() > 0, qPrintable(r.at("huge_kb")));
    }

    void keepsTheCallersOtherTunables() {
        const auto r = probe({{"GLIBC_TUNABLES", "glibc.malloc.arena_max=4"}});
        QCOMPARE(r.at("now"), QString("glibc.malloc.arena_max=4"));
        QCOMPARE(r.at("marker"), QString("(unset)"));
        if (!kSanitized) QCOMPARE(r.at("heaps"), QString("2"));        // the caller's arena_max
        if (thpOnRequestOnly()) QVERIFY(r.at("huge_kb").toLong() > 0); // and our huge pages
    }

    void theCallersChoiceWins() {
        const bool madvise = thpOnRequestOnly();
        auto r = probe({{"GLIBC_TUNABLES", "glibc.malloc.hugetlb=0"}});
        QCOMPARE(r.at("now"), QString("glibc.malloc.hugetlb=0"));
        if (madvise) QCOMPARE(r.at("huge_kb"), QString("0"));
        if (!kSanitized) QCOMPARE(r.at("heaps"), QString("1")); // but our arena_max
        r = probe({{"STALLSCOPE_NO_MALLOC_TUNING", "1"}});
        QCOMPARE(r.at("now"), QString("(unset)"));
        if (madvise) QCOMPARE(r.at("huge_kb"), QString("0"));
        if (!kSanitized) QCOMPARE(r.at("heaps"), QString("2"));
    }
};

QTEST_GUILESS_MAIN(TestHugePages)
#include "test_huge_pages.moc"
