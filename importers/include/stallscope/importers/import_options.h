#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace stallscope::importers {

struct ImportProgress {
    uint64_t bytesRead = 0;   // of the input as stored (compressed bytes for .gz)
    uint64_t bytesTotal = 0;  // 0 when unknown
    uint64_t events = 0;
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
};

} // namespace stallscope::importers
