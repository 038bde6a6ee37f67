// The loop guard: STALLSCOPE_ADVANCED is true when a cursor moved forward; when it did
// not, a release build counts the stall and lets the caller leave the loop, and a debug
// build stops the program naming the place (checked in a child process).
#include "stallscope/base/loop_guard.h"
#include "stallscope/model/time_math.h"

#include <QTest>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace stallscope::model;
using namespace stallscope::base;

class TestLoopGuard : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void advancingIsTrueAndFree() {
        const uint64_t before = loopStallCount();
        QVERIFY(STALLSCOPE_ADVANCED(1, 2));
        QVERIFY(STALLSCOPE_ADVANCED(size_t(0), size_t(1)));
        QCOMPARE(loopStallCount(), before);
    }

    void aStalledLoopEnds() {
        // A loop whose step does not move: the guard ends it (release) or the program (debug).
        const pid_t child = fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            int i = 0, iterations = 0;
            while (i < 10) {
                const int next = i;  // a seek that returned where it started
                ++iterations;
                if (!STALLSCOPE_ADVANCED(i, next)) break;
                i = next;
            }
            _exit(iterations == 1 && loopStallCount() == 1 ? 0 : 1);
        }
        int status = 0;
        QCOMPARE(waitpid(child, &status, 0), child);
#ifdef NDEBUG
        QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, "release: one iteration, one counted stall");
#else
        QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "debug: abort at the stalled loop");
#endif
    }

    void saturatingTime() {
        QCOMPARE(satAdd(kMaxNs, 1), kMaxNs);
        QCOMPARE(satAdd(kMinNs, -1), kMinNs);
        QCOMPARE(satSub(kMinNs, 1), kMinNs);
        QCOMPARE(satSub(kMaxNs, -1), kMaxNs);
        QCOMPARE(satSub(int64_t(5), int64_t(7)), int64_t(-2));
        QCOMPARE(nsFromDouble(1e300), kMaxNs);
        QCOMPARE(nsFromDouble(-1e300), kMinNs);
        QCOMPARE(nsFromDouble(std::nan("")), int64_t(0));
        QCOMPARE(nsFromDouble(-2.7), int64_t(-2));
        QCOMPARE(nsDiff(kMaxNs, kMinNs), 18446744073709551615.0);
        QCOMPARE(nsDiff(int64_t(1'700'000'000'000'000'001), int64_t(1'700'000'000'000'000'000)), 1.0);
    }
};

QTEST_GUILESS_MAIN(TestLoopGuard)
#include "test_loop_guard.moc"

using stallscope::base::loopStallCount;

using stallscope::base::loopStallCount;

using stallscope::base::loopStallCount;

using stallscope::base::loopStallCount;

using stallscope::base::loopStallCount;

using stallscope::base::loopStallCount;

using stallscope::base::loopStallCount;

using stallscope::base::loopStallCount;
