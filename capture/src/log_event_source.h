#pragma once
// The event source of a live capture: event text read back from the session's event log
// through a descriptor the source keeps open, so args stay readable after the log was
// renamed to the output or removed (the gzip case) and while it is still growing.
#include "stallscope/model/event_source.h"

#include <memory>
#include <string>

namespace stallscope::capture::detail {

class LogEventSource final : public model::EventSource {
public:
    /// Takes a duplicate of `fd`.
    LogEventSource(int fd, std::string description);
    ~LogEventSource() override;
    LogEventSource(const LogEventSource&) = delete;
    LogEventSource& operator=(const LogEventSource&) = delete;

    [[nodiscard]] std::string description() const override { return m_description; }
    bool rawEvent(model::SourceRef ref, std::string& out, std::string& error) const override;
    bool args(model::SourceRef ref, std::vector<model::ArgValue>& out, std::string& error) const override;

private:
    int m_fd = -1;
    std::string m_description;
};

} // namespace stallscope::capture::detail
