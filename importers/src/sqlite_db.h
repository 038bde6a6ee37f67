#pragma once
// A read-only SQLite connection for the importers of databases other profilers write
// (Nsight Systems exports, RPD): opened read-only and immutable (no journal, WAL or lock
// files beside the user's file) or from bytes held in memory (a gzip-compressed database,
// inflated), defensive (nothing stored in the file runs: no triggers, views or functions
// from its schema), and read by the columns a table has, since export schemas differ
// between versions.
#include "stallscope/importers/import_options.h"
#include "stallscope/importers/result.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace stallscope::importers {

/// One row of a query, read by column index.
class SqliteRow {
public:
    explicit SqliteRow(sqlite3_stmt* st) : m_st(st) {}
    [[nodiscard]] bool isNull(int column) const;
    [[nodiscard]] int64_t integer(int column, int64_t ifNull = 0) const;
    [[nodiscard]] double real(int column) const;
    /// Text (or a number as text); empty when NULL. Valid until the next row.
    [[nodiscard]] std::string_view text(int column) const;

private:
    sqlite3_stmt* m_st;
};

class SqliteDb {
public:
    /// Opens a database file read-only. Error: not a database, unreadable.
    static Result<SqliteDb> openFile(const std::filesystem::path& path);
    /// Opens a database held in memory (SQLite keeps its own copy and never writes it).
    static Result<SqliteDb> openBytes(std::string_view bytes);

    SqliteDb(SqliteDb&& other) noexcept;
    SqliteDb& operator=(SqliteDb&& other) noexcept;
    ~SqliteDb();

    /// Stops every later statement after about `steps` thousand virtual-machine steps
    /// (a schema read of a hostile file); 0: no limit.
    void limitSteps(unsigned thousands);
    /// Stops every later statement once `cancel` is set.
    void setCancel(const std::atomic<bool>* cancel) { m_cancel = cancel; }

    /// The table names, sorted; at most `limit`. Error: the schema cannot be read.
    Result<std::vector<std::string>> tables(size_t limit = 4096) const;
    /// A table's column names in order; empty when there is no such table.
    [[nodiscard]] std::vector<std::string> columns(std::string_view table) const;
    [[nodiscard]] bool hasTable(std::string_view table) const { return !columns(table).empty(); }

    /// Runs `sql`, calling `row` for each row. Error: SQLite's message, on one line.
    base::Status each(const std::string& sql,
                      const std::function<void(const SqliteRow&)>& row) const;

    /// SQLite's message as one line to show (it may quote the file's own schema).
    static std::string oneLine(const char* message);

private:
    explicit SqliteDb(sqlite3* db);
    static int progress(void* self);

    sqlite3* m_db = nullptr;
    unsigned m_budget = 0; // in thousands of steps; 0: none
    mutable unsigned m_steps = 0;
    const std::atomic<bool>* m_cancel = nullptr;
};

/// A profiler's database file: opened read-only where it lies, or inflated into memory when
/// it is gzip-compressed (within the memory budget).
Result<SqliteDb> openProfilerDatabase(const std::filesystem::path& path,
                                      const ImportOptions& options);

/// SELECT text for `table` reading `wanted` columns in that order: a column the table lacks
/// is read as NULL, so callers index rows the same way whatever the export version.
std::string selectColumns(const SqliteDb& db, std::string_view table,
                          const std::vector<std::string_view>& wanted, std::string_view tail = {});

/// Calls `row` for each row of `table`, read by `columns` (selectColumns): a table the file
/// lacks has no rows. Errors name the table.
base::Status eachRow(const SqliteDb& db, std::string_view table,
                     const std::vector<std::string_view>& columns,
                     const std::function<void(const SqliteRow&)>& row);

/// A profiler's string table (Nsight's StringIds, RPD's rocpd_string): id -> text.
class StringIds {
public:
    base::Status read(const SqliteDb& db, std::string_view table, std::string_view idColumn,
                      std::string_view textColumn);
    /// The text of `id`; empty when the table does not hold it. Stable while this lives.
    [[nodiscard]] std::string_view operator()(int64_t id) const;

private:
    std::unordered_map<int64_t, std::string> m_text;
};

} // namespace stallscope::importers
