#pragma once
// Unix-domain socket plumbing shared by the protocol, the recorder and the fake source:
// whole writes (partial writes, EINTR, no SIGPIPE) and connect/listen by path.
#include <string>
#include <string_view>

namespace stallscope::capture::detail {

/// Writes all of `bytes` (MSG_NOSIGNAL: a closed peer is an error, not a signal).
bool writeAll(int fd, std::string_view bytes, std::string& error);
/// Writes all of `bytes` to a file descriptor (write(2), EINTR and partial writes handled).
bool writeFile(int fd, std::string_view bytes, std::string& error);
/// A connected SOCK_STREAM socket (close-on-exec), or -1 with `error` set.
int connectUnix(const std::string& path, std::string& error);
/// A listening socket bound to `path` (close-on-exec), or -1 with `error` set.
int listenUnix(const std::string& path, std::string& error);
/// strerror(errno) as a string.
std::string errnoText(int err);

} // namespace stallscope::capture::detail
