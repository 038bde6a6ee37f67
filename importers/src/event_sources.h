#pragma once
// EventSource implementations for Chrome JSON: the event text is read back from the
// original file (plain), through the gzip index (.gz), or from memory, and its args are
// parsed with simdjson when asked.
#include "gzip_index.h"

#include "stallscope/model/event_source.h"

#include <memory>
#include <mutex>
#include <string>

namespace stallscope::importers {

/// Parses the "args" object of one event's JSON text into key -> JSON text pairs.
bool parseEventArgs(std::string_view eventJson, std::vector<model::ArgValue>& out, std::string& error);
/// The same on a text the caller gives up (its bytes may be replaced, its capacity grown).
bool parseEventArgsInPlace(std::string& eventJson, std::vector<model::ArgValue>& out,
                           std::string& error);

/// Reads events back from the plain file with pread on a descriptor opened at the first read
/// and kept (one open per trace, not per event: the operator tables by shape read the args of
/// every operator); pread at an offset is safe from several threads at once.
class ChromeFileEventSource final : public model::EventSource {
public:
    explicit ChromeFileEventSource(std::string path) : m_path(std::move(path)) {}
    ~ChromeFileEventSource() override;
    ChromeFileEventSource(const ChromeFileEventSource&) = delete;
    ChromeFileEventSource& operator=(const ChromeFileEventSource&) = delete;
    std::string description() const override { return m_path; }
    bool rawEvent(model::SourceRef ref, std::string& out, std::string& error) const override;
    bool args(model::SourceRef ref, std::vector<model::ArgValue>& out, std::string& error) const override;
    /// In file order, a stretch of up to 4 MiB read at once for the events inside it.
    void argsOfMany(const std::vector<model::SourceRef>& refs,
                    const ArgsVisitor& each) const override;

private:
    /// The descriptor, opened on first use; -1 with `error` set when it cannot be.
    int descriptor(std::string& error) const;
    std::string m_path;
    mutable std::mutex m_open;
    mutable int m_fd = -1;
};

class ChromeGzipEventSource final : public model::EventSource {
public:
    explicit ChromeGzipEventSource(std::shared_ptr<GzipIndex> index) : m_index(std::move(index)) {}
    std::string description() const override { return m_index->path() + " (gzip, indexed)"; }
    bool rawEvent(model::SourceRef ref, std::string& out, std::string& error) const override;
    bool args(model::SourceRef ref, std::vector<model::ArgValue>& out, std::string& error) const override;
    /// In file order, a stretch of up to 4 MiB inflated at once for the events inside it.
    void argsOfMany(const std::vector<model::SourceRef>& refs,
                    const ArgsVisitor& each) const override;
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
