#pragma once
// The demos' input pipeline: a synthetic image dataset whose batches are "read" (storage
// latency, emulated with a sleep), decoded, augmented and collated with real ATen ops, and
// a loader that prepares them either inside the training thread (like DataLoader with
// num_workers=0) or on worker threads with a bounded prefetch queue (num_workers > 0).
// Private to stallscope_torch; includes ATen.
#include <ATen/core/Tensor.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace stallscope::torchrec::detail {

struct DemoBatch {
    at::Tensor images;   // [batch, 3, imageSize, imageSize] float, normalised
    at::Tensor labels;   // [batch] int64 in [0, 10)
    int64_t index = 0;
};

struct LoaderConfig {
    int64_t batchSize = 32;
    int64_t imageSize = 32;
    int64_t readMicros = 6000;  // emulated storage latency per batch (a sleep)
    int workers = 0;            // 0: prepared in the calling thread
    int prefetchPerWorker = 2;  // queue bound = workers * prefetchPerWorker
    bool pinMemory = false;     // page-locked batches (needs CUDA)
};

/// Prepares batch `index` (deterministic contents): read, decode, augment, collate, each
/// in a user range named as the analysis' input-preparation rules expect.
DemoBatch prepareBatch(const LoaderConfig& config, int64_t index);

class DemoLoader {
public:
    explicit DemoLoader(LoaderConfig config);
    ~DemoLoader();
    DemoLoader(const DemoLoader&) = delete;
    DemoLoader& operator=(const DemoLoader&) = delete;

    /// The next batch, inside a user range named like torch.profiler's DataLoader range
    /// ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" without workers,
    /// "..._MultiProcessingDataLoaderIter.__next__" with).
    DemoBatch next();
    /// Waits until the workers have filled the prefetch queue (or `timeoutMs`): what the
    /// workers of a DataLoader do while the model warms up. No-op without workers.
    void waitUntilFull(int timeoutMs);
    /// Ends the workers (also at destruction).
    void stop();
    [[nodiscard]] const LoaderConfig& config() const { return m_config; }

private:
    void work(int worker);
    [[nodiscard]] size_t bound() const;

    LoaderConfig m_config;
    int64_t m_nextIndex = 0;       // inline mode / next index handed to a worker
    std::mutex m_mutex;
    std::condition_variable m_ready, m_room;
    std::deque<DemoBatch> m_queue;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

} // namespace stallscope::torchrec::detail
