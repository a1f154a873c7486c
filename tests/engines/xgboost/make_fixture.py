# SPDX-License-Identifier: Apache-2.0
"""Writes the XGBoost engine test fixture into OUT_DIR.

Run by tests/engines/xgboost/xgboost_engine_test.cc with Debian's /usr/bin/python3
(python3-xgboost 1.7.4). Everything is deterministic (fixed seeds, one thread).

OUT_DIR/
  binary/model.json, model.ubj, model.bin   binary:logistic, 50 trees of depth 4, 32
                                             features; .bin is XGBoost's legacy binary
                                             format (1.7 picks the format by extension)
  multi/model.json                           multi:softprob, 3 classes
  multi_softmax/model.json                   multi:softmax, 3 classes (same trees as
                                             multi: only the objective's transform
                                             differs)
  regression/model.json                      reg:squarederror with 2 targets
  rows.bin                                   float32 [ROWS, 32], some values NaN (missing)
  binary_pred.bin, binary_margin.bin         float32 [ROWS]: predict(), output_margin
  multi_pred.bin, multi_margin.bin           float32 [ROWS, 3]
  multi_softmax_pred.bin                     float32 [ROWS]: the class index
  regression_pred.bin                        float32 [ROWS, 2]
All .bin arrays are raw little-endian float32, row-major.
"""

import os
import sys

import numpy as np
import xgboost as xgb

FEATURES = 32
ROWS = 64
CLASSES = 3


def save(path, array):
    np.ascontiguousarray(array, dtype="<f4").tofile(path)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(20240607)

    x_train = rng.normal(size=(2000, FEATURES)).astype(np.float32)
    x_train[rng.random(x_train.shape) < 0.05] = np.nan
    filled = np.nan_to_num(x_train)
    y_binary = (filled[:, 0] + 0.5 * filled[:, 1] * filled[:, 2] - filled[:, 3] > 0)
    y_multi = np.digitize(filled[:, 4] + filled[:, 5], [-0.7, 0.7])

    params = {"max_depth": 4, "eta": 0.3, "nthread": 1, "seed": 7}
    binary = xgb.train({**params, "objective": "binary:logistic"},
                       xgb.DMatrix(x_train, label=y_binary.astype(np.float32)),
                       num_boost_round=50)
    multi_params = {**params, "num_class": CLASSES}
    multi_labels = xgb.DMatrix(x_train, label=y_multi.astype(np.float32))
    multi = xgb.train({**multi_params, "objective": "multi:softprob"}, multi_labels,
                      num_boost_round=20)
    softmax = xgb.train({**multi_params, "objective": "multi:softmax"}, multi_labels,
                        num_boost_round=20)
    y_regression = np.stack([filled[:, 6] * 2.0, filled[:, 7] - filled[:, 8]], axis=1)
    regression = xgb.train({**params, "objective": "reg:squarederror"},
                           xgb.DMatrix(x_train, label=y_regression.astype(np.float32)),
                           num_boost_round=10)

    for name in ("binary", "multi", "multi_softmax", "regression"):
        os.makedirs(os.path.join(out, name), exist_ok=True)
    for ext in ("json", "ubj", "bin"):
        binary.save_model(os.path.join(out, "binary", "model." + ext))
    multi.save_model(os.path.join(out, "multi", "model.json"))
    softmax.save_model(os.path.join(out, "multi_softmax", "model.json"))
    regression.save_model(os.path.join(out, "regression", "model.json"))

    rows = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    rows[rng.random(rows.shape) < 0.1] = np.nan
    save(os.path.join(out, "rows.bin"), rows)
    test = xgb.DMatrix(rows, missing=np.nan)
    save(os.path.join(out, "binary_pred.bin"), binary.predict(test))
    save(os.path.join(out, "binary_margin.bin"), binary.predict(test, output_margin=True))
    save(os.path.join(out, "multi_pred.bin"), multi.predict(test))
    save(os.path.join(out, "multi_margin.bin"), multi.predict(test, output_margin=True))
    save(os.path.join(out, "multi_softmax_pred.bin"), softmax.predict(test))
    save(os.path.join(out, "regression_pred.bin"), regression.predict(test))


if __name__ == "__main__":
    main()
