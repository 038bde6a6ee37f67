#include "byte_stream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

namespace stallscope::importers {

bool looksGzip(const char* bytes, size_t n) {
    return n >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
           static_cast<unsigned char>(bytes[1]) == 0x8b;
}

FileByteStream::FileByteStream(const std::string& path) {
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) {
        fail(StreamState::IoError, "cannot open " + path + ": " + std::strerror(errno), 0);
        return;
    }
    struct stat st {};
    if (::fstat(m_fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        fail(StreamState::IoError, path + " is not a regular file", 0);
        return;
    }
    m_size = static_cast<uint64_t>(st.st_size);
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(m_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
}

FileByteStream::~FileByteStream() {
    if (m_fd >= 0) ::close(m_fd);
}

size_t FileByteStream::read(char* dst, size_t n) {
    if (m_state != StreamState::Ok || m_fd < 0) return 0;
    size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(m_fd, dst + got, n - got);
        if (r < 0) {
            if (errno == EINTR) continue;
            fail(StreamState::IoError, std::string("read error: ") + std::strerror(errno), m_consumed);
            break;
        }
        if (r == 0) {
            if (got == 0) m_state = StreamState::End;
            break;
        }
        got += static_cast<size_t>(r);
        m_consumed += static_cast<uint64_t>(r);
    }
    return got;
}

size_t MemoryByteStream::read(char* dst, size_t n) {
    if (m_state != StreamState::Ok) return 0;
    const size_t k = std::min(n, m_data->size() - m_pos);
    if (k == 0) {
        m_state = StreamState::End;
        return 0;
    }
    std::memcpy(dst, m_data->data() + m_pos, k);
    m_pos += k;
    return k;
}

struct GzipByteStream::Impl {
    z_stream zs{};
    bool initialized = false;
};

GzipByteStream::GzipByteStream(std::unique_ptr<ByteStream> input, bool buildIndex)
    : m_impl(std::make_unique<Impl>()), m_input(std::move(input)), m_in(1 << 18) {
    if (buildIndex) m_index = std::make_shared<GzipIndex>();
    if (inflateInit2(&m_impl->zs, 15 + 16) != Z_OK) {
        fail(StreamState::Corrupt, "zlib initialisation failed", 0);
        return;
    }
    m_impl->initialized = true;
    if (m_index) {
        GzipIndex::Checkpoint cp;
        cp.memberStart = true;
        m_index->add(std::move(cp));
    }
}

GzipByteStream::~GzipByteStream() {
    if (m_impl->initialized) inflateEnd(&m_impl->zs);
}

bool GzipByteStream::refill() {
    z_stream& zs = m_impl->zs;
    if (m_inputDone) return false;
    // Keep unread input at the front.
    const size_t keep = zs.avail_in;
    if (keep && zs.next_in != m_in.data()) std::memmove(m_in.data(), zs.next_in, keep);
    m_inOffset += static_cast<uint64_t>((zs.next_in ? zs.next_in - m_in.data() : 0));
    const size_t got = m_input->read(reinterpret_cast<char*>(m_in.data()) + keep, m_in.size() - keep);
    if (got == 0) {
        m_inputDone = true;
        if (m_input->state() == StreamState::IoError)
            fail(StreamState::IoError, m_input->message(), m_input->inputConsumed());
    }
    zs.next_in = m_in.data();
    zs.avail_in = static_cast<uInt>(keep + got);
    return got > 0;
}

bool GzipByteStream::startMember() {
    z_stream& zs = m_impl->zs;
    while (zs.avail_in < 2 && refill()) {}
    if (zs.avail_in == 0) return false;  // clean end
    if (!looksGzip(reinterpret_cast<const char*>(zs.next_in), zs.avail_in)) {
        return false;  // trailing bytes that are not another member: ignored
    }
    inflateReset(&zs);
    m_memberDone = false;
    if (m_index) {
        GzipIndex::Checkpoint cp;
        cp.memberStart = true;
        cp.out = m_out;
        cp.in = m_inOffset + static_cast<uint64_t>(zs.next_in - m_in.data());
        m_index->add(std::move(cp));
        m_lastCheckpoint = m_out;
    }
    return true;
}

size_t GzipByteStream::read(char* dst, size_t n) {
    if (m_state != StreamState::Ok || !m_impl->initialized) return 0;
    z_stream& zs = m_impl->zs;
    size_t produced = 0;
    while (produced < n) {
        if (m_memberDone && !startMember()) {
            if (produced == 0) m_state = m_state == StreamState::Ok ? StreamState::End : m_state;
            break;
        }
        if (zs.avail_in == 0 && !refill()) {
            if (m_state == StreamState::Ok) {
                const uint64_t at = m_inOffset + static_cast<uint64_t>(zs.next_in ? zs.next_in - m_in.data() : 0);
                fail(StreamState::Truncated,
                     m_anyOutput ? "the gzip stream ends early (truncated file)"
                                 : "the file ends inside the gzip header",
                     at);
            }
            break;
        }
        zs.next_out = reinterpret_cast<Bytef*>(dst + produced);
        zs.avail_out = static_cast<uInt>(std::min<size_t>(n - produced, 1u << 30));
        const uInt before = zs.avail_out;
        const int ret = inflate(&zs, m_index ? Z_BLOCK : Z_NO_FLUSH);
        const size_t got = before - zs.avail_out;
        produced += got;
        m_out += got;
        if (got) m_anyOutput = true;
        if (ret == Z_STREAM_END) {
            m_memberDone = true;
            continue;
        }
        if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_MEM_ERROR || ret == Z_STREAM_ERROR) {
            const uint64_t at = m_inOffset + static_cast<uint64_t>(zs.next_in - m_in.data());
            fail(StreamState::Corrupt,
                 std::string("gzip data error: ") + (zs.msg ? zs.msg : "invalid compressed data"), at);
            break;
        }
        if (m_index && (zs.data_type & 128) && !(zs.data_type & 64) &&
            m_out - m_lastCheckpoint >= GzipIndex::kSpan) {
            GzipIndex::Checkpoint cp;
            cp.out = m_out;
            cp.in = m_inOffset + static_cast<uint64_t>(zs.next_in - m_in.data());
            cp.bits = zs.data_type & 7;
            cp.window = std::make_unique<unsigned char[]>(GzipIndex::kWindow);
            uInt len = GzipIndex::kWindow;
            if (inflateGetDictionary(&zs, cp.window.get(), &len) == Z_OK) {
                cp.windowLen = len;
                m_index->add(std::move(cp));
                m_lastCheckpoint = m_out;
            }
        }
    }
    return produced;
}

base::Result<std::string> readWholeFile(const std::string& path, uint64_t limit,
                                        const std::string& what) {
    using base::Error;
    using base::ErrorKind;
    auto file = std::make_unique<FileByteStream>(path);
    if (file->state() == StreamState::IoError)
        return Error{ErrorKind::Unreadable, file->message(), UINT64_MAX};
    char magic[2] = {0, 0};
    {
        FileByteStream peek(path);
        peek.read(magic, 2);
    }
    std::unique_ptr<ByteStream> in = std::move(file);
    if (looksGzip(magic, 2)) in = std::make_unique<GzipByteStream>(std::move(in), false);
    std::string text;
    std::vector<char> buf(size_t(1) << 16);
    for (size_t n; (n = in->read(buf.data(), buf.size())) > 0;) {
        text.append(buf.data(), n);
        if (text.size() > limit)
            return Error{ErrorKind::TooLarge,
                         what + " of more than " + std::to_string(limit >> 20) + " MiB"};
    }
    if (in->state() == StreamState::Corrupt || in->state() == StreamState::IoError)
        return Error{ErrorKind::CorruptGzip, in->message(), in->problemOffset()};
    return text;
}

} // namespace stallscope::importers
