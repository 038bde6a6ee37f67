#!/usr/bin/env python3
"""Stall: logging and checkpointing inside every step.

bad:   every step reads its metrics to the host (`.item()` of the loss, the gradient norm
       and the weight norm), prints them as a JSON line and appends them to a metrics
       file, then writes a full checkpoint (`torch.save` of model and optimizer state).
fixed: the same logging every `--log-every` steps (default 10) and one checkpoint at the
       end (or every `--ckpt-every` steps when given).

The logging runs inside `record_function("log_metrics")` and the checkpoint inside
`record_function("checkpoint")`, as a user annotating a loop would write them.
Checkpoints and the metrics file go to `--ckpt-dir` (default: a temporary folder that is
removed at exit).

Stallscope should report `logging_checkpoint` in bad (the `checkpoint` ranges; with
`--with-stack` under Kineto also torch.save / print / write frames) and not in fixed.
"""

import json
import os
import shutil
import sys
import tempfile

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

PRESETS = {
    "cpu": {"steps": 20, "batch_size": 8, "in_features": 256, "hidden": 512, "depth": 4},
    "cuda": {"steps": 20, "batch_size": 1024, "in_features": 1024, "hidden": 1024, "depth": 8},
}
CLASSES = 100


class LoggingCheckpointWorkload(common.Workload):
    def __init__(self, args, device, preset):
        self.fixed = args.variant == "fixed"
        self.batch_size = common.per_variant(preset, "batch", args.variant)
        if self.fixed:
            self.log_every = args.log_every
            self.ckpt_every = args.ckpt_every     # 0: only at the end
        else:
            self.log_every = 1
            self.ckpt_every = 1
        self.own_dir = args.ckpt_dir is None
        self.dir = args.ckpt_dir or tempfile.mkdtemp(prefix="stallscope-ckpt-")
        os.makedirs(self.dir, exist_ok=True)
        self.ckpt_path = os.path.join(self.dir, "checkpoint.pt")
        self.metrics = open(os.path.join(self.dir, "metrics.jsonl"), "a")
        self.model = common.make_mlp(preset["in_features"], preset["hidden"], preset["depth"],
                                     CLASSES).to(device)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.pool = common.batch_pool(8, self.batch_size, preset["in_features"], CLASSES,
                                      device, args.seed)
        self.step_no = 0
        self.logs = 0
        self.checkpoints = 0

    def step(self, i):
        x, y = self.pool[i % len(self.pool)]
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.step_no = i + 1
        if self.step_no % self.log_every == 0:
            self.log_metrics(i, loss)
        if self.ckpt_every and self.step_no % self.ckpt_every == 0:
            self.checkpoint()

    def log_metrics(self, i, loss):
        with torch.autograd.profiler.record_function("log_metrics"):
            grad_norm = torch.norm(torch.stack(
                [p.grad.detach().norm() for p in self.model.parameters() if p.grad is not None]))
            weight_norm = torch.norm(torch.stack(
                [p.detach().norm() for p in self.model.parameters()]))
            record = {"step": i, "loss": loss.item(), "grad_norm": grad_norm.item(),
                      "weight_norm": weight_norm.item(), "lr": self.opt.param_groups[0]["lr"]}
            line = json.dumps(record)
            print(line, flush=True)
            self.metrics.write(line + "\n")
            self.metrics.flush()
            self.logs += 1

    def checkpoint(self):
        with torch.autograd.profiler.record_function("checkpoint"):
            state = {"step": self.step_no, "model": self.model.state_dict(),
                     "optimizer": self.opt.state_dict()}
            # Write then rename, as careful training code does.
            tmp = self.ckpt_path + ".tmp"
            torch.save(state, tmp)
            os.replace(tmp, self.ckpt_path)
            self.checkpoints += 1

    def finish(self):
        if self.fixed and (not self.ckpt_every or self.step_no % self.ckpt_every):
            self.checkpoint()                   # the final checkpoint, after the steps

    def close(self):
        self.metrics.close()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def info(self):
        size = os.path.getsize(self.ckpt_path) if os.path.exists(self.ckpt_path) else 0
        return {"log_every": self.log_every, "ckpt_every": self.ckpt_every,
                "logs": self.logs, "checkpoints": self.checkpoints, "checkpoint_bytes": size}


def add_arguments(parser):
    parser.add_argument("--log-every", type=int, default=10,
                        help="fixed: log metrics every N steps")
    parser.add_argument("--ckpt-every", type=int, default=0,
                        help="fixed: checkpoint every N steps (default 0: once, at the end)")
    parser.add_argument("--ckpt-dir", default=None,
                        help="where checkpoints and metrics.jsonl go (default: a temporary "
                             "folder removed at exit)")


if __name__ == "__main__":
    common.main("logging_checkpoint", __doc__, PRESETS, LoggingCheckpointWorkload,
                add_arguments)
