#pragma once
// Random access into a gzip file without keeping its uncompressed text: checkpoints of
// the inflater state (bit position + the 32 KiB window) every kSpan output bytes, as in
// zlib's examples/zran.c. Reading an event back inflates at most kSpan bytes.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace stallscope::importers {

class GzipIndex {
public:
    static constexpr uint64_t kSpan = 4u << 20;
    static constexpr size_t kWindow = 32768;

    struct Checkpoint {
        uint64_t out = 0;        // uncompressed offset
        uint64_t in = 0;         // compressed offset of the first full byte
        int bits = 0;            // bits of the previous byte that belong to the stream
        bool memberStart = false;// a gzip member header starts at `in` (no window needed)
        std::unique_ptr<unsigned char[]> window;  // windowLen bytes, null for member starts
        uint32_t windowLen = 0;
    };

    void add(Checkpoint cp) { m_points.push_back(std::move(cp)); }
    [[nodiscard]] size_t size() const { return m_points.size(); }
    [[nodiscard]] size_t memoryBytes() const;
    void setPath(std::string path) { m_path = std::move(path); }
    [[nodiscard]] const std::string& path() const { return m_path; }

    /// Reads `len` bytes at uncompressed `offset`. Thread-safe; keeps the last kCachedSpans
    /// inflated spans (least recently used out), so reads in increasing offset order, and
    /// reads that alternate between a few parts of the file (a kernel's args near the end of a
    /// Kineto file, its launching operator's near the start), inflate each span once.
    bool read(uint64_t offset, size_t len, std::string& out, std::string& error) const;
    static constexpr size_t kCachedSpans = 8;

private:
    struct Span {
        uint64_t start = 0;
        std::string bytes; // inflated bytes starting at `start`
        uint64_t used = 0; // when it was last read (m_tick)
    };
    bool inflateSpan(size_t pointIndex, uint64_t needEnd, Span& into, std::string& error) const;

    std::vector<Checkpoint> m_points;
    std::string m_path;
    mutable std::mutex m_mutex;
    mutable std::vector<Span> m_spans; // at most kCachedSpans
    mutable uint64_t m_tick = 0;
};

} // namespace stallscope::importers
