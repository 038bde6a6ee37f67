#include "block_reader.h"

#include <algorithm>
#include <cstring>

namespace stallscope::importers {

BlockReader::BlockReader(ByteStream& stream, std::string initial, uint64_t offset,
                         size_t blockBytes, size_t maxQueued)
    : m_stream(stream), m_initial(std::move(initial)), m_offset(offset),
      m_blockBytes(blockBytes), m_maxQueued(maxQueued) {
    m_thread = std::thread([this] { run(); });
}

BlockReader::~BlockReader() {
    stop();
    if (m_thread.joinable()) m_thread.join();
}

void BlockReader::stop() {
    std::lock_guard lock(m_mutex);
    m_stop = true;
    m_cv.notify_all();
}

bool BlockReader::next(TextBlock& out) {
    std::unique_lock lock(m_mutex);
    m_cv.wait(lock, [this] { return !m_queue.empty() || m_finished || m_stop; });
    if (m_queue.empty()) return false;
    out = std::move(m_queue.front());
    m_queue.pop_front();
    m_cv.notify_all();
    return true;
}

void BlockReader::recycle(std::shared_ptr<FramedText> buffer) {
    if (!buffer || buffer.use_count() != 1 || buffer->capacity() != m_blockBytes) return;
    buffer->reset();
    std::lock_guard lock(m_mutex);
    if (m_free.size() < m_maxQueued * 2) m_free.push_back(std::move(buffer));
}

size_t BlockReader::cutPoint(std::string_view t, bool eof) const {
    if (eof) return t.size();
    // After the last line break (a JSON string cannot contain one).
    const size_t nl = t.rfind('\n');
    if (nl != std::string_view::npos) return nl + 1;
    // Minified JSON: after the last "}," (an event boundary unless inside a string; the
    // parser notices an open string and stops before it).
    for (size_t i = t.size(); i > 1; --i) {
        if (t[i - 1] != ',') continue;
        size_t j = i - 1;
        while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '\t' || t[j - 1] == '\r')) --j;
        if (j > 0 && t[j - 1] == '}') return i;
    }
    return t.size();
}

void BlockReader::run() {
    std::string rest = std::move(m_initial);  // text read but not yet in a block
    uint64_t offset = m_offset;
    uint64_t index = 0;
    bool eof = false;
    while (true) {
        std::shared_ptr<FramedText> buf;
        {
            std::lock_guard lock(m_mutex);
            if (!m_free.empty() && rest.size() <= m_blockBytes) {
                buf = std::move(m_free.back());
                m_free.pop_back();
            }
        }
        if (!buf) buf = std::make_shared<FramedText>(std::max(m_blockBytes, rest.size()), kHeadroom);
        std::memcpy(buf->data(), rest.data(), rest.size());
        size_t size = rest.size();
        while (!eof && size < buf->capacity()) {
            const size_t got = m_stream.read(buf->data() + size, buf->capacity() - size);
            if (got == 0) eof = true;
            size += got;
        }
        const size_t cut = cutPoint(std::string_view(buf->data(), size), eof);
        rest.assign(buf->data() + cut, size - cut);
        buf->setSize(cut);
        std::memset(buf->data() + cut, 0, FramedText::kTail);  // simdjson's padding
        TextBlock blk;
        blk.index = index++;
        blk.offset = offset;
        blk.text = std::move(buf);
        blk.last = eof && rest.empty();
        offset += cut;
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [this] { return m_queue.size() < m_maxQueued || m_stop; });
        if (m_stop) break;
        const bool last = blk.last;
        m_queue.push_back(std::move(blk));
        m_cv.notify_all();
        if (last) break;
    }
    std::lock_guard lock(m_mutex);
    m_finished = true;
    m_cv.notify_all();
}

} // namespace stallscope::importers
