#pragma once
// A capture session: receives envelopes from any number of sources (thread-safe), turns
// activities into the model as they arrive (TraceBuilder batches) and writes each event's
// Kineto JSON text to an append-only event log, so that
//   * the GUI can take snapshots a few times per second while recording,
//   * every slice's args are readable through the model's EventSource (the log is the
//     source), and
//   * finish() only has to close the JSON: the output is a Kineto-compatible Chrome trace
//     (the same categories, pid/tid conventions and args as torch.profiler writes) that
//     Perfetto, HTA and Stallscope open. A session that dies leaves a truncated but
//     importable file.
#include "stallscope/capture/protocol.h"

#include "stallscope/model/trace.h"

#include "stallscope/base/result.h"

#include <filesystem>
#include <memory>
#include <string>

namespace stallscope::capture {

struct SessionStats {
    uint64_t sources = 0, batches = 0, records = 0; // sources: those that said Hello
    uint64_t gpuActivities = 0;                     // kernels, copies and memsets among the records
    uint64_t droppedBySources = 0;                  // Batch.dropped_records summed
    uint64_t missingBatches = 0;                    // gaps in Batch.sequence
    uint64_t badMessages = 0;          // truncated or corrupt messages, unknown string ids
    std::vector<std::string> problems; // the first few, in words
};

class CaptureSession final : public EnvelopeSink {
public:
    /// `eventLog`: where the events' JSON text goes. finish() closes it in place when the
    /// output is the same path, renames it to a plain .json output, or compresses it into a
    /// .json.gz output and removes it. Until then it is a truncated trace that importers
    /// read (what a crash leaves behind).
    explicit CaptureSession(std::filesystem::path eventLog);
    ~CaptureSession() override;

    /// Creates the event log; an error (Unwritable) when it cannot be.
    base::Status open();
    /// A new source connected (its own string table and sequence numbers). Source 0 exists
    /// from the start: the in-process one that send() feeds.
    uint32_t addSource();
    /// Envelopes from source `source`; thread-safe.
    bool receive(uint32_t source, const pb::Envelope& e);
    bool send(const pb::Envelope& e) override { return receive(0, e); } // in-process source 0
    /// Counts a transport problem (truncated/corrupt stream) against `source`.
    void reportProblem(uint32_t source, const std::string& what);
    /// A top-level entry of the output's "stallscope" object (`json`: a JSON value), e.g.
    /// the recorded command and how it ended. Replaces an entry of the same key.
    void setInfo(const std::string& key, const std::string& json);

    /// The trace so far (a copy; cheap enough for a few per second on 10^6 events).
    [[nodiscard]] std::shared_ptr<const model::Trace> snapshot() const;
    [[nodiscard]] SessionStats stats() const;

    /// Closes the JSON (metadata: deviceProperties, trace name, recorder stats) and writes
    /// `output` (.json or .json.gz, atomically); returns the final trace, or an error
    /// (Unwritable) saying where the events are, or that the session was not opened. Later
    /// envelopes are refused; a call after a successful one returns the same trace.
    base::Result<std::shared_ptr<const model::Trace>> finish(const std::filesystem::path& output);
    [[nodiscard]] const std::filesystem::path& eventLogPath() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace stallscope::capture
