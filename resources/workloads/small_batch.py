#!/usr/bin/env python3
"""Stall: a batch far too small for the model.

bad:   batch 8: every step launches the same operators (kernels on a GPU) for only 8
       samples; the kernels are tiny and the GPU waits for the CPU to launch them.
fixed: a large batch (512 on cuda, 64 on cpu) over the same number of samples: the same
       operators per step, many times fewer per sample, and kernels big enough to fill
       the GPU.

Both variants process the same samples: by default the preset's sample count, or
`--samples S` (steps = S / batch size); `--steps N` runs N steps of the variant's batch.

Stallscope should report `cpu_dispatch` (launch-bound steps, small kernels, "a larger
batch") in bad; in fixed the GPU is busy and step time per sample drops.
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# The model is a 4-layer MLP sized for the device; only the batch differs between variants.
PRESETS = {
    "cpu": {"samples": 512, "batch_bad": 8, "batch_fixed": 64,
            "in_features": 128, "hidden": 256, "depth": 4},
    "cuda": {"samples": 4096, "batch_bad": 8, "batch_fixed": 512,
             "in_features": 1024, "hidden": 2048, "depth": 4},
}
CLASSES = 100


class SmallBatchWorkload(common.Workload):
    def __init__(self, args, device, preset):
        self.batch_size = common.per_variant(preset, "batch", args.variant)
        self.model = common.make_mlp(preset["in_features"], preset["hidden"], preset["depth"],
                                     CLASSES).to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        # Synthetic data already on the device: fetching a batch is free, so the only
        # difference between the variants is the batch size.
        self.pool = common.batch_pool(8, self.batch_size, preset["in_features"], CLASSES,
                                      device, args.seed)

    def step(self, i):
        x, y = self.pool[i % len(self.pool)]
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()


if __name__ == "__main__":
    common.main("small_batch", __doc__, PRESETS, SmallBatchWorkload)
