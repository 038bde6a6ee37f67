#pragma once
// Writes a file atomically: the bytes go to a temporary file next to the target, which is
// flushed, synced and renamed over the target only on commit(). A failed or abandoned
// export therefore never leaves a half-written file in place of a good one. A target that
// exists and is read-only, or is not a regular file (a device, FIFO, socket, folder or link),
// is refused (the rename would otherwise replace it); the temporary file is created O_EXCL |
// O_NOFOLLOW, and a file replaced keeps its permissions (docs/security.md).
#include "stallscope/base/result.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace stallscope::base {

class AtomicFile {
public:
    enum class Compression { None, Gzip };

    AtomicFile();  // out of line: Gzip is incomplete here, so the members' cleanup is too
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile();  // removes the temporary file unless committed

    /// Creates the temporary file; false with error() set when the target cannot be written.
    bool open(const std::filesystem::path& target, Compression compression = Compression::None);
    /// Appends bytes (gzip-compressed when opened so); false after the first failure.
    bool write(std::string_view bytes);
    /// Finishes, syncs and renames over the target; false with error() set on failure.
    bool commit();

    [[nodiscard]] const std::string& error() const { return m_error; }
    [[nodiscard]] const std::filesystem::path& temporaryPath() const { return m_tmp; }

private:
    bool writeRaw(const void* data, size_t n);
    bool fail(const std::string& what);

    struct Gzip;
    std::filesystem::path m_target, m_tmp;
    std::FILE* m_file = nullptr;
    std::unique_ptr<Gzip> m_gzip;
    std::string m_error;
    bool m_failed = false, m_committed = false;
};

/// Why `target` may not be written, or "" when it may: an output is a new path or an existing
/// regular file that is not read-only; a device, FIFO, socket, folder or symbolic link is
/// never replaced (AtomicFile::open checks it; so do the writers that rename a file there).
std::string outputTargetProblem(const std::filesystem::path& target);

/// The whole of `bytes` written atomically to `target`; false with `error` set on failure.
bool writeFileAtomically(const std::filesystem::path& target, std::string_view bytes, std::string& error,
                         AtomicFile::Compression compression = AtomicFile::Compression::None);

/// The same as a Status (ErrorKind::Unwritable on failure).
Status writeFileAtomically(const std::filesystem::path& target, std::string_view bytes,
                           AtomicFile::Compression compression = AtomicFile::Compression::None);

} // namespace stallscope::base
