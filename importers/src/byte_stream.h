#pragma once
// Sequential readers of trace text: a plain file, a memory buffer, or a gzip stream
// inflated with zlib (streaming, so inputs larger than memory work). The gzip reader
// records a random-access index (zran-style checkpoints) as it goes, so an event's
// text can be read back later without keeping the uncompressed text.
#include "gzip_index.h"

#include "stallscope/base/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stallscope::importers {

enum class StreamState { Ok, End, Truncated, Corrupt, IoError };

class ByteStream {
public:
    virtual ~ByteStream() = default;
    /// Reads up to `n` bytes of text; returns 0 at the end or on error (see state()).
    virtual size_t read(char* dst, size_t n) = 0;
    [[nodiscard]] virtual uint64_t inputConsumed() const = 0;  // bytes of the stored input
    [[nodiscard]] virtual uint64_t inputTotal() const = 0;     // 0 when unknown
    [[nodiscard]] virtual bool compressed() const { return false; }
    [[nodiscard]] StreamState state() const { return m_state; }
    [[nodiscard]] const std::string& message() const { return m_message; }
    /// Offset in the stored input where a Truncated/Corrupt state was detected.
    [[nodiscard]] uint64_t problemOffset() const { return m_problemOffset; }

protected:
    void fail(StreamState s, std::string msg, uint64_t offset) {
        m_state = s;
        m_message = std::move(msg);
        m_problemOffset = offset;
    }
    StreamState m_state = StreamState::Ok;
    std::string m_message;
    uint64_t m_problemOffset = 0;
};

class FileByteStream final : public ByteStream {
public:
    /// Opens `path`; on failure state() is IoError and message() says why.
    explicit FileByteStream(const std::string& path);
    ~FileByteStream() override;
    size_t read(char* dst, size_t n) override;
    [[nodiscard]] uint64_t inputConsumed() const override { return m_consumed; }
    [[nodiscard]] uint64_t inputTotal() const override { return m_size; }

private:
    int m_fd = -1;
    uint64_t m_size = 0;
    uint64_t m_consumed = 0;
};

class MemoryByteStream final : public ByteStream {
public:
    explicit MemoryByteStream(std::shared_ptr<const std::string> data) : m_data(std::move(data)) {}
    size_t read(char* dst, size_t n) override;
    [[nodiscard]] uint64_t inputConsumed() const override { return m_pos; }
    [[nodiscard]] uint64_t inputTotal() const override { return m_data->size(); }

private:
    std::shared_ptr<const std::string> m_data;
    size_t m_pos = 0;
};

/// Inflates a gzip (or multi-member gzip) stream read from another ByteStream.
class GzipByteStream final : public ByteStream {
public:
    /// `buildIndex`: record random-access checkpoints every GzipIndex::kSpan bytes.
    GzipByteStream(std::unique_ptr<ByteStream> input, bool buildIndex);
    ~GzipByteStream() override;
    size_t read(char* dst, size_t n) override;
    [[nodiscard]] uint64_t inputConsumed() const override { return m_input->inputConsumed(); }
    [[nodiscard]] uint64_t inputTotal() const override { return m_input->inputTotal(); }
    [[nodiscard]] bool compressed() const override { return true; }
    /// The checkpoints recorded so far (complete once read() returned 0).
    std::shared_ptr<GzipIndex> takeIndex() { return std::move(m_index); }

private:
    bool refill();
    bool startMember();

    struct Impl;
    std::unique_ptr<Impl> m_impl;
    std::unique_ptr<ByteStream> m_input;
    std::shared_ptr<GzipIndex> m_index;
    std::vector<unsigned char> m_in;
    uint64_t m_inOffset = 0;   // stored-input offset of m_in[0]
    uint64_t m_out = 0;        // uncompressed bytes produced
    uint64_t m_lastCheckpoint = 0;
    bool m_inputDone = false;
    bool m_memberDone = false;
    bool m_anyOutput = false;
};

/// True when `bytes` starts with the gzip magic number.
bool looksGzip(const char* bytes, size_t n);

/// A whole file in memory, inflated when it is gzip-compressed; `what` names the content
/// in the error said when it is over `limit` bytes ("a memory timeline").
base::Result<std::string> readWholeFile(const std::string& path, uint64_t limit,
                                        const std::string& what);

} // namespace stallscope::importers
