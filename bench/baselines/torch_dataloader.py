#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What a user writes instead of `ferry run` for a deep model: a python3-torch
DataLoader over the same JSONL file (one KServe v2 request per line), batches
through the TorchScript model under inference_mode, one JSON line of outputs
per input line. Written as a competent user would: line offsets indexed once,
each line parsed in a DataLoader worker process while the main process
computes, all cores for torch, the best of several batch sizes.

  /usr/bin/python3 bench/baselines/torch_dataloader.py --model model.pt \
      --input images.jsonl --output out.jsonl [--batch-sizes 1,4,8] [--workers 1]

Prints one JSON line: {"records", "seconds" (best), "batch_size" (best),
"all": {batch: seconds}}.
"""
import argparse
import json
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset


class JsonlImages(Dataset):
    def __init__(self, path):
        self.path = path
        self.offsets = []
        with open(path, "rb") as f:
            pos = 0
            for line in f:
                self.offsets.append(pos)
                pos += len(line)

    def __len__(self):
        return len(self.offsets)

    def __getitem__(self, i):
        with open(self.path, "rb") as f:
            f.seek(self.offsets[i])
            record = json.loads(f.readline())
        tensor = record["body"]["inputs"][0]
        x = torch.tensor(tensor["data"], dtype=torch.float32).reshape(tensor["shape"][1:])
        return record["custom_id"], x


def run(model, dataset, batch_size, workers, output):
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=workers)
    start = time.perf_counter()
    with open(output, "w") as out, torch.inference_mode():
        for ids, x in loader:
            y = model(x)
            for custom_id, row in zip(ids, y.tolist()):
                out.write(json.dumps({"custom_id": custom_id, "output__0": row}) + "\n")
    return time.perf_counter() - start


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--batch-sizes", default="1,4,8")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    model = torch.jit.load(a.model).eval()
    dataset = JsonlImages(a.input)
    with torch.inference_mode():
        model(torch.zeros(1, 3, 224, 224))  # warm-up
    timings = {}
    for b in [int(x) for x in a.batch_sizes.split(",")]:
        timings[b] = round(run(model, dataset, b, a.workers, a.output), 3)
    batch, seconds = min(timings.items(), key=lambda kv: kv[1])
    print(json.dumps({"records": len(dataset), "seconds": seconds, "batch_size": batch,
                      "all": timings}))


if __name__ == "__main__":
    main()
