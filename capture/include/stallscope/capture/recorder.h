#pragma once
// Recording a program: `stallscope-cli record -- COMMAND` and File ▸ Record… in the GUI.
// Start() listens on a Unix socket, starts the command with the CUPTI injection library in
// CUDA_INJECTION64_PATH and the socket in STALLSCOPE_CAPTURE_SOCKET, and feeds every
// connection into a CaptureSession on a thread of its own. A target without CUDA (or a
// machine without a driver) simply never connects: the recording then has no GPU rows
// and the status says why.
#include "stallscope/base/result.h"
#include "stallscope/capture/session.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace stallscope::capture {

struct RecordOptions {
    /// argv; command[0] is looked up in PATH. Empty: no program is started and the
    /// recording takes whatever sources connect to socketPath() (a FakeSource, a demo)
    /// until stop(), the duration, or the last of them disconnects.
    std::vector<std::string> command;
    std::filesystem::path workingDirectory;                       // empty: the current one
    std::vector<std::pair<std::string, std::string>> environment; // added to the inherited one
    double delaySeconds = 0;    // sources start recording after this
    double durationSeconds = 0; // 0: until the program ends or stop()
    /// .json or .json.gz. While recording, the events go to "<output>.partial.json" (a
    /// truncated trace that importers read if the recorder dies); finish() renames or
    /// compresses it into `output`.
    std::filesystem::path output;
    std::filesystem::path injectionLibrary; // empty: injectionLibraryPath()
};

struct RecordStatus {
    bool running = false;        // the target process is alive
    bool recording = false;      // between start and stop/duration
    int exitCode = -1;           // when it ended: its exit code, or 128 + signal
    std::string exitDescription; // "exited with 0", "killed by SIGSEGV"
    SessionStats session;
    std::string gpuNote; // "no capture source connected: ..." when no GPU rows come
    double elapsedSeconds = 0;
};

/// The injection library that was built with this Stallscope (next to the executable, or
/// STALLSCOPE_CUPTI_INJECTION), or empty when live GPU capture is not built.
std::filesystem::path injectionLibraryPath();
/// "live GPU capture: built (CUPTI 13.0)" or "live GPU capture: not built (...)".
std::string captureFeatureLine();
/// The LibTorch demo program (stallscope-demo: next to the executable, in a build tree's
/// app/ folder, or STALLSCOPE_DEMO), or empty when it was not built (no LibTorch).
std::filesystem::path demoExecutablePath();

class Recording {
public:
    Recording();
    ~Recording(); // stops and reaps the target if still running

    /// Prepares the output, listens, starts the command; an error (StartFailed) when any of
    /// it fails or the recording was started before (nothing is left running).
    base::Status start(const RecordOptions& options);
    /// The Unix socket sources connect to (what the target gets in kSocketEnv).
    [[nodiscard]] std::filesystem::path socketPath() const;
    /// The trace so far (for the live timeline).
    [[nodiscard]] std::shared_ptr<const model::Trace> snapshot() const;
    [[nodiscard]] RecordStatus status() const;
    /// Asks the sources to stop recording and flush (Control STOP), then ends the target:
    /// SIGINT after 0.2 s, SIGTERM after 3 s, SIGKILL after 10 s. Returns at once.
    void stop();
    /// Waits for the target to end (after `timeout` it is stopped), collects the last
    /// batches (connections still open 3 s after the target ended are cut), writes
    /// options.output and returns the trace; an error (Unwritable) when it could not be
    /// written, the recording was not started, or an earlier finish() failed. Once finished,
    /// returns the same trace again.
    base::Result<std::shared_ptr<const model::Trace>>
    finish(std::chrono::milliseconds timeout = std::chrono::minutes(60));

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace stallscope::capture
