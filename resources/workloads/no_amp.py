#!/usr/bin/env python3
"""Stall: FP32 matrix multiplies on a GPU with Tensor Cores.

bad:   a matmul-heavy MLP trained in plain FP32 with TF32 off (`allow_tf32 = False`):
       cuBLAS runs FP32 (SIMT) GEMMs and the Tensor Cores stay idle.
fixed: the same model under `torch.autocast(dtype=torch.bfloat16)` with TF32 allowed for
       what stays in FP32: the GEMMs run on Tensor Cores, several times faster.

Stallscope should report `no_tensor_cores` in bad (FP32 GEMM kernels, compute capability
>= 7) and not in fixed. On the CPU the comparison means nothing (there are no Tensor Cores;
CPU bfloat16 may even be slower); the script still runs there, with autocast on the CPU.
"""

import contextlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PRESETS = {
    "cpu": {"steps": 10, "batch_size": 64, "in_features": 256, "hidden": 256, "depth": 3},
    "cuda": {"steps": 20, "batch_size": 2048, "in_features": 4096, "hidden": 4096, "depth": 4},
}
CLASSES = 1000


class NoAmpWorkload(common.Workload):
    def __init__(self, args, device, preset):
        self.device = device
        self.fixed = args.variant == "fixed"
        self.batch_size = common.per_variant(preset, "batch", args.variant)
        if device.type == "cuda":
            common.set_tf32(self.fixed)          # bad: strict FP32; fixed: TF32 allowed
        self.model = common.make_mlp(preset["in_features"], preset["hidden"], preset["depth"],
                                     CLASSES).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.pool = common.batch_pool(4, self.batch_size, preset["in_features"], CLASSES,
                                      device, args.seed)

    def autocast(self):
        if not self.fixed:
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16)

    def step(self, i):
        x, y = self.pool[i % len(self.pool)]
        with self.autocast():
            loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()                          # backward outside autocast, as documented
        self.opt.step()

    def info(self):
        return {"autocast": "bfloat16" if self.fixed else None,
                "linear_layers": sum(isinstance(m, torch.nn.Linear) for m in self.model.modules()),
                "tf32": bool(self.fixed and self.device.type == "cuda")}


if __name__ == "__main__":
    common.main("no_amp", __doc__, PRESETS, NoAmpWorkload)
