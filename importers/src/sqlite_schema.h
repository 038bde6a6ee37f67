#pragma once
// The table names of an SQLite database, read without changing anything: a file opened
// read-only and immutable (no journal, WAL or lock files), or bytes held in memory
// (a gzip-compressed database, inflated). Only the schema is read, never a row of data.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace stallscope::importers {

struct SqliteSchema {
    bool read = false;               // the schema could be read
    std::vector<std::string> tables; // sorted; at most kMaxTables
    std::string problem;             // why it could not be read (when !read)

    static constexpr size_t kMaxTables = 4096;

    /// True when a table is named `name` or, with a trailing '*', starts with the rest.
    [[nodiscard]] bool has(std::string_view pattern) const;
};

/// The SQLite header every database file starts with (16 bytes, with its NUL).
bool looksSqlite(std::string_view firstBytes);

SqliteSchema readSqliteSchema(const std::filesystem::path& path);
SqliteSchema readSqliteSchemaFromBytes(std::string_view bytes);

} // namespace stallscope::importers
