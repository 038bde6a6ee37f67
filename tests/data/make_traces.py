#!/usr/bin/env python3
"""Writes the small hand-made traces of tests/data/traces/ (committed; rerun only to change
them, then regenerate the expected outputs: tests/data/run_diff_tests.py --update).

Each trace shows one situation with numbers chosen so the answer is known by hand:
  launch_bound_steps   3 steps of 24 tiny kernels, each launch 10 us, each kernel 2 us
  dataloader_stall     3 steps: 6 ms in the DataLoader, then 2 ms of GPU work
  blocking_copy_sync   pageable cudaMemcpy H2D and a .item() sync every step
  cpu_only             ProfilerSteps of CPU operators, no GPU activity
  unaligned_bf16_gemm  3 steps on an A100, each a bf16 aten::linear with K = 4100 on a 1 ms GEMM
                       (33.6 TFLOP/s, far below the 312 TFLOP/s bf16 peak)
  mha_attention_weights  3 steps on an H100 of nn.MultiheadAttention asked for its weights:
                       bmm, softmax, bmm of [16, 8, 128, 128] scores instead of a fused kernel
  stream_wait_graph    3 steps on an H100: stream 7 waits (cudaStreamWaitEvent, Kineto 2026's
                       wait_on_stream / wait_on_cuda_event_record_corr_id) for a 1.48 ms NCCL
                       kernel on GPU 1, then replays graph 3 (two kernels)
  bad_input_mix        unsorted events, a negative duration, "N/A" time, a lone surrogate,
                       an E without B, an unterminated B
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "traces")
BASE = 1_700_000_000_000_000  # us

DEVICE = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85031714816,
          "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
          "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
          "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
          "sharedMemPerMultiprocessor": 233472, "numSms": 132,
          "sharedMemPerBlockOptin": 232448}


def meta(events):
    events += [
        {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": 100, "tid": 100, "args": {"name": "thread 100 (python3)"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
        {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    ]


class Gpu:
    def __init__(self):
        self.events = []
        self.corr = 1

    def cpu(self, name, ts, dur, cat="cpu_op", args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 100, "tid": 100, "ts": ts, "dur": dur}
        if args:
            e["args"] = args
        self.events.append(e)

    def launch(self, api, ts, dur, cat, gname, gts, gdur, extra=None):
        c = self.corr
        self.corr += 1
        self.cpu(api, ts, dur, "cuda_runtime", {"correlation": c})
        g = {"ph": "X", "cat": cat, "name": gname, "pid": 0, "tid": 7, "ts": gts, "dur": gdur,
             "args": {"device": 0, "stream": 7, "correlation": c}}
        if extra:
            g["args"].update(extra)
        self.events.append(g)
        self.events.append({"ph": "s", "id": c, "pid": 100, "tid": 100, "ts": ts, "cat": "ac2g", "name": "ac2g"})
        self.events.append({"ph": "f", "id": c, "pid": 0, "tid": 7, "ts": gts, "cat": "ac2g", "name": "ac2g", "bp": "e"})

    def write(self, name, devices=True, device=None):
        meta(self.events)
        doc = {"schemaVersion": 1, "traceEvents": self.events, "traceName": name + ".json"}
        if devices:
            doc["deviceProperties"] = [device or DEVICE]
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(doc, f, indent=None, separators=(",", ":"))
            f.write("\n")


def launch_bound_steps():
    g = Gpu()
    t = BASE
    for step in range(3):
        g.cpu(f"ProfilerStep#{step + 1}", t, 1000, "user_annotation")
        for k in range(24):
            ts = t + 20 + k * 16
            g.cpu("aten::add", ts, 14)
            g.launch("cudaLaunchKernel", ts + 2, 10, "kernel",
                     "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >",
                     ts + 13, 2, {"grid": [1, 1, 1], "block": [128, 1, 1]})
        t += 1000
    g.write("launch_bound_steps")


def dataloader_stall():
    g = Gpu()
    t = BASE
    for step in range(3):
        g.cpu(f"ProfilerStep#{step + 1}", t, 8200, "user_annotation")
        g.cpu("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t + 10, 6000)
        for k in range(4):
            ts = t + 6100 + k * 20
            g.cpu("aten::mm", ts, 15)
            g.launch("cudaLaunchKernel", ts + 2, 8, "kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                     ts + 12 + k * 480, 500, {"grid": [132, 1, 1], "block": [256, 1, 1]})
        t += 8200
    g.write("dataloader_stall")


def blocking_copy_sync():
    g = Gpu()
    t = BASE
    for step in range(3):
        g.cpu(f"ProfilerStep#{step + 1}", t, 3000, "user_annotation")
        g.cpu("aten::to", t + 10, 900)
        g.launch("cudaMemcpyAsync", t + 20, 880, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", t + 30, 860,
                 {"bytes": 67108864, "memory bandwidth (GB/s)": 78.0})
        for k in range(3):
            ts = t + 950 + k * 30
            g.cpu("aten::conv2d", ts, 25)
            g.launch("cudaLaunchKernel", ts + 2, 8, "kernel", "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc",
                     ts + 12 + k * 400, 400, {"grid": [264, 1, 1], "block": [128, 1, 1]})
        g.cpu("aten::item", t + 1100, 1300)
        g.launch("cudaMemcpyAsync", t + 1110, 1280, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", t + 2300, 4,
                 {"bytes": 4})
        g.cpu("cudaStreamSynchronize", t + 2395, 3, "cuda_runtime", {"correlation": 0})
        t += 3000
    g.write("blocking_copy_sync")


def cpu_only():
    g = Gpu()
    t = BASE
    for step in range(4):
        g.cpu(f"ProfilerStep#{step + 1}", t, 500, "user_annotation")
        g.cpu("aten::linear", t + 10, 300)
        g.cpu("aten::addmm", t + 20, 280)
        g.cpu("aten::relu", t + 320, 50)
        t += 500
    g.events = [e for e in g.events]
    g.events += [{"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}}]
    with open(os.path.join(OUT, "cpu_only.json"), "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": g.events}, f, separators=(",", ":"))
        f.write("\n")


def unaligned_bf16_gemm():
    g = Gpu()
    t = BASE
    bf16 = ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]
    for step in range(3):
        g.cpu(f"ProfilerStep#{step + 1}", t, 2000, "user_annotation")
        g.cpu("aten::linear", t + 10, 40,
              args={"Input Dims": [[4096, 4100], [1000, 4100], [1000]], "Input type": bf16})
        g.launch("cudaLaunchKernel", t + 20, 10, "kernel", "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_tn",
                 t + 40, 1000, {"grid": [500, 1, 1], "block": [128, 1, 1]})
        g.cpu("aten::relu", t + 60, 20, args={"Input Dims": [[4096, 1000]], "Input type": bf16[:1]})
        g.launch("cudaLaunchKernel", t + 65, 8, "kernel",
                 "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar>",
                 t + 1045, 30, {"grid": [4000, 1, 1], "block": [128, 1, 1]})
        t += 2000
    a100 = dict(DEVICE, name="NVIDIA A100-SXM4-80GB", computeMajor=8, numSms=108)
    g.write("unaligned_bf16_gemm", device=a100)


def mha_attention_weights():
    g = Gpu()
    t = BASE
    f = ["float", "float"]
    for step in range(3):
        g.cpu(f"ProfilerStep#{step + 1}", t, 1000, "user_annotation")
        g.cpu("aten::_native_multi_head_attention", t + 10, 400)
        g.cpu("aten::bmm", t + 20, 40, args={"Input Dims": [[128, 128, 64], [128, 64, 128]], "Input type": f})
        g.launch("cudaLaunchKernel", t + 30, 8, "kernel", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32",
                 t + 45, 30, {"grid": [128, 1, 1], "block": [256, 1, 1]})
        g.cpu("aten::_softmax", t + 70, 30,
              args={"Input Dims": [[16, 8, 128, 128], [], []], "Input type": ["float", "Scalar", "Scalar"]})
        g.launch("cudaLaunchKernel", t + 75, 8, "kernel",
                 "void (anonymous namespace)::softmax_warp_forward<float, float, float, 7, false, false>",
                 t + 85, 20, {"grid": [4096, 1, 1], "block": [128, 1, 1]})
        g.cpu("aten::bmm", t + 110, 40, args={"Input Dims": [[128, 128, 128], [128, 128, 64]], "Input type": f})
        g.launch("cudaLaunchKernel", t + 120, 8, "kernel", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x64x32",
                 t + 130, 30, {"grid": [128, 1, 1], "block": [256, 1, 1]})
        g.cpu("aten::sum", t + 200, 30, args={"Input Dims": [[16, 8, 128, 128], [], [], []],
                                              "Input type": ["float", "ScalarList", "Scalar", ""]})
        g.launch("cudaLaunchKernel", t + 205, 8, "kernel", "void at::native::reduce_kernel<512, 1>",
                 t + 215, 10, {"grid": [256, 1, 1], "block": [512, 1, 1]})
        t += 1000
    g.write("mha_attention_weights")


def stream_wait_graph():
    g = Gpu()
    t = BASE
    for step in range(3):
        g.cpu(f"ProfilerStep#{step + 1}", t, 2000, "user_annotation")
        # The awaited work: an NCCL kernel on GPU 1's stream 20.
        g.launch("cudaLaunchKernel", t + 10, 5, "kernel", "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
                 t + 20, 1480)
        peer = g.events[-3]
        peer["pid"], peer["tid"] = 1, 20
        peer["args"].update(device=1, stream=20)
        g.events[-1]["pid"], g.events[-1]["tid"] = 1, 20
        record = g.corr
        g.corr += 1
        g.cpu("cudaEventRecord", t + 15, 3, "cuda_runtime", {"correlation": record})
        wait = g.corr
        g.corr += 1
        g.cpu("cudaStreamWaitEvent", t + 20, 3, "cuda_runtime", {"correlation": wait})
        g.events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7,
                         "ts": t + 20, "dur": 3,
                         "args": {"cuda_sync_kind": "Stream Wait Event", "device": 0, "stream": 7,
                                  "correlation": wait, "wait_on_stream": 20,
                                  "wait_on_cuda_event_record_corr_id": record,
                                  "wait_on_cuda_event_id": 1000 + step}})
        # Graph 3 replayed on stream 7 once the wait is over.
        g.launch("cudaGraphLaunch", t + 30, 12, "kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                 t + 1510, 190, {"graph id": 3, "graph node id": 1})
        c = g.corr - 1
        g.events.append({"ph": "X", "cat": "kernel", "name": "triton_poi_fused_add_0", "pid": 0, "tid": 7,
                         "ts": t + 1703, "dur": 47,
                         "args": {"device": 0, "stream": 7, "correlation": c, "graph id": 3, "graph node id": 2}})
        t += 2000
    g.events += [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_labels", "pid": 1, "tid": 0, "args": {"labels": "GPU 1"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 20, "args": {"name": "stream 20"}},
    ]
    meta(g.events)
    doc = {"schemaVersion": 1, "traceEvents": g.events, "traceName": "stream_wait_graph.json",
           "deviceProperties": [DEVICE, dict(DEVICE, id=1)]}
    with open(os.path.join(OUT, "stream_wait_graph.json"), "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")


def bad_input_mix():
    # Written as text: some of it is not what json.dump would write.
    ev = [
        '{"ph":"X","cat":"cpu_op","name":"late","pid":1,"tid":1,"ts":500,"dur":10}',
        '{"ph":"X","cat":"cpu_op","name":"early","pid":1,"tid":1,"ts":100,"dur":50}',
        '{"ph":"X","cat":"cpu_op","name":"negative","pid":1,"tid":1,"ts":200,"dur":-5}',
        '{"ph":"X","cat":"cpu_op","name":"no time","pid":1,"tid":1,"ts":"N/A","dur":5}',
        '{"ph":"X","cat":"cpu_op","name":"lone \\udc80 surrogate","pid":1,"tid":2,"ts":120,"dur":5}',
        '{"ph":"E","pid":1,"tid":2,"ts":130}',
        '{"ph":"B","name":"never ends","pid":1,"tid":3,"ts":140}',
        '{"ph":"X","cat":"cpu_op","name":"nested","pid":1,"tid":1,"ts":110,"dur":20}',
    ]
    with open(os.path.join(OUT, "bad_input_mix.json"), "w") as f:
        f.write('{"traceEvents":[\n' + ",\n".join(ev) + "\n]}\n")


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    launch_bound_steps()
    dataloader_stall()
    blocking_copy_sync()
    cpu_only()
    unaligned_bf16_gemm()
    mha_attention_weights()
    stream_wait_graph()
    bad_input_mix()
