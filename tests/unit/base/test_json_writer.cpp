// base::JsonWriter's strings: quotes, backslashes and controls escaped, valid UTF-8 kept, and
// bytes that are not UTF-8 (a file name in Latin-1, a cut sequence) written as U+FFFD, so
// that every document is JSON a strict reader takes (RFC 8259 8.1; docs/security.md).
#include "stallscope/base/json_writer.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using stallscope::base::JsonWriter;

class TestJsonWriter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void stringsAreAlwaysJson() {
        const struct {
            std::string in;
            QString readBack;
        } cases[] = {
            {"plain", "plain"},
            {"quote \" backslash \\ tab \t nl \n", "quote \" backslash \\ tab \t nl \n"},
            {"esc \x1b[31m del \x7f", QString::fromUtf8("esc \x1b[31m del \x7f")},
            {"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80",
             QString::fromUtf8("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80")},
            {"latin-1 caf\xe9.json", QString::fromUtf8("latin-1 caf\xef\xbf\xbd.json")},
            {"cut \xe2\x86", QString::fromUtf8("cut \xef\xbf\xbd\xef\xbf\xbd")},
            {"overlong \xc0\xaf", QString::fromUtf8("overlong \xef\xbf\xbd\xef\xbf\xbd")},
        };
        for (const auto& c : cases) {
            JsonWriter w(false);
            w.beginObject();
            w.key("path").value(c.in);
            w.endObject();
            QJsonParseError error{};
            const QJsonDocument d =
                QJsonDocument::fromJson(QByteArray::fromStdString(w.str()), &error);
            QVERIFY2(error.error == QJsonParseError::NoError, w.str().c_str());
            QCOMPARE(d.object()["path"].toString(), c.readBack);
        }
    }
};

QTEST_GUILESS_MAIN(TestJsonWriter)
#include "test_json_writer.moc"
