#!/usr/bin/env python3
"""Stall: a model too light for the GPU (launch-bound).

bad:   a tiny, deep MLP (narrow Linear + LayerNorm + GELU blocks) at a modest batch, with
       Adam's per-parameter loop (foreach=False): a few hundred microsecond-long kernels
       per step, each costing more to launch on the CPU than to run on the GPU.
fixed: the same model and samples, with far more work per launch: a batch 16 times
       larger (16 times fewer steps), Adam's multi-tensor implementation (foreach=True,
       fused=True where this PyTorch supports it on CUDA) and gradients set to None.
       `--cuda-graphs` additionally replays forward and backward as CUDA graphs
       (torch.cuda.make_graphed_callables; optional, not exercised in CI).

Both variants process the same samples (the preset's, or `--samples S`).

Stallscope should report `cpu_dispatch` (launch-bound steps, small kernels, "the model is
light") in bad; fixed runs several times more samples per second.
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PRESETS = {
    "cpu": {"samples": 1024, "batch_bad": 16, "batch_fixed": 256,
            "in_features": 32, "hidden": 64, "depth": 6},
    "cuda": {"samples": 8192, "batch_bad": 64, "batch_fixed": 1024,
             "in_features": 64, "hidden": 256, "depth": 8},
}
CLASSES = 10


def make_adam(params, fixed, device):
    """Adam: per-parameter loop (bad) or multi-tensor / fused (fixed)."""
    if not fixed:
        return torch.optim.Adam(params, lr=1e-3, foreach=False)
    params = list(params)
    if device.type == "cuda":
        try:
            return torch.optim.Adam(params, lr=1e-3, fused=True)   # one kernel per group
        except (TypeError, RuntimeError, ValueError):
            pass
    return torch.optim.Adam(params, lr=1e-3, foreach=True)


class LightModelWorkload(common.Workload):
    def __init__(self, args, device, preset):
        self.fixed = args.variant == "fixed"
        self.batch_size = common.per_variant(preset, "batch", args.variant)
        self.model = common.make_mlp(preset["in_features"], preset["hidden"], preset["depth"],
                                     CLASSES, norm=True).to(device)
        self.opt = make_adam(self.model.parameters(), self.fixed, device)
        self.pool = common.batch_pool(8, self.batch_size, preset["in_features"], CLASSES,
                                      device, args.seed)
        self.graphed = False
        self.forward = self.model
        if self.fixed and args.cuda_graphs and device.type == "cuda":
            # Forward and backward captured once and replayed: one launch per graph.
            sample = self.pool[0][0].clone()
            self.forward = torch.cuda.make_graphed_callables(self.model, (sample,))
            self.graphed = True

    def step(self, i):
        x, y = self.pool[i % len(self.pool)]
        loss = F.cross_entropy(self.forward(x), y)
        # bad keeps zero-filled gradient tensors (one memset per parameter); fixed drops them.
        self.opt.zero_grad(set_to_none=self.fixed)
        loss.backward()
        self.opt.step()

    def info(self):
        return {"optimizer": "adam-" + ("multi-tensor" if self.fixed else "for-loop"),
                "cuda_graphs": self.graphed}


def add_arguments(parser):
    parser.add_argument("--cuda-graphs", action="store_true",
                        help="fixed on cuda: replay forward+backward as CUDA graphs")


if __name__ == "__main__":
    common.main("light_model", __doc__, PRESETS, LightModelWorkload, add_arguments)
