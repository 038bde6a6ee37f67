// preferHugePages: the program restarts once with glibc's malloc on transparent huge pages,
// and what it runs later inherits the caller's GLIBC_TUNABLES, not ours.
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
    env.remove("STALLSCOPE_NO_HUGE_PAGES");
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

/// The kernel gives huge pages only on request ("madvise"): a fresh block has them only if
/// the tunable took effect.
bool thpOnRequestOnly() {
#if defined(__SANITIZE_ADDRESS__)
    return false; // AddressSanitizer's allocator, not glibc's, serves malloc
#endif
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    std::getline(f, s);
    return s.find("[madvise]") != std::string::npos;
}

} // namespace

// (glibc rewrites GLIBC_TUNABLES in place while reading it, so /proc/self/environ does not
// tell what the program started with; the huge pages under a fresh block do.)
class TestHugePages : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void restartsWithTheTunableAndPutsTheCallersBack() {
        const auto r = probe({});
        QCOMPARE(r.at("now"), QString("(unset)")); // a recorded program inherits nothing of it
        QCOMPARE(r.at("marker"), QString("(unset)"));
        if (!thpOnRequestOnly())
            QSKIP(
                "transparent huge pages are not in 'madvise' mode here (or malloc is not glibc's)");
        QVERIFY2(r.at("huge_kb").toLong() > 0, qPrintable(r.at("huge_kb")));
    }

    void keepsTheCallersOtherTunables() {
        const auto r = probe({{"GLIBC_TUNABLES", "glibc.malloc.arena_max=4"}});
        QCOMPARE(r.at("now"), QString("glibc.malloc.arena_max=4"));
        QCOMPARE(r.at("marker"), QString("(unset)"));
        if (!thpOnRequestOnly())
            QSKIP(
                "transparent huge pages are not in 'madvise' mode here (or malloc is not glibc's)");
        QVERIFY(r.at("huge_kb").toLong() > 0);
    }

    void theCallersChoiceWins() {
        auto r = probe({{"GLIBC_TUNABLES", "glibc.malloc.hugetlb=0"}});
        QCOMPARE(r.at("now"), QString("glibc.malloc.hugetlb=0"));
        const bool madvise = thpOnRequestOnly();
        if (madvise) QCOMPARE(r.at("huge_kb"), QString("0"));
        r = probe({{"STALLSCOPE_NO_HUGE_PAGES", "1"}});
        QCOMPARE(r.at("now"), QString("(unset)"));
        if (madvise) QCOMPARE(r.at("huge_kb"), QString("0"));
    }
};

QTEST_GUILESS_MAIN(TestHugePages)
#include "test_huge_pages.moc"
