#pragma once
// An input's first bytes as the format table (file_formats.h) sees them: the bytes as
// stored and, for gzip input, the first bytes after inflating, so what a gzip file holds
// (a Kineto trace, an SQLite database, a memory timeline) is told by its content too. An
// SQLite database's table names are read on demand, read-only.
#include "stallscope/importers/result.h"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace stallscope::importers {

struct SqliteSchema;

class ContentProbe {
public:
    /// How much of the content the recognisers see.
    static constexpr size_t kHeadBytes = 4096;
    /// How much of a gzip-compressed database is inflated (in memory) to read its tables.
    static constexpr size_t kMaxInflatedDatabase = size_t(64) << 20;

    /// The first bytes of a file. Error: it cannot be opened or read.
    static Result<ContentProbe> ofFile(const std::filesystem::path& path);
    /// An input held in memory (all of it is at hand for an SQLite schema).
    static ContentProbe ofMemory(std::shared_ptr<const std::string> bytes);
    /// Only these bytes: nothing behind them (an SQLite schema cannot be read).
    static ContentProbe ofBytes(std::string_view firstBytes);

    ContentProbe(ContentProbe&&) noexcept;
    ContentProbe& operator=(ContentProbe&&) noexcept;
    ~ContentProbe();

    /// The first bytes as stored (at most kHeadBytes).
    [[nodiscard]] std::string_view stored() const { return m_stored; }
    [[nodiscard]] bool gzip() const { return m_gzip; }
    /// gzip input whose first bytes do not inflate (corrupt or cut short): the gzip reader
    /// says what is wrong.
    [[nodiscard]] bool inflateFailed() const { return m_inflateFailed; }
    /// The first bytes of the content: inflated for gzip input (at most kHeadBytes).
    [[nodiscard]] std::string_view content() const { return m_gzip ? m_inflated : m_stored; }
    /// The table names of the SQLite database the content is, read once (see sqlite_schema.h).
    [[nodiscard]] const SqliteSchema& sqlite() const;

private:
    ContentProbe();
    void inflateHead();

    std::filesystem::path m_path;                // a file, or
    std::shared_ptr<const std::string> m_memory; // an input held in memory, or neither
    std::string m_stored;
    std::string m_inflated;
    bool m_gzip = false;
    bool m_inflateFailed = false;
    mutable std::unique_ptr<SqliteSchema> m_sqlite;
};

} // namespace stallscope::importers
