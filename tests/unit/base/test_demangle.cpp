// C++ kernel names demangled for the tables; anything else, or what the runtime cannot
// demangle, as written.
#include "stallscope/base/demangle.h"

#include <QTest>

using stallscope::base::demangle;
using stallscope::base::looksMangled;

class TestDemangle : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void namesAsPeopleReadThem() {
        // A Composable Kernel entry point as a ROCm trace writes it (shortened template).
        QCOMPARE(QString::fromStdString(demangle("_ZN7ck_tile6kentryILi1ENS_6KernelEEEvv")),
                 QString("void ck_tile::kentry<1, ck_tile::Kernel>()"));
        QCOMPARE(QString::fromStdString(demangle("_Z5saxpyifPfS_")),
                 QString("saxpy(int, float, float*, float*)"));
        // Not mangled: unchanged.
        for (const char* plain :
             {"volta_sgemm_128x64_nn", "Memcpy HtoD (Pageable -> Device)", "", "_", "_Z"}) {
            QCOMPARE(QString::fromStdString(demangle(plain)), QString(plain));
        }
        QVERIFY(looksMangled("_ZN2at6native"));
        QVERIFY(!looksMangled("ampere_fp16_s16816gemm"));
        // Mangled-looking but not a symbol, or hostile: as written, never a crash.
        QCOMPARE(QString::fromStdString(demangle("_Z\xff\xfe not a symbol")),
                 QString::fromStdString("_Z\xff\xfe not a symbol"));
        const std::string huge = "_Z" + std::string(100000, 'N');
        QCOMPARE(demangle(huge), huge);
    }
};

QTEST_MAIN(TestDemangle)
#include "test_demangle.moc"
