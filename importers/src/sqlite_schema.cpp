#include "sqlite_schema.h"
#include "sqlite_db.h"

#include <algorithm>

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

constexpr std::string_view kHeader("SQLite format 3\0", 16);

/// The table names of an open database; a schema of millions of entries is stopped.
SqliteSchema tablesOf(Result<SqliteDb> db) {
    SqliteSchema out;
    if (!db) {
        out.problem = db.error().message;
        return out;
    }
    db->limitSteps(20'000);
    auto tables = db->tables(SqliteSchema::kMaxTables);
    if (!tables) {
        out.problem = tables.error().message;
        return out;
    }
    out.tables = std::move(tables.value());
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
    return tablesOf(SqliteDb::openFile(path));
}

SqliteSchema readSqliteSchemaFromBytes(std::string_view bytes) {
    return tablesOf(SqliteDb::openBytes(bytes));
}

} // namespace stallscope::importers
