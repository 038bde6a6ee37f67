#!/usr/bin/env python3
"""Stall: the training loop waits for its input pipeline.

bad:   DataLoader(num_workers=0): every sample is read and transformed (crop, flip,
       normalise, blur) in the training process, between the steps' GPU work.
fixed: DataLoader(num_workers>0, pin_memory=True on cuda, persistent_workers=True,
       prefetch_factor=4): worker processes prepare the next batches while the GPU computes,
       and the copies to the GPU are non-blocking.

Stallscope should report `data_loading` (the `enumerate(DataLoader)#...__next__` ranges) as
the top cause in bad and no data_loading finding in fixed.
"""

import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# Per device: image side, storage latency per sample (the read), model width, batch,
# workers of the fixed variant.
PRESETS = {
    "cpu": {"steps": 10, "batch_size": 32, "image": 32, "read_ms": 1.0, "width": 24,
            "workers": 4},
    "cuda": {"steps": 20, "batch_size": 128, "image": 64, "read_ms": 0.2, "width": 160,
             "workers": min(12, max(2, (os.cpu_count() or 4) - 4))},
}
CLASSES = 10


class SyntheticImages(Dataset):
    """Images "decoded" from a per-index seed, then augmented the way a vision pipeline does.

    `read_ms` of sleep per sample stands for reading the file from storage; the transform
    itself is real CPU work. Deterministic: sample i is the same in every run and worker.
    """

    def __init__(self, length, image, read_ms, seed):
        self.length = length
        self.image = image
        self.read_ms = read_ms
        self.seed = seed
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        if self.read_ms > 0:
            time.sleep(self.read_ms / 1000.0)          # the read from storage
        side = self.image + 8
        raw = torch.randint(0, 256, (3, side, side), dtype=torch.uint8, generator=gen)  # "decode"
        # Random crop and horizontal flip.
        top, left = torch.randint(0, 9, (2,), generator=gen).tolist()
        img = raw[:, top:top + self.image, left:left + self.image]
        if torch.rand(1, generator=gen).item() < 0.5:
            img = img.flip(2)
        # To float, normalise, a light blur (colour jitter / resize stand-in).
        img = img.float().div_(255.0).sub_(self.mean).div_(self.std)
        img = F.avg_pool2d(img.unsqueeze(0), 3, stride=1, padding=1).squeeze(0)
        return img, index % CLASSES


def make_model(width):
    w = width
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, w, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(w, 2 * w, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(2 * w, 4 * w, 3, stride=2, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(4 * w, 4 * w, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(4 * w, CLASSES))


class DataLoadingWorkload(common.Workload):
    def __init__(self, args, device, preset):
        self.device = device
        self.batch_size = common.per_variant(preset, "batch", args.variant)
        self.fixed = args.variant == "fixed"
        dataset = SyntheticImages(100_000, preset["image"], preset["read_ms"], args.seed)
        shuffle_gen = torch.Generator().manual_seed(args.seed)
        if self.fixed:
            self.workers = preset["workers"]
            loader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True,
                                generator=shuffle_gen, drop_last=True,
                                num_workers=self.workers,
                                pin_memory=(device.type == "cuda"),   # pinning needs CUDA
                                persistent_workers=True, prefetch_factor=4)
        else:
            self.workers = 0
            loader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True,
                                generator=shuffle_gen, drop_last=True, num_workers=0)
        self.loader = common.EndlessLoader(loader)
        self.model = make_model(preset["width"]).to(device)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)

    def step(self, i):
        x, y = self.loader.next()
        # Pinned batches copy asynchronously; pageable ones (bad) are copied synchronously.
        x = x.to(self.device, non_blocking=self.fixed)
        y = y.to(self.device, non_blocking=self.fixed)
        loss = F.cross_entropy(self.model(x), y)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()

    def close(self):
        self.loader.close()

    def info(self):
        return {"num_workers": self.workers}


if __name__ == "__main__":
    common.main("data_loading", __doc__, PRESETS, DataLoadingWorkload)
