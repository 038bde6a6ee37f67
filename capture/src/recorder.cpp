// Recording: the lifecycle of `stallscope-cli record -- COMMAND` (start, status, stop,
// finish) around a CaptureSession, a socket server and the target process.
#include "recorder_impl.h"
#include "socket_io.h"

#include "stallscope/base/atomic_file.h"
#include "stallscope/base/json_writer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace stallscope::capture {

namespace {

bool makeTempDir(std::filesystem::path& out, std::string& error) {
    std::string base = "/tmp";
    if (const char* t = std::getenv("TMPDIR"); t && *t && std::strlen(t) < 60) base = t;
    std::string templ = base + "/stallscope-XXXXXX";
    if (!::mkdtemp(templ.data())) {
        error = "cannot create a private directory in " + base + ": " + detail::errnoText(errno);
        return false;
    }
    out = templ;
    return true;
}

std::string commandJson(const std::vector<std::string>& command) {
    base::JsonWriter w(false);
    w.beginArray();
    for (const auto& a : command) w.value(a);
    w.endArray();
    return w.str();
}

} // namespace

Recording::Recording() : m_impl(std::make_unique<Impl>()) {}

Recording::~Recording() {
    Impl& d = *m_impl;
    if (!d.session) return;
    {
        std::unique_lock lock(d.mutex);
        if (d.finished) return;
        if (d.childRunning && !d.stopRequested) {
            d.stopRequested = true;
            d.stopRequestedAt = Impl::Clock::now();
            d.cv.notify_all();
        }
        d.cv.wait_for(lock, std::chrono::seconds(15), [&] { return !d.childRunning; });
    }
    d.drainConnections(std::chrono::milliseconds(0));
    d.shutdownThreads();
}

std::filesystem::path Recording::socketPath() const {
    return m_impl->socketPath;
}

base::Status Recording::start(const RecordOptions& options) {
    auto startFailed = [](std::string message) {
        return base::Error{base::ErrorKind::StartFailed, std::move(message)};
    };
    Impl& d = *m_impl;
    if (d.session) return startFailed("this recording was already started");
    if (options.output.empty()) return startFailed("no output file");
    std::error_code ec;
    if (std::string problem = base::outputTargetProblem(options.output); !problem.empty())
        return startFailed("cannot write " + options.output.string() + ": " + problem);
    d.options = options;
    d.injection =
        options.injectionLibrary.empty() ? injectionLibraryPath() : options.injectionLibrary;
    std::string error;
    if (!makeTempDir(d.tempDir, error)) return startFailed(std::move(error));
    d.socketPath = d.tempDir / "capture.sock";
    std::filesystem::path log = options.output;
    log += ".partial.json";
    d.session = std::make_unique<CaptureSession>(log);
    d.startedAt = Impl::Clock::now();
    bool ok = true;
    if (const base::Status opened = d.session->open(); !opened) {
        error = opened.error().message;
        ok = false;
    }
    ok = ok && d.listen(error);
    if (ok) d.supervisorThread = std::thread([&d] { d.supervise(); });
    if (ok && !options.command.empty()) {
        ok = d.spawn(error);
        if (ok) d.waiterThread = std::thread([&d] { d.waitForChild(); });
    }
    if (!ok) {
        d.drainConnections(std::chrono::milliseconds(0));
        d.shutdownThreads();
        std::filesystem::remove(log, ec);
        d.session.reset();
        return startFailed(std::move(error));
    }
    return {};
}

bool Recording::Impl::runningLocked() const {
    if (finished) return false;
    if (!options.command.empty()) return childRunning;
    if (stopRequested) return false;
    if (!anyConnection) return true;
    for (const auto& c : connections)
        if (!c->done) return true;
    return false;
}

std::string Recording::Impl::gpuNoteLocked(const SessionStats& st) const {
    if (st.gpuActivities > 0) return {};
    const bool injectionThere = !injection.empty() && std::filesystem::exists(injection);
#ifndef STALLSCOPE_HAVE_CUPTI
    if (!injectionThere)
        return "no GPU rows: live GPU capture is not built into this Stallscope (no CUDA toolkit "
               "at build time)";
#endif
    if (!injectionThere)
        return "no GPU rows: the CUPTI injection library was not found (set "
               "STALLSCOPE_CUPTI_INJECTION)";
    if (!helloSources.count("cupti"))
        return "no GPU capture source connected (no CUDA driver or the program did not use CUDA)";
    if (!notCapturing.empty()) return "no GPU rows: " + notCapturing.front();
    return "the GPU capture source connected but recorded no GPU work";
}

std::shared_ptr<const model::Trace> Recording::snapshot() const {
    return m_impl->session ? m_impl->session->snapshot() : nullptr;
}

RecordStatus Recording::status() const {
    const Impl& d = *m_impl;
    RecordStatus st;
    std::lock_guard lock(d.mutex);
    if (!d.session) return st;
    st.running = d.runningLocked();
    st.recording = d.recording;
    st.exitCode = d.exitCode;
    st.exitDescription = d.exitDescription;
    if (d.options.command.empty() && !st.running) st.exitDescription = "no program (sources only)";
    st.session = d.session->stats();
    st.gpuNote = d.gpuNoteLocked(st.session);
    const auto end = d.finished ? d.endedAt : Impl::Clock::now();
    st.elapsedSeconds = std::chrono::duration<double>(end - d.startedAt).count();
    return st;
}

void Recording::stop() {
    Impl& d = *m_impl;
    std::lock_guard lock(d.mutex);
    if (!d.session || d.stopRequested || d.finished) return;
    d.stopRequested = true;
    d.stopRequestedAt = Impl::Clock::now();
    d.cv.notify_all();
}

void Recording::Impl::shutdownThreads() {
    {
        std::lock_guard lock(mutex);
        endedAt = Clock::now();
        finished = true;
        cv.notify_all();
    }
    if (supervisorThread.joinable()) supervisorThread.join();
    closeServer();
    if (waiterThread.joinable()) waiterThread.join();
}

base::Result<std::shared_ptr<const model::Trace>>
Recording::finish(std::chrono::milliseconds timeout) {
    auto unwritable = [](std::string message) {
        return base::Error{base::ErrorKind::Unwritable, std::move(message)};
    };
    Impl& d = *m_impl;
    {
        std::unique_lock lock(d.mutex);
        if (!d.session) return unwritable("the recording was not started");
        if (d.finished) {
            if (!d.finalTrace) return unwritable("the recording was already finished");
            return d.finalTrace;
        }
        if (!d.cv.wait_for(lock, timeout, [&] { return !d.runningLocked(); })) {
            if (!d.stopRequested) d.stopRequested = true, d.stopRequestedAt = Impl::Clock::now();
            d.cv.notify_all();
            d.cv.wait_for(lock, std::chrono::seconds(15), [&] { return !d.childRunning; });
        }
    }
    d.drainConnections(std::chrono::seconds(3));
    d.shutdownThreads();
    const RecordStatus st = status();
    d.session->setInfo("command", commandJson(d.options.command));
    base::JsonWriter target(false);
    target.beginObject()
        .key("exit_code")
        .value(st.exitCode)
        .key("description")
        .value(st.exitDescription);
    target.key("recorded_seconds").value(st.elapsedSeconds, 3).endObject();
    d.session->setInfo("target", target.str());
    if (!st.gpuNote.empty()) {
        base::JsonWriter note(false);
        note.value(st.gpuNote);
        d.session->setInfo("gpu_note", note.str());
    }
    auto finished = d.session->finish(d.options.output);
    std::lock_guard lock(d.mutex);
    d.finalTrace = finished ? finished.value() : nullptr;
    if (!finished) return unwritable(finished.error().message);
    return d.finalTrace;
}

} // namespace stallscope::capture
