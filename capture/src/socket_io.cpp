#include "socket_io.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace stallscope::capture::detail {

std::string errnoText(int err) {
    char buf[256];
    // GNU strerror_r returns the message (which may not be `buf`).
    return ::strerror_r(err, buf, sizeof buf);
}

bool writeAll(int fd, std::string_view bytes, std::string& error) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            error = "write failed: " + errnoText(errno);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

bool writeFile(int fd, std::string_view bytes, std::string& error) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            error = errnoText(errno);
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

namespace {

bool makeAddress(const std::string& path, sockaddr_un& addr, std::string& error) {
    std::memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
        error = "socket path '" + path + "' is empty or longer than " +
                std::to_string(sizeof addr.sun_path - 1) + " bytes";
        return false;
    }
    std::memcpy(addr.sun_path, path.data(), path.size());
    return true;
}

/// A local stream socket and the address of `path`; -1 with `error` set.
int unixSocket(const std::string& path, sockaddr_un& addr, std::string& error) {
    if (!makeAddress(path, addr, error)) return -1;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) error = "socket() failed: " + errnoText(errno);
    return fd;
}

} // namespace

int connectUnix(const std::string& path, std::string& error) {
    sockaddr_un addr;
    const int fd = unixSocket(path, addr, error);
    if (fd < 0) return -1;
    int rc;
    do {
        rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        error = "cannot connect to " + path + ": " + errnoText(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

int listenUnix(const std::string& path, std::string& error) {
    sockaddr_un addr;
    const int fd = unixSocket(path, addr, error);
    if (fd < 0) return -1;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) < 0 || ::listen(fd, 64) < 0) {
        error = "cannot listen on " + path + ": " + errnoText(errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

} // namespace stallscope::capture::detail
