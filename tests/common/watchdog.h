#pragma once
// A test that hangs must fail, naming what it was doing: the watchdog ends the process
// with a message when no beat() came for `limit` (CTest's own timeout would only say
// that the test took too long, minutes later).
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace stallscope::test {

class Watchdog {
public:
    explicit Watchdog(std::chrono::milliseconds limit) : m_limit(limit), m_thread([this] { run(); }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_stop = true;
        }
        m_cv.notify_all();
        m_thread.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

    /// Starts the clock again for the case described by `what`.
    void beat(std::string what) {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_what = std::move(what);
        m_last = std::chrono::steady_clock::now();
    }

private:
    void run() {
        std::unique_lock<std::mutex> lock(m_mutex);
        while (!m_stop) {
            m_cv.wait_for(lock, std::chrono::milliseconds(200));
            if (!m_stop && std::chrono::steady_clock::now() - m_last > m_limit) {
                std::fprintf(stderr, "FAIL: no progress for %lld ms (a hang?) in: %s\n",
                             static_cast<long long>(m_limit.count()), m_what.c_str());
                std::fflush(stderr);
                std::_Exit(1);
            }
        }
    }

    std::chrono::milliseconds m_limit;
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::string m_what = "start";
    std::chrono::steady_clock::time_point m_last = std::chrono::steady_clock::now();
    bool m_stop = false;
    std::thread m_thread;  // last: started after the members it reads
};

} // namespace stallscope::test
