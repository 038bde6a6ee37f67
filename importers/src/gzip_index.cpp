#include "gzip_index.h"

#include <algorithm>
#include <cstdio>
#include <zlib.h>

namespace stallscope::importers {

size_t GzipIndex::memoryBytes() const {
    std::lock_guard lock(m_mutex);
    size_t b = m_points.capacity() * sizeof(Checkpoint);
    for (const Span& s : m_spans) b += s.bytes.capacity();
    for (const auto& p : m_points)
        if (p.window) b += kWindow;
    return b;
}

bool GzipIndex::read(uint64_t offset, size_t len, std::string& out, std::string& error) const {
    std::lock_guard lock(m_mutex);
    const uint64_t end = offset + len;
    auto holds = [&](const Span& s) {
        return offset >= s.start && end <= s.start + s.bytes.size();
    };
    auto hit = std::find_if(m_spans.begin(), m_spans.end(), holds);
    if (hit == m_spans.end()) {
        // Last checkpoint at or before offset.
        auto it = std::upper_bound(m_points.begin(), m_points.end(), offset,
                                   [](uint64_t o, const Checkpoint& c) { return o < c.out; });
        if (it == m_points.begin()) {
            error = "no gzip index point before offset " + std::to_string(offset);
            return false;
        }
        const size_t idx = static_cast<size_t>(it - m_points.begin()) - 1;
        // A new span, or the least recently used one's place.
        if (m_spans.size() < kCachedSpans)
            hit = m_spans.emplace(m_spans.end());
        else
            hit = std::min_element(m_spans.begin(), m_spans.end(),
                                   [](const Span& a, const Span& b) { return a.used < b.used; });
        if (!inflateSpan(idx, end, *hit, error)) {
            m_spans.erase(hit);
            return false;
        }
        if (!holds(*hit)) {
            error = "offset " + std::to_string(offset) + " is beyond the end of the gzip data";
            return false;
        }
    }
    hit->used = ++m_tick;
    out.assign(hit->bytes, offset - hit->start, len);
    return true;
}

bool GzipIndex::inflateSpan(size_t pointIndex, uint64_t needEnd, Span& into,
                            std::string& error) const {
    std::string& cache = into.bytes;
    uint64_t& cacheStart = into.start;
    FILE* f = std::fopen(m_path.c_str(), "rb");
    if (!f) {
        error = "cannot reopen " + m_path;
        return false;
    }
    struct Closer {
        FILE* f;
        ~Closer() { std::fclose(f); }
    } closer{f};

    cache.clear();
    size_t p = pointIndex;
    const Checkpoint* cp = &m_points[p];
    cacheStart = cp->out;
    // Inflate at least to the next checkpoint (so neighbours hit the cache) and to needEnd.
    const uint64_t target = std::max(needEnd, p + 1 < m_points.size() ? m_points[p + 1].out : needEnd);
    std::vector<unsigned char> in(1 << 16);
    std::vector<unsigned char> outBuf(1 << 16);
    while (true) {
        z_stream zs{};
        const bool member = cp->memberStart;
        if (inflateInit2(&zs, member ? 15 + 16 : -15) != Z_OK) {
            error = "zlib init failed";
            return false;
        }
        struct End {
            z_stream* z;
            ~End() { inflateEnd(z); }
        } ender{&zs};
        const uint64_t seekTo = cp->bits ? cp->in - 1 : cp->in;
        if (std::fseek(f, static_cast<long>(seekTo), SEEK_SET) != 0) {
            error = "seek failed in " + m_path;
            return false;
        }
        if (!member) {
            if (cp->bits) {
                const int c = std::fgetc(f);
                if (c == EOF) {
                    error = "unexpected end of " + m_path;
                    return false;
                }
                inflatePrime(&zs, cp->bits, c >> (8 - cp->bits));
            }
            inflateSetDictionary(&zs, cp->window.get(), cp->windowLen);
        }
        int ret = Z_OK;
        while (cacheStart + cache.size() < target) {
            if (zs.avail_in == 0) {
                zs.avail_in = static_cast<uInt>(std::fread(in.data(), 1, in.size(), f));
                zs.next_in = in.data();
                if (zs.avail_in == 0) break;
            }
            zs.next_out = outBuf.data();
            zs.avail_out = static_cast<uInt>(outBuf.size());
            ret = inflate(&zs, Z_NO_FLUSH);
            if (ret == Z_NEED_DICT || ret == Z_DATA_ERROR || ret == Z_MEM_ERROR) {
                error = std::string("gzip data error while reading back: ") + (zs.msg ? zs.msg : "");
                return false;
            }
            cache.append(reinterpret_cast<char*>(outBuf.data()), outBuf.size() - zs.avail_out);
            if (ret == Z_STREAM_END) break;
        }
        if (cacheStart + cache.size() >= target || ret != Z_STREAM_END) break;
        // Crossed a member boundary: continue from the next member-start checkpoint.
        while (++p < m_points.size() && !m_points[p].memberStart) {}
        if (p >= m_points.size() || m_points[p].out != cacheStart + cache.size()) break;
        cp = &m_points[p];
    }
    return true;
}

} // namespace stallscope::importers
