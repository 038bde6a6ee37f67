#pragma once
// Reads a trace file's text again, as the importer saw it, for writers that copy the
// original text instead of rebuilding it from the model (the annotated trace): inflated
// when the file is gzip, read in chunks (traces can be larger than memory), and with each
// byte that is not valid UTF-8 replaced by '?', one for one, exactly as the importer does,
// so the importer's byte offsets (TraceMetadata::eventsArrayEnd) stay true.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace stallscope::importers {

class SourceText {
public:
    SourceText();
    ~SourceText();
    SourceText(const SourceText&) = delete;
    SourceText& operator=(const SourceText&) = delete;

    /// Opens `path`; `gzip` as recorded at import (TraceMetadata::compressed).
    /// False with `error` set when the file cannot be opened.
    bool open(const std::filesystem::path& path, bool gzip, std::string& error);
    /// Up to `n` bytes of text (`n` >= 4); 0 at the end of the text or on an error.
    size_t read(char* dst, size_t n);
    /// After read() returned 0: true when the whole text was read without an I/O,
    /// truncation or decompression problem.
    [[nodiscard]] bool complete() const;
    [[nodiscard]] std::string problem() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/// Replaces each byte of `data` that is not part of a valid UTF-8 sequence by '?', in
/// place; returns how many were replaced.
size_t replaceInvalidUtf8(char* data, size_t len);

} // namespace stallscope::importers
