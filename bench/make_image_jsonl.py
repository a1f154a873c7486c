#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes N random 3x224x224 images as an OpenAI-Batch-shaped JSONL file for
`ferry run` (one KServe v2 request per line) and the torch DataLoader baseline,
deterministic for a given --seed.

  bench/make_image_jsonl.py --images 32 --model resnet18 out.jsonl
"""
import argparse
import json

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--images", type=int, default=32)
    p.add_argument("--model", default="resnet18")
    p.add_argument("--input", default="input__0")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    with open(a.out, "w") as f:
        for i in range(a.images):
            x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
            data = "[" + ",".join("%.4g" % v for v in x.ravel()) + "]"
            body = ('{"inputs":[{"name":%s,"shape":[1,3,224,224],"datatype":"FP32","data":%s}]}'
                    % (json.dumps(a.input), data))
            f.write('{"custom_id":"img-%d","method":"POST","url":"/v2/models/%s/infer","body":%s}\n'
                    % (i, a.model, body))


if __name__ == "__main__":
    main()
