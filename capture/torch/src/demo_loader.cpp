// The demos' input pipeline (see demo_loader.h). Uses ATen (not <torch/torch.h>).
#include "demo_loader.h"

#include "stallscope/torch/torch_recorder.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <chrono>

#include <pthread.h>

namespace stallscope::torchrec::detail {

namespace {

constexpr int64_t kDecodeMargin = 4;  // raw images are this much larger; the crop removes it

/// One sample: decode the raw bytes, random crop, flip every other one, normalise.
at::Tensor transformSample(const at::Tensor& raw, int64_t size, int64_t index) {
    at::Tensor x;
    {
        UserRange r("decode_image");
        x = raw.to(at::kFloat).div_(255.0);
    }
    {
        UserRange r("transforms.RandomCrop");
        const int64_t oy = index % (kDecodeMargin + 1), ox = (index / 3) % (kDecodeMargin + 1);
        x = x.narrow(1, oy, size).narrow(2, ox, size);
        if (index % 2 == 0) x = at::flip(x, {2});
    }
    {
        UserRange r("transforms.Normalize");
        static const at::Tensor mean = at::tensor({0.485, 0.456, 0.406}, at::kFloat).view({3, 1, 1});
        static const at::Tensor stdev = at::tensor({0.229, 0.224, 0.225}, at::kFloat).view({3, 1, 1});
        x = (x - mean) / stdev;
    }
    return x;
}

} // namespace

DemoBatch prepareBatch(const LoaderConfig& c, int64_t index) {
    const int64_t raw = c.imageSize + kDecodeMargin;
    at::Generator gen = at::detail::createCPUGenerator(static_cast<uint64_t>(index) * 7919u + 17u);
    DemoBatch b;
    b.index = index;
    at::Tensor bytes, labels;
    {
        // Reading the encoded samples from storage: emulated latency (a sleep), then the
        // bytes (synthetic, deterministic per batch).
        UserRange r("read_samples(storage)");
        std::this_thread::sleep_for(std::chrono::microseconds(c.readMicros));
        bytes = at::randint(0, 256, {c.batchSize, 3, raw, raw}, gen, at::TensorOptions().dtype(at::kByte));
        labels = at::randint(0, 10, {c.batchSize}, gen, at::TensorOptions().dtype(at::kLong));
    }
    std::vector<at::Tensor> samples;
    samples.reserve(static_cast<size_t>(c.batchSize));
    for (int64_t i = 0; i < c.batchSize; ++i) samples.push_back(transformSample(bytes[i], c.imageSize, index + i));
    {
        UserRange r("default_collate");
        b.images = at::stack(samples);
        b.labels = labels;
    }
    if (c.pinMemory) {
        UserRange r("pin_memory");
        b.images = b.images.pin_memory();
        b.labels = b.labels.pin_memory();
    }
    return b;
}

DemoLoader::DemoLoader(LoaderConfig config) : m_config(config) {
    for (int w = 0; w < m_config.workers; ++w) m_threads.emplace_back([this, w] { work(w); });
}

DemoLoader::~DemoLoader() { stop(); }

void DemoLoader::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_ready.notify_all();
    m_room.notify_all();
    for (std::thread& t : m_threads)
        if (t.joinable()) t.join();
    m_threads.clear();
}

size_t DemoLoader::bound() const {
    return static_cast<size_t>(std::max(1, m_config.workers * m_config.prefetchPerWorker));
}

void DemoLoader::waitUntilFull(int timeoutMs) {
    if (m_threads.empty()) return;
    std::unique_lock lock(m_mutex);
    m_ready.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return m_stopping || m_queue.size() >= bound(); });
}

void DemoLoader::work(int worker) {
    const std::string name = "dataloader-w" + std::to_string(worker);
    pthread_setname_np(pthread_self(), name.c_str());
    const size_t bound = this->bound();
    for (;;) {
        int64_t index = 0;
        {
            std::unique_lock lock(m_mutex);
            // Up to `bound` ready batches (plus one in preparation per worker).
            m_room.wait(lock, [&] { return m_stopping || m_queue.size() < bound; });
            if (m_stopping) return;
            index = m_nextIndex;
            m_nextIndex += m_config.batchSize;
        }
        DemoBatch b = prepareBatch(m_config, index);
        {
            std::lock_guard lock(m_mutex);
            if (m_stopping) return;
            m_queue.push_back(std::move(b));
        }
        m_ready.notify_all();  // the consumer, and waitUntilFull()
    }
}

DemoBatch DemoLoader::next() {
    if (m_threads.empty()) {
        UserRange r("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        DemoBatch b = prepareBatch(m_config, m_nextIndex);
        m_nextIndex += m_config.batchSize;
        return b;
    }
    UserRange r("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
    std::unique_lock lock(m_mutex);
    m_ready.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
    if (m_queue.empty()) return {};
    DemoBatch b = std::move(m_queue.front());
    m_queue.pop_front();
    lock.unlock();
    m_room.notify_one();
    return b;
}

} // namespace stallscope::torchrec::detail
