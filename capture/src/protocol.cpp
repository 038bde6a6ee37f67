// The capture protocol's framing: a varint length (protobuf's delimited format) and the
// serialised Envelope, over a stream socket that may deliver any number of bytes per read.
#include "stallscope/capture/protocol.h"

#include "socket_io.h"

#include <cerrno>
#include <chrono>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace stallscope::capture {

namespace {

void appendVarint(std::string& out, uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7f) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}

enum class VarintStatus { Complete, NeedMore, Bad };

/// Reads a varint of at most 10 bytes from [p, p + n).
VarintStatus parseVarint(const char* p, size_t n, uint64_t& value, size_t& used) {
    value = 0;
    for (size_t i = 0; i < 10; ++i) {
        if (i >= n) return VarintStatus::NeedMore;
        const auto b = static_cast<unsigned char>(p[i]);
        value |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
        if ((b & 0x80) == 0) {
            used = i + 1;
            return VarintStatus::Complete;
        }
    }
    return VarintStatus::Bad;
}

void appendFrame(std::string& out, const pb::Envelope& e) {
    const size_t size = e.ByteSizeLong();
    appendVarint(out, size);
    const size_t at = out.size();
    out.resize(at + size);
    e.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out.data() + at));
}

} // namespace

std::string frame(const pb::Envelope& e) {
    std::string out;
    appendFrame(out, e);
    return out;
}

// ---------------------------------------------------------------- SocketWriter

SocketWriter::~SocketWriter() { close(); }

bool SocketWriter::connect(const std::string& socketPath, std::string& error) {
    close();
    const int fd = detail::connectUnix(socketPath, error);
    if (fd < 0) return false;
    std::lock_guard lock(m_mutex);
    m_fd = fd;
    return true;
}

bool SocketWriter::send(const pb::Envelope& e) {
    std::lock_guard lock(m_mutex);
    if (m_fd < 0) return false;
    m_buffer.clear();
    appendFrame(m_buffer, e);
    std::string error;
    return detail::writeAll(m_fd, m_buffer, error);
}

bool SocketWriter::sendRaw(std::string_view bytes) {
    std::lock_guard lock(m_mutex);
    if (m_fd < 0) return false;
    std::string error;
    return detail::writeAll(m_fd, bytes, error);
}

bool SocketWriter::pollControl(pb::Control& out) {
    std::lock_guard lock(m_readMutex);
    if (m_fd < 0) return false;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::recv(m_fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
            m_in.append(buf, static_cast<size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;  // EAGAIN, end of stream or an error: use what is buffered
    }
    while (!m_in.empty()) {
        uint64_t len = 0;
        size_t used = 0;
        const VarintStatus st = parseVarint(m_in.data(), m_in.size(), len, used);
        if (st == VarintStatus::NeedMore) return false;
        if (st == VarintStatus::Bad || len > kMaxMessageBytes) {
            m_in.clear();  // the recorder never sends this: drop what we cannot frame
            return false;
        }
        if (m_in.size() < used + len) return false;
        pb::Envelope e;
        const bool ok = e.ParseFromArray(m_in.data() + used, static_cast<int>(len));
        m_in.erase(0, used + len);
        if (ok && e.has_control()) {
            out = e.control();
            return true;
        }
    }
    return false;
}

void SocketWriter::close() {
    std::scoped_lock lock(m_mutex, m_readMutex);
    if (m_fd >= 0) {
        // End our direction first, then read what the recorder sent (controls nobody
        // polled) until it closes: closing a local socket with unread bytes resets the
        // connection, and the recorder would report a read error at the end of a good stream.
        ::shutdown(m_fd, SHUT_WR);
        char buf[4096];
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
        while (std::chrono::steady_clock::now() < deadline) {
            pollfd p{m_fd, POLLIN, 0};
            const int r = ::poll(&p, 1, 50);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) continue;
            const ssize_t n = ::recv(m_fd, buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;  // closed by the recorder
        }
        ::close(m_fd);
        m_fd = -1;
    }
    m_in.clear();
}

// ---------------------------------------------------------------- EnvelopeReader

EnvelopeReader::Fill EnvelopeReader::fill(std::string& error) {
    if (m_pos > 0 && m_pos * 2 >= m_buf.size()) {
        m_buf.erase(0, m_pos);
        m_pos = 0;
    }
    constexpr size_t kChunk = 64 * 1024;
    const size_t at = m_buf.size();
    m_buf.resize(at + kChunk);
    for (;;) {
        const ssize_t n = ::read(m_fd, m_buf.data() + at, kChunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            m_buf.resize(at);
            error = "read failed: " + detail::errnoText(errno);
            return Fill::Error;
        }
        m_buf.resize(at + static_cast<size_t>(n));
        return n == 0 ? Fill::Eof : Fill::Ok;
    }
}

EnvelopeReader::Status EnvelopeReader::next(pb::Envelope& out, std::string& error) {
    if (m_final != Status::Ok) {
        error = m_finalError;
        return m_final;
    }
    auto finalStatus = [&](Status st, std::string msg) {
        m_final = st;
        m_finalError = std::move(msg);
        error = m_finalError;
        return st;
    };
    const std::string at = "byte " + std::to_string(m_bytes) + ": ";
    uint64_t len = 0;
    size_t used = 0;
    for (;;) {
        const VarintStatus st = parseVarint(m_buf.data() + m_pos, m_buf.size() - m_pos, len, used);
        if (st == VarintStatus::Complete) break;
        if (st == VarintStatus::Bad)
            return finalStatus(Status::Corrupt, at + "the length prefix is not a varint (stream lost)");
        const Fill f = fill(error);
        if (f == Fill::Error) return finalStatus(Status::IoError, at + error);
        if (f == Fill::Eof) {
            if (m_pos == m_buf.size()) return finalStatus(Status::End, {});
            return finalStatus(Status::Truncated, at + "the stream ends inside a length prefix");
        }
    }
    if (len > kMaxMessageBytes)
        return finalStatus(Status::Corrupt, at + "message length " + std::to_string(len) +
                                                " exceeds the limit of " + std::to_string(kMaxMessageBytes) +
                                                " bytes (stream lost)");
    while (m_buf.size() - m_pos < used + len) {
        const Fill f = fill(error);
        if (f == Fill::Error) return finalStatus(Status::IoError, at + error);
        if (f == Fill::Eof)
            return finalStatus(Status::Truncated,
                               at + "the stream ends inside a " + std::to_string(len) + "-byte message (" +
                                   std::to_string(m_buf.size() - m_pos - used) + " bytes arrived)");
    }
    const bool ok = out.ParseFromArray(m_buf.data() + m_pos + used, static_cast<int>(len));
    m_pos += used + len;
    m_bytes += used + len;
    if (!ok) {
        error = at + "a " + std::to_string(len) + "-byte message that does not parse (corrupt or cut short)";
        return Status::Corrupt;
    }
    ++m_messages;
    return Status::Ok;
}

// ---------------------------------------------------------------- StringTable

StringTable::StringTable() { id(std::string_view()); }

uint32_t StringTable::id(std::string_view s) {
    auto it = m_ids.find(s);
    if (it != m_ids.end()) return it->second;
    const auto next = static_cast<uint32_t>(m_ids.size());
    m_ids.emplace(std::string(s), next);
    m_pending.emplace_back(s);
    return next;
}

void StringTable::takeNew(pb::Batch& batch) {
    for (auto& s : m_pending) batch.add_new_strings(std::move(s));
    m_pending.clear();
}

} // namespace stallscope::capture
