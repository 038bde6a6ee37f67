#!/usr/bin/env python3
"""Stall: synchronous host-to-device copies and a host read of the loss every step.

bad:   each step copies its batch from pageable host memory (`x.to(device)`: the CPU
       stages it and waits), and accumulates the running loss and accuracy in Python
       (`loss.item()`, `correct.item()`): the CPU waits for the GPU to drain every step,
       so the next step's launches never overlap this step's kernels.
fixed: the host batches are in pinned memory and copied with `non_blocking=True`; the
       running loss and accuracy stay on the device and are read once every
       `--log-every` steps (default 10).

Stallscope should report `blocking_h2d_copy` (pageable HtoD copies) and `host_sync`
(`aten::item` / `aten::_local_scalar_dense`) in bad and neither in fixed. On the CPU a
trace can only show the `.item()` calls (pinning needs CUDA and a copy to the CPU is none).
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PRESETS = {
    "cpu": {"steps": 20, "batch_size": 32, "in_features": 256, "hidden": 256, "depth": 2},
    "cuda": {"steps": 30, "batch_size": 1024, "in_features": 4096, "hidden": 2048, "depth": 4},
}
CLASSES = 100


class SyncCopiesWorkload(common.Workload):
    def __init__(self, args, device, preset):
        self.device = device
        self.fixed = args.variant == "fixed"
        self.log_every = args.log_every
        self.batch_size = common.per_variant(preset, "batch", args.variant)
        self.model = common.make_mlp(preset["in_features"], preset["hidden"], preset["depth"],
                                     CLASSES).to(device)
        # SGD: its step has no .item() of its own (Adam's per-parameter loop has one).
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)

        # The batches live on the host, as a dataset's output would; the fix pins them.
        self.pinned = self.fixed and device.type == "cuda"
        self.host_batches = []
        for x, y in common.batch_pool(8, self.batch_size, preset["in_features"], CLASSES,
                                      torch.device("cpu"), args.seed):
            if self.pinned:
                x, y = x.pin_memory(), y.pin_memory()
            self.host_batches.append((x, y))

        self.samples_seen = 0
        self.reads = 0
        if self.fixed:
            self.loss_sum = torch.zeros((), device=device)
            self.correct = torch.zeros((), dtype=torch.long, device=device)
        else:
            self.loss_sum = 0.0
            self.correct = 0

    def step(self, i):
        x_host, y_host = self.host_batches[i % len(self.host_batches)]
        x = x_host.to(self.device, non_blocking=self.pinned)
        y = y_host.to(self.device, non_blocking=self.pinned)
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        hits = (logits.detach().argmax(1) == y).sum()
        self.samples_seen += self.batch_size
        if self.fixed:
            # Accumulate on the device; read it only every N steps.
            self.loss_sum += loss.detach()
            self.correct += hits
            if (i + 1) % self.log_every == 0:
                self.report()
        else:
            self.loss_sum += loss.item()       # waits for the GPU
            self.correct += hits.item()        # and again

    def report(self):
        loss_sum = self.loss_sum.item() if torch.is_tensor(self.loss_sum) else self.loss_sum
        correct = self.correct.item() if torch.is_tensor(self.correct) else self.correct
        self.reads += 1
        return loss_sum, correct

    def finish(self):
        self.report()

    def info(self):
        return {"pinned_memory": self.pinned, "non_blocking": self.pinned,
                "log_every": self.log_every if self.fixed else 1}


def add_arguments(parser):
    parser.add_argument("--log-every", type=int, default=10,
                        help="fixed: read the device-side loss/accuracy every N steps")


if __name__ == "__main__":
    common.main("sync_copies", __doc__, PRESETS, SyncCopiesWorkload, add_arguments)
