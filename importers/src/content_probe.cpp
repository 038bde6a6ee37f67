#include "stallscope/importers/content_probe.h"

#include "byte_stream.h"
#include "sqlite_schema.h"

namespace fs = std::filesystem;

namespace stallscope::importers {

namespace {

/// Up to `limit` bytes from `s` (fewer at its end or on an error; see s.state()).
std::string readUpTo(ByteStream& s, size_t limit) {
    std::string out;
    size_t chunk = std::min<size_t>(limit, 64 * 1024);
    while (out.size() < limit) {
        const size_t old = out.size();
        out.resize(std::min(limit, old + chunk));
        const size_t got = s.read(out.data() + old, out.size() - old);
        out.resize(old + got);
        if (got == 0) break;
        chunk = std::min<size_t>(chunk * 2, 8 << 20);
    }
    return out;
}

} // namespace

ContentProbe::ContentProbe() = default;
ContentProbe::ContentProbe(ContentProbe&&) noexcept = default;
ContentProbe& ContentProbe::operator=(ContentProbe&&) noexcept = default;
ContentProbe::~ContentProbe() = default;

Result<ContentProbe> ContentProbe::ofFile(const fs::path& path) {
    ContentProbe p;
    p.m_path = path;
    FileByteStream file(path.string());
    p.m_stored = readUpTo(file, kHeadBytes);
    if (file.state() == StreamState::IoError)
        return Error{ErrorKind::Unreadable, file.message(), UINT64_MAX};
    p.inflateHead();
    return p;
}

ContentProbe ContentProbe::ofMemory(std::shared_ptr<const std::string> bytes) {
    ContentProbe p;
    p.m_memory = std::move(bytes);
    p.m_stored = p.m_memory->substr(0, kHeadBytes);
    p.inflateHead();
    return p;
}

ContentProbe ContentProbe::ofBytes(std::string_view firstBytes) {
    ContentProbe p;
    p.m_stored = std::string(firstBytes.substr(0, kHeadBytes));
    p.inflateHead();
    return p;
}

void ContentProbe::inflateHead() {
    m_gzip = looksGzip(m_stored.data(), m_stored.size());
    if (!m_gzip) return;
    std::unique_ptr<ByteStream> in;
    if (m_memory)
        in = std::make_unique<MemoryByteStream>(m_memory);
    else if (!m_path.empty())
        in = std::make_unique<FileByteStream>(m_path.string());
    else
        in = std::make_unique<MemoryByteStream>(std::make_shared<const std::string>(m_stored));
    GzipByteStream gz(std::move(in), false);
    m_inflated = readUpTo(gz, kHeadBytes);
    m_inflateFailed =
        m_inflated.empty() && gz.state() != StreamState::End && gz.state() != StreamState::Ok;
}

const SqliteSchema& ContentProbe::sqlite() const {
    if (m_sqlite) return *m_sqlite;
    m_sqlite = std::make_unique<SqliteSchema>();
    if (!looksSqlite(content())) {
        m_sqlite->problem = "it is not an SQLite database";
    } else if (m_gzip) {
        // The database is inflated into memory, up to a bound: its schema lies in its
        // first pages, which is all that is read from it.
        std::unique_ptr<ByteStream> in;
        if (m_memory)
            in = std::make_unique<MemoryByteStream>(m_memory);
        else if (!m_path.empty())
            in = std::make_unique<FileByteStream>(m_path.string());
        if (in) {
            GzipByteStream gz(std::move(in), false);
            const std::string db = readUpTo(gz, kMaxInflatedDatabase);
            *m_sqlite = readSqliteSchemaFromBytes(db);
            if (!m_sqlite->read && db.size() == kMaxInflatedDatabase)
                m_sqlite->problem += " (only its first 64 MiB were inflated)";
        } else {
            m_sqlite->problem = "only its first bytes are at hand";
        }
    } else if (m_memory) {
        *m_sqlite = readSqliteSchemaFromBytes(*m_memory);
    } else if (!m_path.empty()) {
        *m_sqlite = readSqliteSchema(m_path);
    } else {
        m_sqlite->problem = "only its first bytes are at hand";
    }
    return *m_sqlite;
}

} // namespace stallscope::importers
