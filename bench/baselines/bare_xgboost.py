#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The physical limit for offline XGBoost scoring: predict on features already
parsed into memory (no file reading, no parsing, no writing).

The CSV is parsed first (untimed) into one float32 matrix; then the whole
matrix is predicted with inplace_predict, at each batch size given, keeping the
fastest. The same libxgboost as Ferry's (Debian's libxgboost0).

  /usr/bin/python3 bench/baselines/bare_xgboost.py --model MODEL.json \
      --input rows.csv [--id-column id] [--batch-rows 10000,100000,0]

--batch-rows 0 means the whole matrix in one call. Prints one JSON line:
{"records", "seconds" (best), "batch_rows" (best), "all": {batch: seconds}}.
"""
import argparse
import json
import os
import time

import numpy as np
import pandas as pd
import xgboost as xgb


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True)
    p.add_argument("--id-column", default="id")
    p.add_argument("--batch-rows", default="10000,100000,0")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeats", type=int, default=2)
    a = p.parse_args()

    booster = xgb.Booster(model_file=a.model)
    booster.set_param({"nthread": a.threads})
    frame = pd.read_csv(a.input, engine="c", dtype={a.id_column: str})
    x = np.ascontiguousarray(
        frame.drop(columns=[a.id_column]).to_numpy(np.float32))
    del frame
    n = x.shape[0]
    booster.inplace_predict(x[: min(n, 1000)])  # warm-up
    timings = {}
    for batch in [int(b) for b in a.batch_rows.split(",")]:
        step = n if batch <= 0 else batch
        best = float("inf")
        for _ in range(a.repeats):
            t = time.perf_counter()
            for s in range(0, n, step):
                booster.inplace_predict(x[s:s + step])
            best = min(best, time.perf_counter() - t)
        timings[str(batch if batch > 0 else n)] = round(best, 3)
    batch, seconds = min(timings.items(), key=lambda kv: kv[1])
    print(json.dumps({"records": n, "seconds": seconds, "batch_rows": int(batch),
                      "all": timings}))


if __name__ == "__main__":
    main()
