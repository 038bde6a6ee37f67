#include "stallscope/importers/source_text.h"

#include "byte_stream.h"

#include "stallscope/base/utf8.h"

#include <cstring>

namespace stallscope::importers {

namespace {

/// Bytes at the end of `p[0, len)` that begin a UTF-8 sequence the text does not finish
/// yet: they wait for the next read, so a sequence cut by a chunk is not replaced.
size_t incompleteTail(const char* p, size_t len) {
    for (size_t i = 1; i <= 3 && i <= len; ++i) {
        const auto c = static_cast<unsigned char>(p[len - i]);
        if (c < 0x80) return 0;
        if ((c & 0xC0) == 0x80) continue; // a continuation byte: look further back
        const size_t expected = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        return expected > i ? i : 0;
    }
    return 0;
}

} // namespace

struct SourceText::Impl {
    std::unique_ptr<ByteStream> stream;
    char pending[4] = {};
    size_t pendingLen = 0;
    bool ended = false;
};

SourceText::SourceText() = default;
SourceText::~SourceText() = default;

bool SourceText::open(const std::filesystem::path& path, bool gzip, std::string& error) {
    auto file = std::make_unique<FileByteStream>(path.string());
    if (file->state() == StreamState::IoError) {
        error = file->message();
        return false;
    }
    m_impl = std::make_unique<Impl>();
    if (gzip)
        m_impl->stream = std::make_unique<GzipByteStream>(std::move(file), false);
    else
        m_impl->stream = std::move(file);
    return true;
}

size_t SourceText::read(char* dst, size_t n) {
    if (!m_impl || n < 4) return 0;
    Impl& s = *m_impl;
    size_t len = s.pendingLen;
    std::memcpy(dst, s.pending, len);
    s.pendingLen = 0;
    while (true) {
        const size_t got = s.ended ? 0 : s.stream->read(dst + len, n - len);
        if (got == 0) s.ended = true;
        len += got;
        const size_t keep = s.ended ? 0 : incompleteTail(dst, len);
        if (len > keep || s.ended) {
            std::memcpy(s.pending, dst + len - keep, keep);
            s.pendingLen = keep;
            base::replaceInvalidUtf8InPlace(dst, len - keep, nullptr);
            return len - keep;
        }
    }
}

bool SourceText::complete() const {
    return m_impl && m_impl->ended && m_impl->stream->state() == StreamState::End;
}

std::string SourceText::problem() const {
    if (!m_impl) return "not open";
    if (complete()) return {};
    if (!m_impl->ended) return "not read to the end";
    return m_impl->stream->message();
}

void SourceText::openMemory(std::shared_ptr<const std::string> text) {
    m_impl = std::make_unique<Impl>();
    m_impl->stream = std::make_unique<MemoryByteStream>(std::move(text));
}

model::TextOpener SourceText::memoryOpener(std::shared_ptr<const std::string> text) {
    return [text = std::move(text)](std::string&) -> std::unique_ptr<model::TextReader> {
        auto reader = std::make_unique<SourceText>();
        reader->openMemory(text);
        return reader;
    };
}

model::TextOpener SourceText::opener(std::filesystem::path path, bool gzip) {
    return [path = std::move(path), gzip](std::string& error) -> std::unique_ptr<model::TextReader> {
        auto text = std::make_unique<SourceText>();
        if (!text->open(path, gzip, error)) return nullptr;
        return text;
    };
}

} // namespace stallscope::importers
