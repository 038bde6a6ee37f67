#pragma once
// The capture protocol's plumbing (the messages are in proto/stallscope_capture.proto):
// length-delimited Envelopes over a Unix-domain stream socket, the string table a source
// keeps so each name crosses the socket once, and the sink interface every producer of
// envelopes writes to (a socket to the recorder, or the recorder's session in-process).
#include "stallscope_capture.pb.h"

#include <cstdint>
#include <ctime>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace stallscope::capture {

inline constexpr uint32_t kProtocolVersion = 1;
/// The protocol's clock, which every source stamps its records with: CLOCK_REALTIME in ns.
inline int64_t realtimeNs() {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
/// The recorder's socket path, given to the target in this environment variable.
inline constexpr const char* kSocketEnv = "STALLSCOPE_CAPTURE_SOCKET";
/// A source that connected but captures nothing says why in its Hello's clock_note, after
/// this prefix; the recorder shows the reason ("no GPU rows: ...").
inline constexpr const char* kNotCapturing = "not capturing: ";
/// Largest accepted message; a length above it is a corrupt stream.
inline constexpr uint32_t kMaxMessageBytes = 64u << 20;

/// Whatever receives envelopes. Implementations are thread-safe.
class EnvelopeSink {
public:
    virtual ~EnvelopeSink() = default;
    /// False when the envelope could not be delivered (the peer is gone).
    virtual bool send(const pb::Envelope& e) = 0;
};

/// A source's connection to the recorder.
class SocketWriter final : public EnvelopeSink {
public:
    SocketWriter() = default;
    ~SocketWriter() override;
    SocketWriter(const SocketWriter&) = delete;
    SocketWriter& operator=(const SocketWriter&) = delete;

    bool connect(const std::string& socketPath, std::string& error);
    bool send(const pb::Envelope& e) override;  // one write per message, serialised by a mutex
    /// Writes bytes as they are (fault injection in tests: corrupt or cut messages).
    bool sendRaw(std::string_view bytes);
    /// Reads a Control message if one is waiting (non-blocking); false when none.
    bool pollControl(pb::Control& out);
    void close();
    [[nodiscard]] int fd() const { return m_fd; }

private:
    int m_fd = -1;
    std::mutex m_mutex;      // writes
    std::mutex m_readMutex;  // pollControl
    std::string m_buffer, m_in;
};

/// The recorder's side of one connection: the next envelope from the stream.
///   Ok         a message (`out`)
///   End        the peer closed the stream between two messages
///   Truncated  the stream ended inside a message (a source that died mid-batch)
///   Corrupt    a message that does not parse (skipped: the next call reads the one after
///              it), or a length prefix that is not a varint or exceeds kMaxMessageBytes
///              (then lost() is true: the stream cannot be resynchronised)
///   IoError    read() failed
/// After End, Truncated, IoError or a lost stream every further call returns the same.
class EnvelopeReader {
public:
    enum class Status { Ok, End, Truncated, Corrupt, IoError };
    explicit EnvelopeReader(int fd) : m_fd(fd) {}
    /// Blocks until a whole message, the end of the stream, or an error.
    Status next(pb::Envelope& out, std::string& error);
    [[nodiscard]] uint64_t bytesRead() const { return m_bytes; }
    /// Messages returned as Ok so far.
    [[nodiscard]] uint64_t messages() const { return m_messages; }
    /// True once the framing is lost (nothing more can be read from this stream).
    [[nodiscard]] bool lost() const { return m_final != Status::Ok && m_final != Status::End; }

private:
    enum class Fill { Ok, Eof, Error };
    Fill fill(std::string& error);

    int m_fd;
    std::string m_buf;
    size_t m_pos = 0;
    uint64_t m_bytes = 0, m_messages = 0;
    Status m_final = Status::Ok;   // sticky end state once reached
    std::string m_finalError;
};

/// Frames one message as the protocol sends it (varint length + bytes).
std::string frame(const pb::Envelope& e);

/// A source's string table: ids are dense in first-use order; the strings not yet sent go
/// into the next Batch.new_strings. Id 0 is always the empty string (sent first), so a
/// zero Activity.category_id means "no category".
class StringTable {
public:
    StringTable();
    uint32_t id(std::string_view s);
    /// Moves the strings added since the last call into `batch`.
    void takeNew(pb::Batch& batch);

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> m_ids;
    std::vector<std::string> m_pending;
};

} // namespace stallscope::capture
