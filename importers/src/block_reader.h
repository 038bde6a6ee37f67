#pragma once
// Cuts the event-array text into blocks at line boundaries (JSON strings cannot hold a raw
// line break, so a line boundary is never inside a string), on its own thread, so reading
// and inflating overlap with parsing.
#include "byte_stream.h"
#include "framed_text.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "stallscope/model/diagnostics.h"

namespace stallscope::importers {

struct TextBlock {
    uint64_t index = 0;
    uint64_t offset = 0;                     // of text[0] in the uncompressed input
    std::shared_ptr<FramedText> text;        // parsed in place by one parser at a time
    model::Diagnostics diagnostics;          // found while parsing in place (invalid UTF-8)
    bool last = false;                       // no block follows
};

class BlockReader {
public:
    /// Starts reading: `initial` is text already read, starting at `offset`.
    BlockReader(ByteStream& stream, std::string initial, uint64_t offset, size_t blockBytes,
                size_t maxQueued);
    ~BlockReader();
    BlockReader(const BlockReader&) = delete;
    BlockReader& operator=(const BlockReader&) = delete;

    /// Next block in order; blocks until available. After the last block returns false.
    bool next(TextBlock& out);
    /// Stops the reader thread early (cancel, fatal error).
    void stop();
    /// Gives a block's buffer back for reuse (fresh buffers cost page faults).
    void recycle(std::shared_ptr<FramedText> buffer);

    /// Bytes in front of each block's text, so a carried partial event can be prepended.
    static constexpr size_t kHeadroom = 64 * 1024;

private:
    void run();
    size_t cutPoint(std::string_view text, bool eof) const;

    ByteStream& m_stream;
    std::string m_initial;
    uint64_t m_offset;
    size_t m_blockBytes;
    size_t m_maxQueued;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::deque<TextBlock> m_queue;
    std::vector<std::shared_ptr<FramedText>> m_free;
    bool m_finished = false;
    bool m_stop = false;
    std::thread m_thread;
};

} // namespace stallscope::importers
