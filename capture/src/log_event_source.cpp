#include "log_event_source.h"

#include "socket_io.h"

#include "stallscope/importers/event_args.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace stallscope::capture::detail {

LogEventSource::LogEventSource(int fd, std::string description)
    : m_fd(::fcntl(fd, F_DUPFD_CLOEXEC, 0)), m_description(std::move(description)) {}

LogEventSource::~LogEventSource() {
    if (m_fd >= 0) ::close(m_fd);
}

bool LogEventSource::rawEvent(model::SourceRef ref, std::string& out, std::string& error) const {
    if (m_fd < 0) {
        error = "the event log of " + m_description + " is not open";
        return false;
    }
    out.resize(ref.length);
    size_t got = 0;
    while (got < ref.length) {
        const ssize_t r = ::pread(m_fd, out.data() + got, ref.length - got, static_cast<off_t>(ref.offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            error = "cannot read the event log of " + m_description + ": " + errnoText(errno);
            return false;
        }
        if (r == 0) break;
        got += static_cast<size_t>(r);
    }
    if (got != ref.length) {
        error = "the event log of " + m_description + " ends before the event";
        return false;
    }
    return true;
}

bool LogEventSource::args(model::SourceRef ref, std::vector<model::ArgValue>& out, std::string& error) const {
    std::string text;
    return rawEvent(ref, text, error) && importers::parseChromeEventArgs(text, out, error);
}

} // namespace stallscope::capture::detail
