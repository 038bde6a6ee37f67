#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace stallscope::model {
class Trace;
}

namespace stallscope::importers {

struct ImportProgress {
    uint64_t bytesRead = 0;   // of the input as stored (compressed bytes for .gz)
    uint64_t bytesTotal = 0;  // 0 when unknown
    uint64_t events = 0;
};

/// The processes of one rank, when a file holds several ranks (importer.cpp: found from the
/// processes' names, labels or pid ranges): only their events are imported, numeric pids
/// lose the rank's offset (rank * 10^k + 3 -> 3, so a GPU keeps its device index) and
/// bracket-tagged text pids become their number ("[TP03] 5" -> 5).
struct PidSelection {
    std::unordered_set<int64_t> numbers; // numeric pids as written
    std::unordered_map<std::string, int64_t>
        texts;            // text pids as written -> the pid (or INT64_MIN: keep the text)
    int64_t subtract = 0; // from every kept numeric pid
};

struct ImportOptions {
    /// Parser threads; 0 = all hardware threads. 1 parses on the calling thread only
    /// (the reader/inflater still runs on its own thread).
    unsigned threads = 0;
    /// Bytes of JSON per parse block.
    size_t blockBytes = 1u << 20;
    /// Called from the importing thread at most every `progressIntervalMs`, and once at the end.
    std::function<void(const ImportProgress&)> progress;
    unsigned progressIntervalMs = 100;
    /// Set to true from any thread to stop; the import returns ErrorKind::Cancelled.
    const std::atomic<bool>* cancel = nullptr;
    /// Keep a way back to each event's text for on-demand args (file reference,
    /// gzip index). Off saves the index memory of .gz inputs.
    bool keepEventSource = true;
    /// Refuse (ErrorKind::OverMemoryBudget, naming the sizes) a trace whose model would
    /// need more than this many bytes, before the operating system kills the process for
    /// it: checked before reading a plain file (from its size) and while reading any input
    /// (from the events so far). 0: no limit. See memory_budget.h for a default.
    uint64_t memoryBudgetBytes = 0;
    /// Import only these processes (one rank of a file holding several); null: all.
    std::shared_ptr<const PidSelection> pids;
    /// Progressive open (Chrome/Kineto JSON): a finished, immutable trace of the events read
    /// so far, while the import goes on. The first after `partialFirstMs`, then whenever the
    /// events have doubled (and `partialFirstMs` more have passed), never while the previous
    /// call is still running, and not once most of the input is read (the whole trace is
    /// near). Called on a thread of its own: the copy is taken on the importing thread (a
    /// copy of the columns), finished and handed over beside it. A call still running when
    /// the import ends is waited for. A small file never gets one.
    std::function<void(std::shared_ptr<const model::Trace>, const ImportProgress&)> partial;
    unsigned partialFirstMs = 700;
};

} // namespace stallscope::importers
