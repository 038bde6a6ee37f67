#include "sqlite_db.h"

#include "byte_stream.h"

#include "stallscope/base/utf8.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

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

/// Nothing in the file may run: no triggers, views or functions from its schema.
void makeDefensive(sqlite3* db) {
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
}

std::string quoted(std::string_view name) {
    std::string out = "\"";
    for (const char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

} // namespace

bool SqliteRow::isNull(int c) const {
    return sqlite3_column_type(m_st, c) == SQLITE_NULL;
}

int64_t SqliteRow::integer(int c, int64_t ifNull) const {
    return isNull(c) ? ifNull : static_cast<int64_t>(sqlite3_column_int64(m_st, c));
}

double SqliteRow::real(int c) const {
    return sqlite3_column_double(m_st, c);
}

std::string_view SqliteRow::text(int c) const {
    const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(m_st, c));
    return t ? std::string_view(t, static_cast<size_t>(sqlite3_column_bytes(m_st, c)))
             : std::string_view();
}

SqliteDb::SqliteDb(sqlite3* db) : m_db(db) {
    makeDefensive(m_db);
    sqlite3_progress_handler(m_db, 1000, &SqliteDb::progress, this);
}

SqliteDb::SqliteDb(SqliteDb&& o) noexcept
    : m_db(std::exchange(o.m_db, nullptr)), m_budget(o.m_budget), m_steps(o.m_steps),
      m_cancel(o.m_cancel) {
    if (m_db) sqlite3_progress_handler(m_db, 1000, &SqliteDb::progress, this);
}

SqliteDb& SqliteDb::operator=(SqliteDb&& o) noexcept {
    if (this != &o) {
        sqlite3_close(m_db);
        m_db = std::exchange(o.m_db, nullptr);
        m_budget = o.m_budget;
        m_steps = o.m_steps;
        m_cancel = o.m_cancel;
        if (m_db) sqlite3_progress_handler(m_db, 1000, &SqliteDb::progress, this);
    }
    return *this;
}

SqliteDb::~SqliteDb() {
    sqlite3_close(m_db);
}

int SqliteDb::progress(void* p) {
    auto* self = static_cast<SqliteDb*>(p);
    if (self->m_cancel && self->m_cancel->load(std::memory_order_relaxed)) return 1;
    return self->m_budget && ++self->m_steps > self->m_budget ? 1 : 0;
}

void SqliteDb::limitSteps(unsigned thousands) {
    m_budget = thousands;
    m_steps = 0;
}

std::string SqliteDb::oneLine(const char* message) {
    std::string s =
        base::truncateUtf8(base::sanitizeUtf8(message ? message : "unknown error"), 160);
    for (char& c : s)
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    return base::closeBidi(s);
}

Result<SqliteDb> SqliteDb::openFile(const fs::path& path) {
    sqlite3* db = nullptr;
    const std::string uri = readOnlyUri(path);
    if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) !=
        SQLITE_OK) {
        Error e{ErrorKind::Unreadable,
                "it cannot be opened: " + oneLine(db ? sqlite3_errmsg(db) : "out of memory")};
        sqlite3_close(db);
        return e;
    }
    return SqliteDb(db);
}

Result<SqliteDb> SqliteDb::openBytes(std::string_view bytes) {
    sqlite3* db = nullptr;
    if (bytes.empty() ||
        sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        sqlite3_close(db);
        return Error{ErrorKind::Unreadable, "it cannot be opened in memory"};
    }
    // SQLite owns the copy (freed on close, or at once when it is refused) and never writes it.
    auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
    if (!copy) {
        sqlite3_close(db);
        return Error{ErrorKind::OverMemoryBudget, "out of memory"};
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
        Error e{ErrorKind::Unreadable, "it cannot be opened: " + oneLine(sqlite3_errmsg(db))};
        sqlite3_close(db);
        return e;
    }
    return SqliteDb(db);
}

base::Status SqliteDb::each(const std::string& sql,
                            const std::function<void(const SqliteRow&)>& row) const {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        sqlite3_finalize(st);
        return Error{ErrorKind::InvalidStructure, oneLine(sqlite3_errmsg(m_db))};
    }
    int rc = SQLITE_ROW;
    const SqliteRow r(st);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(r);
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return {};
    if (rc == SQLITE_INTERRUPT && m_cancel && m_cancel->load())
        return Error{ErrorKind::Cancelled, "cancelled"};
    return Error{rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? ErrorKind::InvalidStructure
                                                             : ErrorKind::Unreadable,
                 oneLine(sqlite3_errmsg(m_db))};
}

Result<std::vector<std::string>> SqliteDb::tables(size_t limit) const {
    std::vector<std::string> out;
    const auto s =
        each("SELECT name FROM sqlite_master WHERE type = 'table' LIMIT " + std::to_string(limit),
             [&](const SqliteRow& r) { out.emplace_back(r.text(0)); });
    if (!s) return Error{s.error().kind, "its schema cannot be read: " + s.error().message};
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> SqliteDb::columns(std::string_view table) const {
    std::vector<std::string> out;
    std::string literal = "'"; // a string literal: double quotes may not read as one (SQLITE_DQS=0)
    for (const char c : table) literal += c == '\'' ? std::string("''") : std::string(1, c);
    (void)each("SELECT name FROM pragma_table_info(" + literal + "')",
               [&](const SqliteRow& r) { out.emplace_back(r.text(0)); });
    return out;
}

Result<SqliteDb> openProfilerDatabase(const fs::path& path, const ImportOptions& options) {
    char magic[2] = {0, 0};
    {
        FileByteStream peek(path.string());
        peek.read(magic, 2);
    }
    if (!looksGzip(magic, 2)) return SqliteDb::openFile(path);
    const uint64_t limit =
        options.memoryBudgetBytes ? options.memoryBudgetBytes / 2 : uint64_t(16) << 30;
    auto bytes = readWholeFile(path.string(), limit, "a gzip-compressed database");
    if (!bytes) return bytes.error();
    return SqliteDb::openBytes(bytes.value());
}

std::string selectColumns(const SqliteDb& db, std::string_view table,
                          const std::vector<std::string_view>& wanted, std::string_view tail) {
    const std::vector<std::string> have = db.columns(table);
    std::string sql = "SELECT ";
    for (size_t i = 0; i < wanted.size(); ++i) {
        if (i) sql += ", ";
        const bool present = std::find(have.begin(), have.end(), wanted[i]) != have.end();
        sql += present ? quoted(wanted[i]) : std::string("NULL");
    }
    sql += " FROM " + quoted(table);
    if (!tail.empty()) sql += " " + std::string(tail);
    return sql;
}

base::Status eachRow(const SqliteDb& db, std::string_view table,
                     const std::vector<std::string_view>& columns,
                     const std::function<void(const SqliteRow&)>& row) {
    if (!db.hasTable(table)) return {};
    auto s = db.each(selectColumns(db, table, columns), row);
    if (!s) return Error{s.error().kind, std::string(table) + ": " + s.error().message};
    return {};
}

base::Status StringIds::read(const SqliteDb& db, std::string_view table, std::string_view idColumn,
                             std::string_view textColumn) {
    return eachRow(db, table, {idColumn, textColumn},
                   [&](const SqliteRow& r) { m_text[r.integer(0)] = r.text(1); });
}

std::string_view StringIds::operator()(int64_t id) const {
    const auto it = m_text.find(id);
    return it == m_text.end() ? std::string_view() : std::string_view(it->second);
}

} // namespace stallscope::importers
