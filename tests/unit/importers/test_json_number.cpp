// Exact µs -> ns parsing of every timestamp spelling in the Kineto eras.
#include "json_number.h"

#include <QTest>

#include <limits>

using namespace stallscope::importers;

Q_DECLARE_METATYPE(NumberStatus)

class TestJsonNumber : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void micros_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<NumberStatus>("status");
        QTest::addColumn<qint64>("ns");
        QTest::newRow("integer us") << "1623142623460111" << NumberStatus::Ok << qint64(1623142623460111000);
        QTest::newRow("3 decimals, above 2^53 ns") << "1712195495521131.123" << NumberStatus::Ok
                                                  << qint64(1712195495521131123);
        QTest::newRow("relative 3 decimals") << "4458676522690.655" << NumberStatus::Ok << qint64(4458676522690655);
        QTest::newRow("fewer decimals") << "12.5" << NumberStatus::Ok << qint64(12500);
        QTest::newRow("4th decimal rounds up") << "1.0005" << NumberStatus::Ok << qint64(1001);
        QTest::newRow("4th decimal rounds down") << "1.0004999" << NumberStatus::Ok << qint64(1000);
        QTest::newRow("negative") << "-3.25" << NumberStatus::Ok << qint64(-3250);
        QTest::newRow("leading dot") << ".5" << NumberStatus::Ok << qint64(500);
        QTest::newRow("exponent") << "1.5e3" << NumberStatus::Ok << qint64(1500000);
        QTest::newRow("zero") << "0" << NumberStatus::Ok << qint64(0);
        QTest::newRow("N/A") << "N/A" << NumberStatus::NotANumber << qint64(0);
        QTest::newRow("empty") << "" << NumberStatus::NotANumber << qint64(0);
        QTest::newRow("trailing junk") << "12x" << NumberStatus::NotANumber << qint64(0);
        QTest::newRow("beyond int64 ns") << "9223372036854776" << NumberStatus::OutOfRange << qint64(0);
        // The ends of int64 ns, as a writer of int64 ns spells them, read back exactly.
        QTest::newRow("INT64_MAX ns") << "9223372036854775.807" << NumberStatus::Ok
                                      << qint64(std::numeric_limits<qint64>::max());
        QTest::newRow("INT64_MIN ns") << "-9223372036854775.808" << NumberStatus::Ok
                                      << qint64(std::numeric_limits<qint64>::min());
        QTest::newRow("below INT64_MIN ns") << "-9223372036854775.809" << NumberStatus::OutOfRange << qint64(0);
        QTest::newRow("above INT64_MAX ns") << "9223372036854775.808" << NumberStatus::OutOfRange << qint64(0);
        QTest::newRow("beyond uint64") << "99999999999999999999999" << NumberStatus::OutOfRange << qint64(0);
        QTest::newRow("huge exponent") << "1e300" << NumberStatus::OutOfRange << qint64(0);
    }
    void micros() {
        QFETCH(QString, text);
        QFETCH(NumberStatus, status);
        QFETCH(qint64, ns);
        const std::string s = text.toStdString();
        const NsResult r = parseMicrosToNs(s);
        QCOMPARE(r.status, status);
        if (status == NumberStatus::Ok) QCOMPARE(static_cast<qint64>(r.ns), ns);
    }
    void integers() {
        QCOMPARE(parseInt64("25738").value, int64_t(25738));
        QCOMPARE(parseInt64("-1").value, int64_t(-1));
        QCOMPARE(parseInt64("1.5").status, NumberStatus::NotANumber);
        QCOMPARE(parseInt64("92233720368547758070").status, NumberStatus::OutOfRange);
        double d = 0;
        QVERIFY(parseDouble("0.006578947368421052", d));
        QVERIFY(!parseDouble("N/A", d));
    }
};

QTEST_APPLESS_MAIN(TestJsonNumber)
#include "test_json_number.moc"
