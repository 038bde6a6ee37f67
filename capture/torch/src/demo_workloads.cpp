// The demo workloads: one small CNN training loop (torch::nn::Conv2d/Linear, SGD) whose
// configuration reproduces one bottleneck of ../shared/spec/product.md or its fix, recorded with a
// TorchRecorder. The only file of stallscope_torch that includes <torch/torch.h>.
#include "demo_loader.h"
#include "recorder_core.h"

#include "stallscope/torch/demos.h"
#include "stallscope/torch/sample_ops.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace stallscope::torchrec {

namespace {

using detail::DemoBatch;
using detail::DemoLoader;
using detail::LoaderConfig;

struct Workload {
    int defaultSteps = 30;
    LoaderConfig loader;
    int logEvery = 0; // 0: no loss logging; 1: loss.item() + a log write every step; N: every N
    bool pinnedNonBlocking = false;
    bool autocast = false;
    int64_t width = 64; // hidden units of the first Linear
};

Workload workloadFor(const std::string& name, bool gpu) {
    Workload w;
    w.loader.readMicros = 1000;
    w.loader.workers = 2; // everything but `dataloader` keeps the input pipeline off the step
    if (name == "dataloader" || name == "dataloader-fixed") {
        w.loader.readMicros = 6000;
        w.loader.workers = name == "dataloader" ? 0 : 4;
    } else if (name == "item-sync" || name == "item-sync-fixed") {
        w.logEvery = name == "item-sync" ? 1 : 10;
    } else if (name == "small-batch" || name == "large-batch") {
        w.loader.batchSize = name == "small-batch" ? 4 : 128;
        w.loader.imageSize = 16;
        w.loader.readMicros = 200;
        w.defaultSteps = 20;
    } else if (name == "pageable-copies" || name == "pinned-copies") {
        w.loader.batchSize = 64;
        w.loader.imageSize = gpu ? 64 : 32; // larger copies where there is something to copy to
        w.pinnedNonBlocking = gpu && name == "pinned-copies";
        w.loader.pinMemory = w.pinnedNonBlocking;
    } else if (name == "fp32" || name == "autocast") {
        w.loader.batchSize = 64;
        w.width = 1024;
        w.autocast = gpu && name == "autocast";
    }
    return w;
}

struct NetImpl : torch::nn::Module {
    NetImpl(int64_t imageSize, int64_t width)
        : conv1(register_module("conv1",
                                torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3).padding(1)))),
          conv2(register_module("conv2",
                                torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).padding(1)))),
          fc1(register_module("fc1",
                              torch::nn::Linear(16 * (imageSize / 4) * (imageSize / 4), width))),
          fc2(register_module("fc2", torch::nn::Linear(width, 10))) {}

    torch::Tensor forward(torch::Tensor x) {
        x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
        x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
        x = torch::relu(fc1->forward(x.flatten(1)));
        return fc2->forward(x);
    }

    torch::nn::Conv2d conv1, conv2;
    torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

/// The training loop's log: a line per write to a file, then the round trip of a remote
/// experiment tracker (emulated: 2 ms), as a logger that uploads each scalar would.
class LossLog {
public:
    LossLog()
        : m_path(std::filesystem::temp_directory_path() /
                 ("stallscope-demo-" + std::to_string(getpid()) + "-" + std::to_string(s_count++) +
                  ".log")),
          m_fd(::open(m_path.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600)) {}
    ~LossLog() {
        if (m_fd >= 0) ::close(m_fd);
        std::error_code ec;
        std::filesystem::remove(m_path, ec);
    }
    LossLog(const LossLog&) = delete;
    LossLog& operator=(const LossLog&) = delete;

    /// print(f"step {step} loss {loss.item()}"): the .item() is the host sync on a GPU.
    void write(int64_t step, const torch::Tensor& loss) {
        UserRange r("logger.write(loss)");
        const auto start = std::chrono::steady_clock::now();
        const double value = loss.item<double>();
        char line[96];
        const int n = std::snprintf(line, sizeof line, "step %lld loss %.5f\n",
                                    static_cast<long long>(step), value);
        if (m_fd >= 0 && n > 0) {
            const ssize_t written = ::write(m_fd, line, static_cast<size_t>(n));
            (void)written; // a lost log line does not matter to the demo
        }
        std::this_thread::sleep_until(start + std::chrono::milliseconds(2));
    }

private:
    static inline std::atomic<int> s_count{0};
    std::filesystem::path m_path;
    int m_fd = -1;
};

class Trainer {
public:
    Trainer(const Workload& w, torch::Device device)
        : m_w(w), m_device(device), m_net(w.loader.imageSize, w.width),
          m_opt(m_net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9)),
          m_loader(w.loader) {
        m_net->to(m_device);
    }

    void step(int64_t i) {
        DemoBatch b = m_loader.next();
        torch::Tensor x = b.images, y = b.labels;
        if (m_device.is_cuda()) {
            // Pageable: a blocking copy through a staging buffer. Pinned (prepared by the
            // loader workers) + non_blocking: an asynchronous copy that overlaps compute.
            x = x.to(m_device, /*non_blocking=*/m_w.pinnedNonBlocking);
            y = y.to(m_device, /*non_blocking=*/m_w.pinnedNonBlocking);
        }
        torch::Tensor loss;
        {
            if (m_w.autocast) at::autocast::set_enabled(true); // FP16 matmuls/convolutions
            loss = torch::nn::functional::cross_entropy(m_net->forward(x), y);
            if (m_w.autocast) {
                at::autocast::set_enabled(false);
                at::autocast::clear_cache();
            }
        }
        {
            UserRange r("Optimizer.zero_grad#SGD.zero_grad");
            m_opt.zero_grad();
        }
        loss.backward();
        {
            UserRange r("Optimizer.step#SGD.step");
            m_opt.step();
        }
        m_samples += x.size(0);
        logLoss(i, loss);
    }

    void stopLoader() { m_loader.stop(); }
    void fillPrefetchQueue() { m_loader.waitUntilFull(5000); }
    [[nodiscard]] int64_t samples() const { return m_samples; }
    void resetSamples() { m_samples = 0; }

private:
    void logLoss(int64_t i, const torch::Tensor& loss) {
        if (m_w.logEvery <= 0) return;
        if (m_w.logEvery == 1) return m_log.write(i, loss);
        // The fix: accumulate on the device, read (and sync) once every N steps.
        if (!m_running.defined()) m_running = torch::zeros({}, loss.options());
        m_running.add_(loss.detach());
        if ((i + 1) % m_w.logEvery == 0) {
            m_log.write(i, m_running / m_w.logEvery);
            m_running.zero_();
        }
    }

    Workload m_w;
    torch::Device m_device;
    Net m_net;
    torch::optim::SGD m_opt;
    DemoLoader m_loader;
    LossLog m_log;
    torch::Tensor m_running;
    int64_t m_samples = 0;
};

/// LibTorch's intra-op thread count for the demo's duration.
class ThreadCount {
public:
    explicit ThreadCount(int n) : m_saved(at::get_num_threads()) {
        if (n > 0) at::set_num_threads(n);
    }
    ~ThreadCount() { at::set_num_threads(m_saved); }

private:
    int m_saved;
};

std::string cpuNote(const DemoInfo& info) {
    const std::string where = " (" + TorchRecorder::libtorchDescription() + ")";
    if (info.needsGpu)
        return "needs a GPU: GPU rows are absent on this machine" + where + ", so " + info.topic +
               " cannot be shown; this recording is the same CPU training loop as `" +
               info.pairedWith + "`.";
    return "CPU-only recording: the trace has CPU operators only; GPU rows are absent on this "
           "machine" +
           where + ".";
}

std::string gpuNote() {
    return "GPU present: the LibTorch operators are recorded here; the GPU rows (kernels, copies) "
           "come from "
           "CUPTI when the demo runs under the recorder, as `stallscope-cli record --demo NAME` "
           "runs it.";
}

void runSteps(Trainer& t, TorchRecorder& rec, int steps, std::ostream* log) {
    for (int i = 0; i < steps; ++i) {
        rec.step(i);
        t.step(i);
        if (log && ((i + 1) % 10 == 0 || i + 1 == steps))
            *log << "  step " << (i + 1) << "/" << steps << "\n";
    }
    rec.endStep();
}

} // namespace

double runSampleOperators(const std::string& rangeName) {
    try {
        UserRange range(rangeName);
        const torch::Tensor x = torch::ones({8, 16}, torch::requires_grad());
        const torch::Tensor w = torch::ones({16, 4}, torch::requires_grad());
        const torch::Tensor s = torch::relu(torch::mm(x, w)).sum();
        s.backward();
        return s.item<double>();
    } catch (const std::exception&) {
        return -1;
    }
}

DemoResult runDemo(const std::string& name, capture::EnvelopeSink& sink,
                   const DemoOptions& options) {
    DemoResult res;
    const DemoInfo* info = findDemo(name);
    if (!info) {
        res.error = "unknown demo `" + name + "`";
        return res;
    }
    try {
        res.gpu = TorchRecorder::gpuAvailable();
        const torch::Device device =
            res.gpu ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
        ThreadCount threads(options.threads);
        torch::manual_seed(0);
        const Workload w = workloadFor(name, res.gpu);
        RecorderOptions ro;
        ro.recordShapes = options.recordShapes;
        TorchRecorder rec(ro); // declared first: the trainer's loader workers end before it stops
        Trainer trainer(w, device);
        for (int i = 0; i < options.warmupSteps; ++i) trainer.step(-1 - i); // not recorded
        trainer.fillPrefetchQueue();
        trainer.resetSamples();
        if (options.record) {
            if (const base::Status started = rec.start(sink); !started) {
                res.error = started.error().message;
                return res;
            }
        }
        res.steps = options.steps > 0 ? options.steps : w.defaultSteps;
        const auto t0 = std::chrono::steady_clock::now();
        runSteps(trainer, rec, res.steps, options.log);
        if (res.gpu) torch::cuda::synchronize();
        res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        trainer.stopLoader(); // no worker runs operators while the callbacks are removed
        rec.stop();
        const RecorderStats st = rec.stats();
        res.records = st.records;
        res.dropped = st.dropped;
        res.samples = trainer.samples();
        res.note = res.gpu ? gpuNote() : cpuNote(*info);
        res.ok = !st.sinkFailed;
        if (st.sinkFailed) res.error = "the capture sink refused envelopes (recording incomplete)";
    } catch (const c10::Error& e) {
        res.error = std::string("LibTorch error: ") + e.what_without_backtrace();
    } catch (const std::exception& e) {
        res.error = std::string("LibTorch error: ") + e.what();
    }
    return res;
}

} // namespace stallscope::torchrec
