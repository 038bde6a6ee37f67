#pragma once
// A small SQLite database made by the test itself (tables named like those of the formats a
// user may bring: Nsight Systems exports, RPD profiles), returned as the file's bytes.
// Needs SQLite (link SQLite::SQLite3).
#include "test_support.h"

#include <sqlite3.h>

#include <QTemporaryDir>

#include <string>
#include <vector>

namespace stallscope::test {

/// The bytes of a database made by running `sql` (its tables and rows). Empty on failure.
inline std::string sqliteFromSql(const std::string& sql) {
    QTemporaryDir dir;
    const std::string path = dir.filePath("made.sqlite").toStdString();
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
        sqlite3_close(db);
        return {};
    }
    const bool ok = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(db);
    return ok ? readFile(path) : std::string();
}

/// The bytes of a database holding one empty table per name (`wal`: in WAL journal mode).
/// Empty when SQLite fails (the caller's QVERIFY then names the case).
inline std::string sqliteDatabase(const std::vector<std::string>& tables, bool wal = false) {
    std::string sql = "PRAGMA page_size = 1024; ";
    if (wal) sql += "PRAGMA journal_mode = WAL; ";
    for (const std::string& t : tables)
        sql += "CREATE TABLE \"" + t + "\" (id INTEGER, text TEXT); ";
    // A database without tables is written at all only once something was: a table made
    // and dropped leaves the header and an empty schema.
    if (tables.empty()) sql += "CREATE TABLE gone (x); DROP TABLE gone; ";
    return sqliteFromSql(sql);
}

/// An Nsight-like export whose CUPTI_ACTIVITY_KIND_KERNEL table holds `rows` kernels of one
/// name (StringIds 1), 1 us apart on device 0, stream 7, process 5 (globalPid 5 << 24).
inline std::string sqliteKernelTable(int rows) {
    std::string sql = "PRAGMA page_size = 1024; CREATE TABLE StringIds (id INTEGER PRIMARY KEY, "
                      "value TEXT); INSERT INTO StringIds VALUES (1, 'k'); CREATE TABLE "
                      "CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
                      "streamId INTEGER, correlationId INTEGER, globalPid INTEGER, "
                      "demangledName INTEGER); BEGIN; ";
    for (int i = 0; i < rows; ++i)
        sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(1000 * i) + ", " +
               std::to_string(1000 * i + 500) + ", 0, 7, " + std::to_string(i + 1) + ", " +
               std::to_string(int64_t(5) << 24) + ", 1); ";
    return sqliteFromSql(sql + "COMMIT;");
}

} // namespace stallscope::test
