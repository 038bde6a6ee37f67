#pragma once
// EventSource implementations for Chrome JSON: the event text is read back from the
// original file (plain), through the gzip index (.gz), or from memory, and its args are
// parsed with simdjson when asked.
#include "gzip_index.h"

#include "stallscope/model/event_source.h"

#include <memory>
#include <string>

namespace stallscope::importers {

/// Parses the "args" object of one event's JSON text into key -> JSON text pairs.
bool parseEventArgs(std::string_view eventJson, std::vector<model::ArgValue>& out, std::string& error);

class ChromeFileEventSource final : public model::EventSource {
public:
    explicit ChromeFileEventSource(std::string path) : m_path(std::move(path)) {}
    std::string description() const override { return m_path; }
    bool rawEvent(model::SourceRef ref, std::string& out, std::string& error) const override;
    bool args(model::SourceRef ref, std::vector<model::ArgValue>& out, std::string& error) const override;

private:
    std::string m_path;
};

class ChromeGzipEventSource final : public model::EventSource {
public:
    explicit ChromeGzipEventSource(std::shared_ptr<GzipIndex> index) : m_index(std::move(index)) {}
    std::string description() const override { return m_index->path() + " (gzip, indexed)"; }
    bool rawEvent(model::SourceRef ref, std::string& out, std::string& error) const override;
    bool args(model::SourceRef ref, std::vector<model::ArgValue>& out, std::string& error) const override;
    size_t memoryBytes() const override { return m_index->memoryBytes(); }

private:
    std::shared_ptr<GzipIndex> m_index;
};

class ChromeMemoryEventSource final : public model::EventSource {
public:
    explicit ChromeMemoryEventSource(std::shared_ptr<const std::string> text) : m_text(std::move(text)) {}
    std::string description() const override { return "memory"; }
    bool rawEvent(model::SourceRef ref, std::string& out, std::string& error) const override;
    bool args(model::SourceRef ref, std::vector<model::ArgValue>& out, std::string& error) const override;
    size_t memoryBytes() const override { return m_text->capacity(); }

private:
    std::shared_ptr<const std::string> m_text;
};

} // namespace stallscope::importers
