#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""What a user writes instead of `ferry run`: score a CSV with pandas + xgboost.

Written as a competent user would: read_csv in chunks with the C parser and
float32 features (no object columns), one inplace_predict per chunk on all
cores, scores appended to the output as they come (memory stays flat).

  /usr/bin/python3 bench/baselines/pandas_xgboost.py --model MODEL.json \
      --input rows.csv --output scores.csv [--id-column id] [--chunk-rows 100000]

Prints one JSON line: {"records", "seconds", "read_seconds", "predict_seconds",
"write_seconds"}. Runs under Debian's python3-pandas and python3-xgboost.
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
    p.add_argument("--output", required=True)
    p.add_argument("--id-column", default="id")
    p.add_argument("--chunk-rows", type=int, default=100_000)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    a = p.parse_args()

    start = time.perf_counter()
    booster = xgb.Booster(model_file=a.model)
    booster.set_param({"nthread": a.threads})
    header = pd.read_csv(a.input, nrows=0).columns
    features = [c for c in header if c != a.id_column]
    dtypes = {c: np.float32 for c in features}
    dtypes[a.id_column] = str
    read_s = predict_s = write_s = 0.0
    records = 0
    t = time.perf_counter()
    with open(a.output, "w") as out:
        out.write(f"{a.id_column},output__0\n")
        for chunk in pd.read_csv(a.input, chunksize=a.chunk_rows, dtype=dtypes,
                                 engine="c"):
            t1 = time.perf_counter()
            read_s += t1 - t
            scores = booster.inplace_predict(chunk[features].to_numpy(np.float32))
            t2 = time.perf_counter()
            predict_s += t2 - t1
            pd.DataFrame({a.id_column: chunk[a.id_column], "output__0": scores}) \
                .to_csv(out, header=False, index=False)
            t = time.perf_counter()
            write_s += t - t2
            records += len(chunk)
    print(json.dumps({"records": records,
                      "seconds": round(time.perf_counter() - start, 3),
                      "read_seconds": round(read_s, 3),
                      "predict_seconds": round(predict_s, 3),
                      "write_seconds": round(write_s, 3)}))


if __name__ == "__main__":
    main()
