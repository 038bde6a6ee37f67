#include "args_reader.h"

#include <algorithm>
#include <thread>

namespace stallscope::analysis::detail {

bool readArgsInFileOrder(
    const model::Trace& t, std::vector<uint32_t>& slices,
    const std::function<void(size_t k, bool ok, std::vector<model::ArgValue>& args)>& each,
    const std::atomic<bool>* cancel) {
    const model::SliceTable& s = t.slices();
    std::sort(slices.begin(), slices.end(),
              [&](uint32_t x, uint32_t y) { return s.srcOffset[x] < s.srcOffset[y]; });
    constexpr size_t kBatch = 16384;
    const size_t batches = (slices.size() + kBatch - 1) / kBatch;
    const size_t threads =
        std::clamp<size_t>(batches, 1, std::max(1u, std::thread::hardware_concurrency()));
    std::atomic<size_t> next{0};
    auto work = [&](size_t) {
        std::vector<model::SliceId> batch;
        for (size_t b = next++; b < batches; b = next++) {
            if (cancel && cancel->load(std::memory_order_relaxed)) return;
            const size_t from = b * kBatch, to = std::min(slices.size(), from + kBatch);
            batch.clear();
            for (size_t k = from; k < to; ++k) batch.push_back(model::SliceId(slices[k]));
            t.slicesArgs(batch, [&](size_t k, bool ok, std::vector<model::ArgValue>& args) {
                each(from + k, ok, args);
            });
        }
    };
    std::vector<std::thread> pool;
    for (size_t part = 1; part < threads; ++part) pool.emplace_back(work, part);
    work(0);
    for (std::thread& th : pool) th.join();
    return !(cancel && cancel->load(std::memory_order_relaxed));
}

} // namespace stallscope::analysis::detail
