#include "block_reader.h"

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

size_t BlockReader::cutPoint(const std::string& pending, bool eof) const {
    if (eof && pending.size() <= m_blockBytes) return pending.size();
    const size_t limit = std::min(pending.size(), m_blockBytes);
    // After the last line break inside the block.
    for (size_t i = limit; i > 0; --i)
        if (pending[i - 1] == '\n') return i;
    // Minified JSON: after the last "}," (an event boundary unless inside a string; the
    // parser notices an open string and asks for more text).
    for (size_t i = limit; i > 1; --i) {
        if (pending[i - 1] != ',') continue;
        size_t j = i - 1;
        while (j > 0 && (pending[j - 1] == ' ' || pending[j - 1] == '\t' || pending[j - 1] == '\r')) --j;
        if (j > 0 && pending[j - 1] == '}') return i;
    }
    return limit;
}

void BlockReader::run() {
    std::string pending = std::move(m_initial);
    uint64_t offset = m_offset;
    uint64_t index = 0;
    bool eof = false;
    const size_t readSize = std::max<size_t>(m_blockBytes, 1 << 16);
    while (true) {
        while (!eof && pending.size() < m_blockBytes) {
            const size_t old = pending.size();
            pending.resize(old + readSize);
            const size_t got = m_stream.read(pending.data() + old, readSize);
            pending.resize(old + got);
            if (got == 0) eof = true;
        }
        const size_t cut = cutPoint(pending, eof);
        TextBlock blk;
        blk.index = index++;
        blk.offset = offset;
        blk.text = std::make_shared<const std::string>(pending.data(), cut);
        blk.last = eof && cut == pending.size();
        pending.erase(0, cut);
        offset += cut;
        {
            std::unique_lock lock(m_mutex);
            m_cv.wait(lock, [this] { return m_queue.size() < m_maxQueued || m_stop; });
            if (m_stop) break;
            const bool last = blk.last;
            m_queue.push_back(std::move(blk));
            m_cv.notify_all();
            if (last) break;
        }
    }
    std::lock_guard lock(m_mutex);
    m_finished = true;
    m_cv.notify_all();
}

} // namespace stallscope::importers
