// Recording's socket: accept connections, read each on a thread of its own into the
// session, and send Control START/STOP to the sources.
#include "recorder_impl.h"

#include "socket_io.h"

#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace stallscope::capture {

bool Recording::Impl::listen(std::string& error) {
    if (::pipe2(wakePipe, O_CLOEXEC) != 0) {
        error = "pipe() failed: " + detail::errnoText(errno);
        return false;
    }
    listenFd = detail::listenUnix(socketPath.string(), error);
    if (listenFd < 0) return false;
    acceptThread = std::thread([this] { acceptLoop(); });
    return true;
}

void Recording::Impl::acceptLoop() {
    for (;;) {
        pollfd fds[2] = {{listenFd, POLLIN, 0}, {wakePipe[0], POLLIN, 0}};
        const int n = ::poll(fds, 2, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || (fds[1].revents & (POLLIN | POLLHUP))) return;
        if (!(fds[0].revents & POLLIN)) continue;
        const int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {  // EINTR, ECONNABORTED, or out of descriptors: keep listening
            if (errno == EMFILE || errno == ENFILE) std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        std::lock_guard lock(mutex);
        if (shuttingDown) {
            ::close(fd);
            continue;
        }
        auto c = std::make_unique<Connection>();
        c->fd = fd;
        c->source = session->addSource();
        Connection* raw = c.get();
        connections.push_back(std::move(c));
        anyConnection = true;
        raw->reader = std::thread([this, raw] { readConnection(raw); });
    }
}

void Recording::Impl::sendControl(Connection& c, int command) {
    pb::Envelope e;
    e.mutable_control()->set_command(static_cast<pb::Control::Command>(command));
    const std::string bytes = frame(e);
    std::lock_guard lock(c.writeMutex);
    std::string error;
    detail::writeAll(c.fd, bytes, error);  // a source that is gone does not need it
}

void Recording::Impl::broadcast(int command) {
    for (auto& c : connections) {
        if (!c->hello || c->done) continue;
        if (command == pb::Control::START) {
            if (c->started) continue;
            c->started = true;
        }
        sendControl(*c, command);
    }
}

void Recording::Impl::readConnection(Connection* c) {
    EnvelopeReader reader(c->fd);
    pb::Envelope e;
    std::string error;
    for (;;) {
        const EnvelopeReader::Status st = reader.next(e, error);
        if (st == EnvelopeReader::Status::Ok) {
            if (e.has_hello()) {
                std::lock_guard lock(mutex);
                c->hello = true;
                helloSources.insert(e.hello().source());
                if (const std::string& note = e.hello().clock_note();
                    note.rfind(kNotCapturing, 0) == 0)
                    notCapturing.push_back(note.substr(std::string_view(kNotCapturing).size()));
                if (recording && !c->started) {
                    c->started = true;
                    sendControl(*c, pb::Control::START);
                } else if (stopRequested) {
                    sendControl(*c, pb::Control::STOP);
                }
            }
            session->receive(c->source, e);
            continue;
        }
        if (st == EnvelopeReader::Status::End) break;
        session->reportProblem(c->source, error);
        if (st != EnvelopeReader::Status::Corrupt || reader.lost()) break;
    }
    std::lock_guard lock(mutex);
    c->done = true;  // broadcast() sends nothing more (it holds the mutex)
    {
        // The source's close() reads until we close our direction.
        std::lock_guard write(c->writeMutex);
        ::shutdown(c->fd, SHUT_WR);
    }
    cv.notify_all();
}

void Recording::Impl::drainConnections(std::chrono::milliseconds grace) {
    std::unique_lock lock(mutex);
    shuttingDown = true;
    cv.wait_for(lock, grace, [this] {
        for (auto& c : connections)
            if (!c->done) return false;
        return true;
    });
    for (auto& c : connections)
        if (!c->done) ::shutdown(c->fd, SHUT_RDWR);  // a source still alive (a grandchild?): stop reading it
    std::list<std::unique_ptr<Connection>> all;
    all.swap(connections);
    lock.unlock();
    for (auto& c : all) {
        if (c->reader.joinable()) c->reader.join();
        ::close(c->fd);
    }
}

void Recording::Impl::closeServer() {
    if (wakePipe[1] >= 0) {
        const char x = 'x';
        [[maybe_unused]] ssize_t n = ::write(wakePipe[1], &x, 1);
    }
    if (acceptThread.joinable()) acceptThread.join();
    for (int* fd : {&listenFd, &wakePipe[0], &wakePipe[1]})
        if (*fd >= 0) ::close(*fd), *fd = -1;
    std::error_code ec;
    if (!socketPath.empty()) std::filesystem::remove(socketPath, ec);
    if (!tempDir.empty()) std::filesystem::remove(tempDir, ec);
}

} // namespace stallscope::capture
