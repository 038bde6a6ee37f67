// FakeSource's training loop: when each operator, launch, kernel, copy and wait happens.
// The CPU runs ahead of the GPU (launches queue up) except where the loop stalls it: the
// data loading, the pageable host-to-device copy and the `.item()` synchronisation.
#include "fake_source_internal.h"

#include <algorithm>
#include <random>

namespace stallscope::capture::detail {

namespace {

using K = pb::Activity;

struct KernelTemplate {
    const char* name;
    int block, regs, smem;
    int grid;
    double cost;  // x kernelUs
};

constexpr KernelTemplate kConv{"sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
                               "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
                               128, 252, 67584, 196, 1.6};
constexpr KernelTemplate kConvDgrad{"sm80_xmma_dgrad_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_"
                                    "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
                                    128, 250, 65536, 196, 1.7};
constexpr KernelTemplate kConvWgrad{"sm80_xmma_wgrad_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nhwc_"
                                    "tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_train",
                                    128, 234, 65536, 98, 1.9};
constexpr KernelTemplate kBn{"void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>"
                             "(cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float const*, "
                             "float, float, float*, float*, float*, float*, float, float)",
                             512, 40, 144, 64, 0.5};
constexpr KernelTemplate kBnBw{"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, "
                               "float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, "
                               "cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
                               512, 40, 400, 64, 0.7};
constexpr KernelTemplate kRelu{"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                               "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
                               "at::detail::Array<char*, 3>)",
                               128, 20, 0, 3136, 0.3};
constexpr KernelTemplate kSgemm{"ampere_sgemm_32x32_sliced1x4_tn", 128, 86, 32768, 8, 0.6};
constexpr KernelTemplate kAdam{"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::"
                               "(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::"
                               "BinaryOpListAlphaFunctor<float, 3, 3, 0>, std::plus<float>, float>(...)",
                               512, 30, 0, 320, 0.4};

struct Layer {
    const char* op;
    const char* backward;
    const KernelTemplate* fwd;
    const KernelTemplate* bwd[2];
};

constexpr Layer kLayers[] = {
    {"aten::conv2d", "ConvolutionBackward0", &kConv, {&kConvDgrad, &kConvWgrad}},
    {"aten::batch_norm", "CudnnBatchNormBackward0", &kBn, {&kBnBw, nullptr}},
    {"aten::relu", "ReluBackward0", &kRelu, {&kRelu, nullptr}},
};
constexpr Layer kHead{"aten::linear", "AddmmBackward0", &kSgemm, {&kSgemm, &kSgemm}};

constexpr int64_t kUs = 1000;

class Loop {
public:
    Loop(Emitter& e, const FakeSourceOptions& o, int64_t start)
        : m_e(e), m_o(o), m_cpu(start), m_gpuFree(start), m_rng(42) {}

    void step(int n) {
        const int64_t stepStart = m_cpu;
        const uint64_t stepExt = m_ext++;
        dataLoading(n);
        hostToDevice();
        const std::vector<int64_t> seqs = forward();
        backward(seqs);
        optimizer();
        item();
        op(K::USER_ANNOTATION, "ProfilerStep#" + std::to_string(n), stepStart, m_cpu + 5 * kUs, m_o.tid, stepExt);
        m_cpu += 40 * kUs;
    }
    [[nodiscard]] int64_t now() const { return m_cpu; }

private:
    pb::Activity& op(K::Kind kind, std::string_view name, int64_t start, int64_t end, int64_t tid, uint64_t ext,
                     int64_t seq = -1) {
        pb::Activity& a = m_e.add(kind, name, start, end);
        a.set_pid(m_o.pid);
        a.set_tid(tid);
        a.set_external_id(ext);
        a.set_sequence_number(seq);
        return a;
    }

    /// A runtime call at `at` lasting `dur`, with a fresh correlation id.
    pb::Activity& runtime(std::string_view name, int64_t at, int64_t dur, int64_t tid, uint64_t ext) {
        pb::Activity& a = op(K::RUNTIME, name, at, at + dur, tid, ext);
        a.set_correlation(++m_corr);
        return a;
    }

    void kernel(const KernelTemplate& k, int64_t launchAt, int64_t tid, uint64_t ext) {
        runtime("cudaLaunchKernel", launchAt, 6 * kUs, tid, ext);
        std::uniform_real_distribution<double> jitter(0.9, 1.1);
        const int64_t start = std::max(launchAt + 5 * kUs, m_gpuFree);
        const auto dur = static_cast<int64_t>(m_o.kernelUs * k.cost * jitter(m_rng) * kUs);
        pb::Activity& a = m_e.add(K::KERNEL, k.name, start, start + dur);
        a.set_correlation(m_corr);
        a.set_device(m_o.device);
        a.set_stream(m_o.stream);
        a.set_context(1);
        a.set_external_id(ext);
        a.set_grid_x(k.grid), a.set_grid_y(1), a.set_grid_z(1);
        a.set_block_x(k.block), a.set_block_y(1), a.set_block_z(1);
        a.set_registers_per_thread(k.regs);
        a.set_static_shared_memory(k.smem);
        m_gpuFree = start + dur + 2 * kUs;
    }

    /// cudaMemcpyAsync from/to pageable memory: the call returns once the copy is done.
    int64_t pageableCopy(int64_t at, uint64_t bytes, K::CopyKind kind, int64_t tid, uint64_t ext) {
        const int64_t start = std::max(at + 5 * kUs, m_gpuFree);
        const auto dur = std::max<int64_t>(2 * kUs, static_cast<int64_t>(double(bytes) / 11.0));  // 11 GB/s
        const int64_t callEnd = start + dur + 4 * kUs;
        runtime("cudaMemcpyAsync", at, callEnd - at, tid, ext);
        pb::Activity& c = m_e.add(K::MEMCPY, "", start, start + dur);
        c.set_correlation(m_corr);
        c.set_device(m_o.device), c.set_stream(m_o.stream), c.set_context(1);
        c.set_external_id(ext);
        c.set_bytes(bytes);
        c.set_copy_kind(kind);
        c.set_src_kind(kind == K::HTOD ? K::PAGEABLE : K::DEVICE);
        c.set_dst_kind(kind == K::HTOD ? K::DEVICE : K::PAGEABLE);
        m_gpuFree = start + dur + 2 * kUs;
        return callEnd;
    }

    /// cudaStreamSynchronize (and its synchronisation record) from `at`; returns its end.
    int64_t streamSync(int64_t at, int64_t tid, uint64_t ext) {
        const int64_t end = std::max(at + 3 * kUs, m_gpuFree);
        runtime("cudaStreamSynchronize", at, end - at, tid, ext);
        pb::Activity& s = m_e.add(K::SYNCHRONIZATION, "Stream Sync", at + 1 * kUs, end);
        s.set_correlation(m_corr);
        s.set_device(m_o.device), s.set_stream(m_o.stream), s.set_context(1);
        s.set_external_id(ext);
        return end;
    }

    void dataLoading(int n) {
        const int64_t len = static_cast<int64_t>(m_o.dataLoadingMs * (1.0 + 0.05 * (n % 3)) * 1e6);
        const int64_t start = m_cpu;
        const uint64_t ext = m_ext++;
        static constexpr const char* kOps[] = {"aten::permute", "aten::contiguous", "aten::div", "aten::stack"};
        for (int i = 0; i < 4; ++i) {
            const int64_t s = start + len * i / 4 + 20 * kUs;
            op(K::CPU_OP, kOps[i], s, s + len / 5, m_o.tid, m_ext++, m_seq++)
                .set_input_shapes("[[" + std::to_string(m_o.batchSize) + ", 3, 224, 224]]");
        }
        op(K::USER_ANNOTATION, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", start, start + len,
           m_o.tid, ext);
        m_cpu = start + len + 15 * kUs;
    }

    void hostToDevice() {
        const int64_t start = m_cpu;
        const uint64_t to = m_ext++, toCopy = m_ext++, copy = m_ext++;
        const uint64_t bytes = uint64_t(std::max(m_o.batchSize, 1)) * 3 * 224 * 224 * 4;
        const int64_t callEnd = pageableCopy(start + 12 * kUs, bytes, K::HTOD, m_o.tid, copy);
        const int64_t syncEnd = streamSync(callEnd + 2 * kUs, m_o.tid, copy);
        const std::string shape = "[[" + std::to_string(m_o.batchSize) + ", 3, 224, 224], []]";
        op(K::CPU_OP, "aten::copy_", start + 8 * kUs, syncEnd + 2 * kUs, m_o.tid, copy, m_seq++).set_input_shapes(shape);
        op(K::CPU_OP, "aten::_to_copy", start + 4 * kUs, syncEnd + 4 * kUs, m_o.tid, toCopy, m_seq++);
        op(K::CPU_OP, "aten::to", start, syncEnd + 6 * kUs, m_o.tid, to, m_seq++).set_input_shapes(shape);
        m_cpu = syncEnd + 10 * kUs;
    }

    std::vector<int64_t> forward() {
        std::vector<int64_t> seqs;
        for (int l = 0; l < m_o.layers; ++l) {
            const Layer& layer = l + 1 == m_o.layers ? kHead : kLayers[l % 3];
            const uint64_t ext = m_ext++;
            seqs.push_back(m_seq++);
            kernel(*layer.fwd, m_cpu + 12 * kUs, m_o.tid, ext);
            op(K::CPU_OP, layer.op, m_cpu, m_cpu + 30 * kUs, m_o.tid, ext, seqs.back());
            m_cpu += 33 * kUs;
        }
        return seqs;
    }

    void backward(const std::vector<int64_t>& seqs) {
        const int64_t tid = m_o.tid + 1;
        int64_t t = m_cpu + 15 * kUs;
        for (int l = m_o.layers - 1; l >= 0; --l) {
            const Layer& layer = l + 1 == m_o.layers ? kHead : kLayers[l % 3];
            const int64_t start = t;
            const uint64_t outer = m_ext++, inner = m_ext++;
            t += 8 * kUs;
            for (const KernelTemplate* k : layer.bwd)
                if (k) kernel(*k, t, tid, inner), t += 20 * kUs;
            op(K::CPU_OP, layer.backward, start + 4 * kUs, t, tid, inner, seqs[size_t(l)]);
            op(K::CPU_OP, std::string("autograd::engine::evaluate_function: ") + layer.backward, start, t + 3 * kUs,
               tid, outer);
            t += 6 * kUs;
        }
        m_cpu = t + 10 * kUs;
    }

    void optimizer() {
        const int64_t start = m_cpu;
        const uint64_t ext = m_ext++;
        int64_t t = start + 10 * kUs;
        for (int i = 0; i < 3; ++i) {
            const uint64_t e = m_ext++;
            kernel(kAdam, t + 10 * kUs, m_o.tid, e);
            op(K::CPU_OP, "aten::_foreach_add_", t, t + 25 * kUs, m_o.tid, e, m_seq++);
            t += 28 * kUs;
        }
        op(K::USER_ANNOTATION, "Optimizer.step#SGD.step", start, t + 5 * kUs, m_o.tid, ext);
        op(K::USER_ANNOTATION, "Optimizer.zero_grad#SGD.zero_grad", t + 8 * kUs, t + 30 * kUs, m_o.tid, m_ext++);
        m_cpu = t + 35 * kUs;
    }

    void item() {
        const int64_t start = m_cpu;
        const uint64_t outer = m_ext++, inner = m_ext++;
        const int64_t callEnd = pageableCopy(start + 10 * kUs, 4, K::DTOH, m_o.tid, inner);
        const int64_t syncEnd = streamSync(callEnd + 2 * kUs, m_o.tid, inner);
        op(K::CPU_OP, "aten::_local_scalar_dense", start + 5 * kUs, syncEnd + 2 * kUs, m_o.tid, inner, m_seq++);
        op(K::CPU_OP, "aten::item", start, syncEnd + 4 * kUs, m_o.tid, outer, m_seq++);
        m_cpu = syncEnd + 8 * kUs;
    }

    Emitter& m_e;
    const FakeSourceOptions& m_o;
    int64_t m_cpu, m_gpuFree;
    uint32_t m_corr = 4000;
    uint64_t m_ext = 100;
    int64_t m_seq = 2000;
    std::mt19937 m_rng;
};

} // namespace

void playTrainingLoop(Emitter& e, const FakeSourceOptions& o, int64_t startNs, FakeSourceResult& r) {
    Loop loop(e, o, startNs);
    r.firstNs = startNs;
    for (int n = 1; n <= o.steps; ++n) {
        loop.step(n);
        if (!e.flush()) break;
    }
    r.lastNs = loop.now();
}

} // namespace stallscope::capture::detail
