#include "stallscope/base/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace stallscope::base {

namespace fs = std::filesystem;

struct AtomicFile::Gzip {
    z_stream zs{};
    bool initialized = false;
    ~Gzip() {
        if (initialized) deflateEnd(&zs);
    }
};

AtomicFile::AtomicFile() = default;

AtomicFile::~AtomicFile() {
    if (m_file) std::fclose(m_file);
    if (!m_committed && !m_tmp.empty()) {
        std::error_code ec;
        fs::remove(m_tmp, ec);
    }
}

bool AtomicFile::fail(const std::string& what) {
    if (!m_failed) m_error = what;
    m_failed = true;
    return false;
}

namespace {
std::string notARegularFile(const fs::path& target, mode_t mode) {
    const char* what = S_ISLNK(mode)    ? "a symbolic link"
                       : S_ISDIR(mode)  ? "a folder"
                       : S_ISCHR(mode)  ? "a character device"
                       : S_ISBLK(mode)  ? "a block device"
                       : S_ISFIFO(mode) ? "a FIFO"
                       : S_ISSOCK(mode) ? "a socket"
                                        : "not a regular file";
    return target.string() + " is " + what +
           ", not a regular file: it was left as it is (reports go to regular files or new "
           "paths; -o - writes to standard output)";
}
} // namespace

std::string outputTargetProblem(const fs::path& target) {
    // What is there already: only a regular file is replaced (a device, FIFO, socket or
    // folder never; a link neither, since the rename would replace the link, not its file).
    struct stat existing {};
    if (::lstat(target.c_str(), &existing) != 0) return {};
    if (!S_ISREG(existing.st_mode)) return notARegularFile(target, existing.st_mode);
    // Read-only for us, or marked read-only at all (root may write anything; the mark is
    // still the user's wish).
    if (::access(target.c_str(), W_OK) != 0 || (existing.st_mode & 0222) == 0)
        return target.string() + " is read-only; it was left as it was";
    return {};
}

bool AtomicFile::open(const fs::path& target, Compression compression) {
    m_target = target;
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (std::string problem = outputTargetProblem(target); !problem.empty()) return fail(problem);
    struct stat existing {};
    const bool exists = ::lstat(target.c_str(), &existing) == 0;
    if (!fs::is_directory(dir, ec)) return fail("no such folder: " + dir.string());
    std::random_device rd;
    for (int attempt = 0; attempt < 8 && !m_file; ++attempt) {
        std::string name = ".";
        name += target.filename().string();
        name += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd() % 1000000);
        m_tmp = dir / name;
        // A name nobody else chose (O_EXCL), never through a link (O_NOFOLLOW); a file that is
        // replaced keeps its permissions (and, for root, its owner).
        const int fd =
            ::open(m_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 && exists) {
            ::fchmod(fd, existing.st_mode & 07777);
            if (::geteuid() == 0 && ::fchown(fd, existing.st_uid, existing.st_gid) != 0) {
                // best effort: the permissions are kept either way
            }
        }
        if (fd >= 0) m_file = ::fdopen(fd, "wb");
        else if (errno != EEXIST) {
            const std::string why = std::strerror(errno);
            m_tmp.clear();
            return fail("cannot write in " + dir.string() + ": " + why);
        }
    }
    if (!m_file) return fail("cannot create a temporary file in " + dir.string());
    if (compression == Compression::Gzip) {
        m_gzip = std::make_unique<Gzip>();
        if (deflateInit2(&m_gzip->zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return fail("cannot start gzip compression");
        m_gzip->initialized = true;
    }
    return true;
}

bool AtomicFile::writeRaw(const void* data, size_t n) {
    if (n && std::fwrite(data, 1, n, m_file) != n)
        return fail("cannot write " + m_target.string() + ": " + std::strerror(errno));
    return true;
}

bool AtomicFile::write(std::string_view bytes) {
    if (m_failed || !m_file) return false;
    if (!m_gzip) return writeRaw(bytes.data(), bytes.size());
    z_stream& zs = m_gzip->zs;
    char out[1 << 16];
    size_t offset = 0;
    while (offset < bytes.size()) {  // avail_in is 32-bit: feed at most 1 GiB at a time
        const size_t chunk = std::min<size_t>(bytes.size() - offset, 1u << 30);
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + offset));
        zs.avail_in = static_cast<uInt>(chunk);
        do {
            zs.next_out = reinterpret_cast<Bytef*>(out);
            zs.avail_out = sizeof out;
            if (deflate(&zs, Z_NO_FLUSH) == Z_STREAM_ERROR) return fail("gzip compression failed");
            if (!writeRaw(out, sizeof out - zs.avail_out)) return false;
        } while (zs.avail_out == 0);
        offset += chunk;
    }
    return true;
}

bool AtomicFile::commit() {
    if (m_failed || !m_file) return false;
    if (m_gzip) {
        z_stream& zs = m_gzip->zs;
        char out[1 << 16];
        int ret;
        do {
            zs.next_out = reinterpret_cast<Bytef*>(out);
            zs.avail_out = sizeof out;
            ret = deflate(&zs, Z_FINISH);
            if (ret == Z_STREAM_ERROR) return fail("gzip compression failed");
            if (!writeRaw(out, sizeof out - zs.avail_out)) return false;
        } while (ret != Z_STREAM_END);
    }
    if (std::fflush(m_file) != 0 || ::fsync(::fileno(m_file)) != 0)
        return fail("cannot write " + m_target.string() + ": " + std::strerror(errno));
    const int closed = std::fclose(m_file);
    m_file = nullptr;
    if (closed != 0) return fail("cannot write " + m_target.string() + ": " + std::strerror(errno));
    std::error_code ec;
    fs::rename(m_tmp, m_target, ec);
    if (ec) return fail("cannot replace " + m_target.string() + ": " + ec.message());
    m_committed = true;
    return true;
}

bool writeFileAtomically(const fs::path& target, std::string_view bytes, std::string& error,
                         AtomicFile::Compression compression) {
    AtomicFile f;
    const bool ok = f.open(target, compression) && f.write(bytes) && f.commit();
    if (!ok) error = f.error();
    return ok;
}

Status writeFileAtomically(const fs::path& target, std::string_view bytes,
                           AtomicFile::Compression compression) {
    std::string error;
    if (writeFileAtomically(target, bytes, error, compression)) return {};
    return Error{ErrorKind::Unwritable, std::move(error)};
}

} // namespace stallscope::base
