#pragma once
// Reads a trace file's text again, as the importer saw it, for writers that copy the
// original text instead of rebuilding it from the model (the annotated trace): inflated
// when the file is gzip, read in chunks (traces can be larger than memory), and with each
// byte that is not valid UTF-8 replaced by '?', one for one, exactly as the importer does,
// so the importer's byte offsets (TraceMetadata::eventsArrayEnd) stay true.
#include "stallscope/model/event_source.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace stallscope::importers {

class SourceText final : public model::TextReader {
public:
    SourceText();
    ~SourceText() override;
    SourceText(const SourceText&) = delete;
    SourceText& operator=(const SourceText&) = delete;

    /// Opens `path`; `gzip` as recorded at import (TraceMetadata::compressed).
    /// False with `error` set when the file cannot be opened.
    bool open(const std::filesystem::path& path, bool gzip, std::string& error);
    /// Up to `n` bytes of text (`n` >= 4); 0 at the end of the text or on an error.
    size_t read(char* dst, size_t n) override;
    /// After read() returned 0: true when the whole text was read without an I/O,
    /// truncation or decompression problem.
    [[nodiscard]] bool complete() const override;
    [[nodiscard]] std::string problem() const override;

    /// Reads `text` (a translated file's Kineto form, kept in memory).
    void openMemory(std::shared_ptr<const std::string> text);

    /// An opener for TraceMetadata::reopenText.
    static model::TextOpener opener(std::filesystem::path path, bool gzip);
    /// An opener of a text held in memory: another profiler's file read through its Kineto
    /// form (kineto_text.h), so that the annotated trace copies that form with its args.
    static model::TextOpener memoryOpener(std::shared_ptr<const std::string> text);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace stallscope::importers
