#include "occupancy.h"

#include <algorithm>
#include <cstdint>

namespace stallscope::capture::detail {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Resident blocks per SM the architecture allows (CUDA C Programming Guide, table of
/// technical specifications per compute capability).
int64_t maxBlocksPerSm(int major, int minor) {
    if (major <= 2) return 8;
    if (major == 3) return 16;
    if (major == 7 && minor == 5) return 16;
    if (major == 8 && (minor == 6 || minor == 7)) return 16;
    if (major == 8 && minor == 9) return 24;
    return 32;
}

int64_t residentBlocks(const pb::Activity& k, const pb::Device& d, int64_t threadsPerBlock) {
    const int64_t warp = d.warp_size() > 0 ? d.warp_size() : 32;
    const int64_t warpsPerBlock = ceilDiv(threadsPerBlock, warp);
    const int64_t maxWarps = d.max_threads_per_sm() / warp;
    int64_t blocks = std::min(maxBlocksPerSm(d.compute_major(), d.compute_minor()), maxWarps / warpsPerBlock);
    if (k.registers_per_thread() > 0 && d.max_registers_per_sm() > 0) {
        const int64_t regsPerWarp = ceilDiv(int64_t(k.registers_per_thread()) * warp, 256) * 256;
        blocks = std::min(blocks, (d.max_registers_per_sm() / regsPerWarp) / warpsPerBlock);
    }
    const int64_t smem = int64_t(k.static_shared_memory()) + k.dynamic_shared_memory();
    if (d.shared_memory_per_sm() > 0) {
        const int64_t reserved = d.compute_major() >= 8 ? 1024 : 0;
        const int64_t perBlock = ceilDiv(smem, 128) * 128 + reserved;
        if (perBlock > 0) blocks = std::min(blocks, d.shared_memory_per_sm() / perBlock);
    }
    return std::max<int64_t>(blocks, 0);
}

} // namespace

KernelFigures kernelFigures(const pb::Activity& k, const pb::Device* d) {
    KernelFigures f;
    const int64_t threads = int64_t(std::max(k.block_x(), 0)) * std::max(k.block_y(), 0) * std::max(k.block_z(), 0);
    const int64_t grid = int64_t(std::max(k.grid_x(), 0)) * std::max(k.grid_y(), 0) * std::max(k.grid_z(), 0);
    if (!d || d->num_sms() <= 0 || threads <= 0) return f;
    const int64_t warp = d->warp_size() > 0 ? d->warp_size() : 32;
    f.blocksPerSm = double(grid) / double(d->num_sms());
    f.warpsPerSm = f.blocksPerSm * double(ceilDiv(threads, warp));
    if (d->max_threads_per_sm() <= 0) return f;
    const double resident = std::min(f.blocksPerSm, double(residentBlocks(k, *d, threads)));
    const double occupancy = resident * double(threads) / double(d->max_threads_per_sm());
    f.occupancyPct = std::clamp(static_cast<int>(occupancy * 100.0), 0, 100);
    return f;
}

} // namespace stallscope::capture::detail
