#include "sqlite_schema.h"

#include "stallscope/base/utf8.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

constexpr std::string_view kHeader("SQLite format 3\0", 16);

/// A `file:` URI for `path`, read-only and immutable: SQLite then takes no lock and opens
/// no journal or WAL file beside it. Every byte but the unreserved ones is percent-encoded
/// ('?', '#' and '%' in a name must not be read as URI syntax).
std::string readOnlyUri(const fs::path& path) {
    std::error_code ec;
    fs::path abs = fs::absolute(path, ec);
    if (ec) abs = path;
    std::string out = "file://";
    for (const unsigned char c : abs.string()) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '-' || c == '_' ||
                           c == '~';
        if (plain) {
            out += static_cast<char>(c);
        } else {
            char hex[4];
            std::snprintf(hex, sizeof hex, "%%%02X", c);
            out += hex;
        }
    }
    return out + "?mode=ro&immutable=1";
}

/// SQLite's message as one line to show: it may quote the file's own schema (line breaks,
/// bytes that are not UTF-8, direction overrides).
std::string oneLine(const char* message) {
    std::string s =
        base::truncateUtf8(base::sanitizeUtf8(message ? message : "unknown error"), 160);
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return base::closeBidi(s);
}

/// Stops a statement that runs too long (a schema of millions of entries).
int stopAfterBudget(void* steps) {
    return ++*static_cast<unsigned*>(steps) > 20'000 ? 1 : 0;
}

/// Reads the table names of an open connection, then closes it.
SqliteSchema tablesOf(sqlite3* db) {
    SqliteSchema out;
    auto failed = [&](const char* what) {
        out.problem = std::string(what) + ": " + oneLine(sqlite3_errmsg(db));
        sqlite3_close(db);
        return out;
    };
    // Nothing in the file may run: no triggers, views or functions from its schema.
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    unsigned steps = 0;
    sqlite3_progress_handler(db, 1000, stopAfterBudget, &steps);
    sqlite3_stmt* st = nullptr;
    const std::string sql = "SELECT name FROM sqlite_master WHERE type = 'table' LIMIT " +
                            std::to_string(SqliteSchema::kMaxTables);
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
        return failed("its schema cannot be read");
    int rc = SQLITE_ROW;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        if (text) out.tables.emplace_back(text, static_cast<size_t>(sqlite3_column_bytes(st, 0)));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        out.tables.clear();
        return failed("its schema cannot be read");
    }
    sqlite3_close(db);
    std::sort(out.tables.begin(), out.tables.end());
    out.read = true;
    return out;
}

} // namespace

bool SqliteSchema::has(std::string_view pattern) const {
    const bool prefix = !pattern.empty() && pattern.back() == '*';
    if (prefix) pattern.remove_suffix(1);
    return std::any_of(tables.begin(), tables.end(), [&](const std::string& t) {
        return prefix ? std::string_view(t).starts_with(pattern) : t == pattern;
    });
}

bool looksSqlite(std::string_view b) {
    return b.starts_with(kHeader);
}

SqliteSchema readSqliteSchema(const fs::path& path) {
    sqlite3* db = nullptr;
    const std::string uri = readOnlyUri(path);
    if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
        SQLITE_OK) {
        SqliteSchema out;
        out.problem = "it cannot be opened: " + oneLine(db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return out;
    }
    return tablesOf(db);
}

SqliteSchema readSqliteSchemaFromBytes(std::string_view bytes) {
    SqliteSchema out;
    sqlite3* db = nullptr;
    if (bytes.empty() ||
        sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        out.problem = "it cannot be opened in memory";
        sqlite3_close(db);
        return out;
    }
    // SQLite owns the copy (freed on close, or at once when it is refused) and never writes it.
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
    if (!copy) {
        out.problem = "out of memory";
        sqlite3_close(db);
        return out;
    }
    std::memcpy(copy, bytes.data(), bytes.size());
    // A database in WAL mode (header bytes 18 and 19 = 2) cannot be read from memory; its
    // file without the WAL is a rollback-journal database, as PRAGMA journal_mode=DELETE
    // would mark it.
    if (bytes.size() > 19 && copy[18] == 2 && copy[19] == 2) copy[18] = copy[19] = 1;
    const auto n = static_cast<sqlite3_int64>(bytes.size());
    if (sqlite3_deserialize(db, "main", copy, n, n,
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) !=
        SQLITE_OK) {
        out.problem = "it cannot be opened: " + oneLine(sqlite3_errmsg(db));
        sqlite3_close(db);
        return out;
    }
    return tablesOf(db);
}

} // namespace stallscope::importers
