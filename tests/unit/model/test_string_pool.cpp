#include "stallscope/model/string_pool.h"

#include <QTest>

#include <string>
#include <vector>

using namespace stallscope::model;

class TestStringPool : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void emptyStringIsIdZero() {
        StringPool p;
        QCOMPARE(p.intern("").value, 0u);
        QCOMPARE(p.size(), size_t(1));
        QVERIFY(p.view(StringId()).empty());  // invalid id reads as empty
    }
    void internIsIdempotent() {
        StringPool p;
        const StringId a = p.intern("aten::mm");
        const StringId b = p.intern("aten::addmm");
        QVERIFY(a != b);
        QCOMPARE(p.intern("aten::mm"), a);
        QCOMPARE(p.find("aten::addmm"), b);
        QVERIFY(!p.find("missing").valid());
        QCOMPARE(std::string(p.view(a)), std::string("aten::mm"));
    }
    void viewsStayValidWhileGrowing() {
        StringPool p;
        std::vector<std::pair<StringId, std::string_view>> seen;
        for (int i = 0; i < 200000; ++i) {
            const std::string s = "kernel_" + std::to_string(i) + std::string(i % 97, 'x');
            const StringId id = p.intern(s);
            seen.emplace_back(id, p.view(id));
        }
        // A string larger than a storage block goes to its own allocation.
        const std::string big(1 << 20, 'k');
        const StringId bigId = p.intern(big);
        QCOMPARE(p.view(bigId).size(), big.size());
        for (int i = 0; i < 200000; i += 997) {
            const std::string s = "kernel_" + std::to_string(i) + std::string(i % 97, 'x');
            QCOMPARE(std::string(seen[i].second), s);
            QCOMPARE(p.find(s), seen[i].first);
        }
        QVERIFY(p.memoryBytes() > 0);
    }
    void bytesWithNulAndHighBitsAreDistinct() {
        StringPool p;
        const StringId a = p.intern(std::string_view("a\0b", 3));
        const StringId b = p.intern(std::string_view("a\0c", 3));
        const StringId c = p.intern("\xc3\xa9t\xc3\xa9");
        QVERIFY(a != b && b != c);
        QCOMPARE(p.view(a).size(), size_t(3));
    }
};

QTEST_APPLESS_MAIN(TestStringPool)
#include "test_string_pool.moc"
