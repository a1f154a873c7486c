# SPDX-License-Identifier: Apache-2.0
"""Writes Ferry's example models as a Triton-layout model repository.

Usage:
  make_example_models.py DIR [--only NAME ...] [--write-examples DIR2] [--verify]

Each model lands in DIR/<name>/config.pbtxt and DIR/<name>/1/<model file>:

  fraud_xgb        XGBoost binary:logistic, 32 FP32 features   1/model.json
  resnet18         torchvision ResNet-18, random weights        1/model.pt (traced)
  text_classifier  2-layer transformer encoder, 2 logits       1/model.pt (scripted)
  mlp              64 -> 256 -> 256 -> 1                        1/model.pt (scripted)

Weights and data come from fixed seeds, so a rerun gives the same models. A rerun
replaces only the named model folders (each is written to a temporary folder and
renamed into place); other folders in DIR are left alone.

--write-examples DIR2 also writes one KServe v2 JSON inference request per model
(DIR2/<name>.json, batch 1). The copies in tools/examples/ were made this way.
--verify loads every written model back and runs its example request through it
(from --write-examples DIR2, else from tools/examples/ next to this file).

Used by developers, tests and benchmarks that need real models; runs with Debian's
/usr/bin/python3 (python3-torch 1.13, python3-torchvision, python3-xgboost).
"""

import argparse
import json
import os
import shutil
import sys
import time

import numpy as np

MODEL_NAMES = ("fraud_xgb", "resnet18", "text_classifier", "mlp")
SEED = 20240607
TORCH_THREADS = 2

# ---------------------------------------------------------------------------------
# fraud_xgb: synthetic card transactions.

FRAUD_FEATURES = (
    "amount",                     # 0  transaction amount, USD
    "hour_of_day",                # 1  0..23
    "day_of_week",                # 2  0..6
    "merchant_risk_score",        # 3  0..1
    "merchant_category",          # 4  category code 0..19
    "txn_count_1h",               # 5  card velocity, last hour
    "txn_count_24h",              # 6  card velocity, last day
    "amount_sum_24h",             # 7  USD spent in the last day
    "avg_amount_30d",             # 8  card's average amount, USD
    "amount_to_avg_ratio",        # 9  amount / avg_amount_30d
    "distance_from_home_km",      # 10
    "distance_from_last_txn_km",  # 11
    "minutes_since_last_txn",     # 12
    "is_foreign",                 # 13 0/1
    "card_present",               # 14 0/1
    "is_online",                  # 15 0/1
    "account_age_days",           # 16
    "customer_age_years",         # 17
    "failed_pin_attempts_24h",    # 18
    "device_changed_7d",          # 19 0/1
    "ip_risk_score",              # 20 0..1
    "chargebacks_12m",            # 21
) + tuple("noise_%d" % i for i in range(10))  # 22..31 carry no signal
assert len(FRAUD_FEATURES) == 32


def fraud_features(rng, n):
    """Returns an [n, 32] float32 matrix of plausible transactions."""
    x = np.empty((n, 32), dtype=np.float64)
    avg = rng.lognormal(mean=3.6, sigma=0.7, size=n)  # ~ $37 typical average
    ratio = rng.lognormal(mean=0.0, sigma=0.8, size=n)
    online = (rng.random(n) < 0.35).astype(np.float64)
    foreign = (rng.random(n) < 0.06).astype(np.float64)
    card_present = np.where(online == 1, 0.0, (rng.random(n) < 0.9).astype(np.float64))
    hour = np.floor(np.mod(rng.normal(14.0, 5.0, size=n), 24.0))
    txn_1h = rng.poisson(0.4, size=n).astype(np.float64)
    txn_24h = txn_1h + rng.poisson(2.5, size=n)
    amount = avg * ratio
    x[:, 0] = amount
    x[:, 1] = hour
    x[:, 2] = rng.integers(0, 7, size=n)
    x[:, 3] = rng.beta(1.2, 6.0, size=n)
    x[:, 4] = rng.integers(0, 20, size=n)
    x[:, 5] = txn_1h
    x[:, 6] = txn_24h
    x[:, 7] = amount + txn_24h * avg * rng.lognormal(0.0, 0.5, size=n)
    x[:, 8] = avg
    x[:, 9] = ratio
    x[:, 10] = rng.lognormal(2.0, 1.3, size=n) + foreign * rng.uniform(300, 6000, size=n)
    x[:, 11] = rng.lognormal(1.5, 1.5, size=n)
    x[:, 12] = rng.exponential(600.0, size=n)
    x[:, 13] = foreign
    x[:, 14] = card_present
    x[:, 15] = online
    x[:, 16] = rng.gamma(2.0, 600.0, size=n)
    x[:, 17] = np.clip(rng.normal(44.0, 15.0, size=n), 18.0, 95.0)
    x[:, 18] = rng.poisson(0.08, size=n)
    x[:, 19] = (rng.random(n) < 0.07).astype(np.float64)
    x[:, 20] = rng.beta(1.0, 8.0, size=n)
    x[:, 21] = rng.poisson(0.05, size=n)
    x[:, 22:] = rng.normal(0.0, 1.0, size=(n, 10))
    return x.astype(np.float32)


def fraud_logit(x):
    """The hidden nonlinear rule behind the labels (before label noise)."""
    x = x.astype(np.float64)
    night = (x[:, 1] <= 5).astype(np.float64)
    big_jump = (x[:, 9] > 3.0).astype(np.float64)
    z = -4.3
    z = z + 2.5 * big_jump * (0.5 + night)
    z = z + 0.8 * np.log(x[:, 9])
    z = z + 3.0 * x[:, 20]
    z = z + 7.0 * np.maximum(x[:, 3] - 0.25, 0.0)
    z = z + 1.2 * np.log1p(x[:, 5])
    z = z + 2.0 * x[:, 13] * (1.0 - x[:, 14])
    z = z + 1.0 * np.tanh(x[:, 10] / 800.0)
    z = z + 1.2 * np.minimum(x[:, 18], 3.0)
    z = z + 6.0 * x[:, 19] * x[:, 20]
    z = z + 1.5 * (x[:, 12] < 5.0) * (x[:, 11] > 50.0)
    z = z - 0.5 * np.log10(x[:, 16] + 1.0)
    z = z + 1.0 * np.minimum(x[:, 21], 2.0)
    return z


def auc(labels, scores):
    """ROC AUC with ties averaged (no sklearn on Debian's python)."""
    order = np.argsort(scores, kind="mergesort")
    s = scores[order]
    ranks = np.empty(len(s), dtype=np.float64)
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[i]:
            j += 1
        ranks[i:j + 1] = (i + j) / 2.0 + 1.0
        i = j + 1
    r = np.empty_like(ranks)
    r[order] = ranks
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (r[pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def export_fraud_xgb(version_dir):
    import xgboost as xgb

    rng = np.random.default_rng(SEED)
    n = 20000
    x = fraud_features(rng, n)
    z = fraud_logit(x) + rng.normal(0.0, 0.6, size=n)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-z))).astype(np.float32)
    n_train = 16000
    dtrain = xgb.DMatrix(x[:n_train], label=y[:n_train], nthread=2)
    dvalid = xgb.DMatrix(x[n_train:], label=y[n_train:], nthread=2)
    params = {
        "objective": "binary:logistic",
        "max_depth": 6,
        "eta": 0.05,
        "subsample": 0.8,
        "colsample_bytree": 0.8,
        "min_child_weight": 2.0,
        "tree_method": "hist",
        "eval_metric": "auc",
        "nthread": 2,
        "seed": SEED,
    }
    booster = xgb.train(params, dtrain, num_boost_round=200, verbose_eval=False)
    booster.save_model(os.path.join(version_dir, "model.json"))
    p_train = booster.predict(dtrain)
    p_valid = booster.predict(dvalid)
    y_valid = y[n_train:]
    print("  fraud rate %.2f%% (%d of %d rows); 200 trees, max_depth 6"
          % (100.0 * y.mean(), int(y.sum()), n))
    print("  AUC train %.4f, holdout %.4f; holdout accuracy at 0.5: %.4f"
          % (auc(y[:n_train], p_train), auc(y_valid, p_valid),
             ((p_valid > 0.5) == (y_valid == 1)).mean()))


FRAUD_CONFIG = """\
# Fraud scoring on card transactions (synthetic data, made by
# tools/make_example_models.py). input__0 holds 32 features in this order:
{feature_comment}
# output__0 is the probability of fraud.
name: "fraud_xgb"
backend: "xgboost"
max_batch_size: 4096
input [
  {{
    name: "input__0"
    data_type: TYPE_FP32
    dims: [ 32 ]
  }}
]
output [
  {{
    name: "output__0"
    data_type: TYPE_FP32
    dims: [ 1 ]
  }}
]
dynamic_batching {{
  max_queue_delay_microseconds: 500
}}
instance_group [
  {{
    # No count: Ferry runs one instance per core, one intra-op thread each.
    kind: KIND_CPU
  }}
]
"""


def fraud_config():
    lines = []
    for i in range(0, 32, 4):
        lines.append("#   " + ", ".join(
            "%d %s" % (j, FRAUD_FEATURES[j]) for j in range(i, i + 4)))
    return FRAUD_CONFIG.format(feature_comment="\n".join(lines))


# ---------------------------------------------------------------------------------
# Torch models. Imports stay inside functions so --only fraud_xgb needs no torch.

_torch_ready = False


def torch_setup():
    """Imports torch and sets its thread counts, once per process (setting the
    interop count twice aborts the process)."""
    global _torch_ready
    import torch
    if not _torch_ready:
        torch.set_num_threads(TORCH_THREADS)
        torch.set_num_interop_threads(1)
        _torch_ready = True
    return torch


def export_resnet18(version_dir):
    torch = torch_setup()
    import torchvision

    torch.manual_seed(SEED)
    model = torchvision.models.resnet18(weights=None).eval()
    example = torch.zeros(1, 3, 224, 224)
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    traced.save(os.path.join(version_dir, "model.pt"))


RESNET18_CONFIG = """\
# ResNet-18 (torchvision, random weights from a fixed seed), traced TorchScript.
# input__0: one normalized RGB image, CHW; output__0: 1000 class logits.
name: "resnet18"
platform: "pytorch_libtorch"
max_batch_size: 8
input [
  {
    name: "input__0"
    data_type: TYPE_FP32
    dims: [ 3, 224, 224 ]
  }
]
output [
  {
    name: "output__0"
    data_type: TYPE_FP32
    dims: [ 1000 ]
  }
]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 5000
}
instance_group [
  {
    # No count: Ferry runs one instance per core, one intra-op thread each.
    kind: KIND_CPU
  }
]
"""

TEXT_VOCAB = 1000
TEXT_MAX_LEN = 128


def make_text_classifier_module():
    """Builds the TextClassifier class (needs torch imported first)."""
    import torch
    from torch import nn

    class EncoderLayer(nn.Module):
        """Post-norm transformer encoder layer (as nn.TransformerEncoderLayer with
        norm_first=False, ReLU, dropout 0), written out so that padded keys get
        exactly zero attention weight and no fast path changes the numerics."""

        def __init__(self, d_model: int, n_heads: int, d_ff: int):
            super().__init__()
            self.n_heads = n_heads
            self.d_head = d_model // n_heads
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.out = nn.Linear(d_model, d_model)
            self.ff1 = nn.Linear(d_model, d_ff)
            self.ff2 = nn.Linear(d_ff, d_model)
            self.norm1 = nn.LayerNorm(d_model)
            self.norm2 = nn.LayerNorm(d_model)

        def forward(self, x: torch.Tensor, key_bias: torch.Tensor) -> torch.Tensor:
            # x: [B, L, D]; key_bias: [B, 1, 1, L], 0 for tokens, -1e9 for padding.
            b, n, d = x.shape
            qkv = self.qkv(x).view(b, n, 3, self.n_heads, self.d_head)
            qkv = qkv.permute(2, 0, 3, 1, 4)  # [3, B, H, L, Dh]
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = torch.matmul(q, k.transpose(-2, -1)) * (self.d_head ** -0.5)
            weights = torch.softmax(scores + key_bias, dim=-1)
            attn = torch.matmul(weights, v).transpose(1, 2).reshape(b, n, d)
            x = self.norm1(x + self.out(attn))
            return self.norm2(x + self.ff2(torch.relu(self.ff1(x))))

    class TextClassifier(nn.Module):
        """Token ids [B, L] + attention mask [B, L] (1 token, 0 padding) -> [B, 2]
        logits. Mean-pools the encoder output over unmasked tokens, so padding
        never changes a sequence's logits. L may be 1..128."""

        def __init__(self):
            super().__init__()
            d_model, n_heads, n_layers, d_ff = 64, 4, 2, 128
            self.max_len = TEXT_MAX_LEN
            self.tok = nn.Embedding(TEXT_VOCAB, d_model)
            self.pos = nn.Embedding(TEXT_MAX_LEN, d_model)
            self.layers = nn.ModuleList(
                [EncoderLayer(d_model, n_heads, d_ff) for _ in range(n_layers)])
            self.head = nn.Linear(d_model, 2)

        def forward(self, input_ids: torch.Tensor,
                    attention_mask: torch.Tensor) -> torch.Tensor:
            if input_ids.dim() != 2 or attention_mask.shape != input_ids.shape:
                raise ValueError("input_ids and attention_mask must both be [batch, seq]")
            n = input_ids.size(1)
            if n < 1 or n > self.max_len:
                raise ValueError("sequence length must be 1..128")
            positions = torch.arange(n, device=input_ids.device)
            x = self.tok(input_ids) + self.pos(positions).unsqueeze(0)
            keep = (attention_mask != 0).to(x.dtype)  # [B, L]
            key_bias = ((1.0 - keep) * -1e9).unsqueeze(1).unsqueeze(2)
            for layer in self.layers:
                x = layer(x, key_bias)
            pooled = (x * keep.unsqueeze(-1)).sum(dim=1)
            pooled = pooled / keep.sum(dim=1, keepdim=True).clamp(min=1.0)
            return self.head(pooled)

    return TextClassifier


def export_text_classifier(version_dir):
    torch = torch_setup()
    torch.manual_seed(SEED)
    model = make_text_classifier_module()().eval()
    scripted = torch.jit.script(model)
    path = os.path.join(version_dir, "model.pt")
    scripted.save(path)
    check_text_classifier(torch.jit.load(path))


def check_text_classifier(m):
    """Checks the saved model on any batch size and length, and that padding does
    not change logits. Raises AssertionError on failure."""
    import torch

    g = torch.Generator().manual_seed(SEED + 1)
    with torch.no_grad():
        for batch, length in ((1, 1), (3, 7), (32, 128), (5, 128), (2, 64)):
            ids = torch.randint(1, TEXT_VOCAB, (batch, length), generator=g)
            out = m(ids, torch.ones_like(ids))
            assert out.shape == (batch, 2) and out.dtype == torch.float32, out.shape
            assert torch.isfinite(out).all()
        worst = 0.0
        for length in (1, 12, 77, 127):
            ids = torch.randint(1, TEXT_VOCAB, (1, length), generator=g)
            alone = m(ids, torch.ones_like(ids))
            padded = torch.zeros(1, TEXT_MAX_LEN, dtype=torch.int64)
            padded[0, :length] = ids[0]
            mask = torch.zeros_like(padded)
            mask[0, :length] = 1
            # Pad with zeros and, separately, with junk ids: neither may matter.
            junk = padded.clone()
            junk[0, length:] = 999
            for p in (padded, junk):
                worst = max(worst, (m(p, mask) - alone).abs().max().item())
            # A sequence inside a mixed batch matches the sequence alone.
            other = torch.randint(1, TEXT_VOCAB, (1, TEXT_MAX_LEN), generator=g)
            both = m(torch.cat([padded, other]),
                     torch.cat([mask, torch.ones_like(other)]))
            worst = max(worst, (both[0:1] - alone).abs().max().item())
        assert worst < 1e-5, "padding changed logits by %g" % worst
        try:
            m(torch.ones(1, TEXT_MAX_LEN + 1, dtype=torch.int64),
              torch.ones(1, TEXT_MAX_LEN + 1, dtype=torch.int64))
            raise AssertionError("length 129 was accepted")
        except torch.jit.Error:
            pass
    print("  checked: batch 1..32, lengths 1..128, padding changes logits by <= %.2g"
          % worst)


TEXT_CONFIG = """\
# Two-class text classifier: small transformer encoder (vocab 1000, d_model 64,
# 4 heads, 2 layers, ff 128, positions up to 128), random weights from a fixed seed.
# input_ids: token ids, 0 is padding; attention_mask: 1 token, 0 padding.
# Sequences of 1..128 tokens; padding does not change a sequence's logits.
name: "text_classifier"
platform: "pytorch_libtorch"
max_batch_size: 32
input [
  {
    name: "input_ids"
    data_type: TYPE_INT64
    dims: [ -1 ]
  },
  {
    name: "attention_mask"
    data_type: TYPE_INT64
    dims: [ -1 ]
  }
]
output [
  {
    name: "logits"
    data_type: TYPE_FP32
    dims: [ 2 ]
  }
]
dynamic_batching {
  max_queue_delay_microseconds: 2000
}
instance_group [
  {
    # No count: Ferry runs one instance per core, one intra-op thread each.
    kind: KIND_CPU
  }
]
parameters {
  key: "pad_value"
  value: { string_value: "0" }
}
"""


def make_mlp_module():
    import torch
    from torch import nn

    class Mlp(nn.Module):
        """64 -> 256 -> 256 -> 1 with ReLU."""

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(64, 256)
            self.fc2 = nn.Linear(256, 256)
            self.fc3 = nn.Linear(256, 1)

        def forward(self, input__0: torch.Tensor) -> torch.Tensor:
            h = torch.relu(self.fc1(input__0))
            h = torch.relu(self.fc2(h))
            return self.fc3(h)

    return Mlp


def export_mlp(version_dir):
    torch = torch_setup()
    torch.manual_seed(SEED)
    scripted = torch.jit.script(make_mlp_module()().eval())
    scripted.save(os.path.join(version_dir, "model.pt"))


MLP_CONFIG = """\
# Multilayer perceptron 64 -> 256 -> 256 -> 1 (ReLU), random weights from a fixed
# seed, scripted TorchScript.
name: "mlp"
platform: "pytorch_libtorch"
max_batch_size: 1024
input [
  {
    name: "input__0"
    data_type: TYPE_FP32
    dims: [ 64 ]
  }
]
output [
  {
    name: "output__0"
    data_type: TYPE_FP32
    dims: [ 1 ]
  }
]
dynamic_batching {
  max_queue_delay_microseconds: 500
}
instance_group [
  {
    # No count: Ferry runs one instance per core, one intra-op thread each.
    kind: KIND_CPU
  }
]
"""

EXPORTERS = {
    "fraud_xgb": (export_fraud_xgb, fraud_config, "model.json"),
    "resnet18": (export_resnet18, lambda: RESNET18_CONFIG, "model.pt"),
    "text_classifier": (export_text_classifier, lambda: TEXT_CONFIG, "model.pt"),
    "mlp": (export_mlp, lambda: MLP_CONFIG, "model.pt"),
}


def write_model(repo, name):
    """Writes repo/<name> via a temporary folder, then swaps it into place."""
    export, config, _ = EXPORTERS[name]
    final_dir = os.path.join(repo, name)
    tmp_dir = os.path.join(repo, ".%s.tmp-%d" % (name, os.getpid()))
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(os.path.join(tmp_dir, "1"))
    try:
        export(os.path.join(tmp_dir, "1"))
        with open(os.path.join(tmp_dir, "config.pbtxt"), "w") as f:
            f.write(config())
        if os.path.lexists(final_dir):
            shutil.rmtree(final_dir)
        os.rename(tmp_dir, final_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


# ---------------------------------------------------------------------------------
# Example requests (KServe v2 JSON, batch 1).

def example_requests():
    """Returns {model name: request dict}; deterministic."""
    rng = np.random.default_rng(SEED + 7)
    examples = {}

    # A suspicious transaction: big jump over the card's average, at night,
    # card not present, abroad, risky merchant.
    x = fraud_features(rng, 1)[0].astype(np.float64)
    x[0], x[8], x[9] = 912.40, 48.15, 912.40 / 48.15
    x[7] = 912.40 + 3 * 48.15
    x[1], x[3], x[5], x[6] = 3.0, 0.71, 4.0, 9.0
    x[10], x[13], x[14], x[15] = 5120.0, 1.0, 0.0, 1.0
    examples["fraud_xgb"] = {
        "id": "example-1",
        "inputs": [{"name": "input__0", "shape": [1, 32], "datatype": "FP32",
                    "data": [round(float(v), 4) for v in x]}],
    }

    # A smooth synthetic picture (sky gradient, a disc, a checkered floor), in
    # [0, 1], normalized with ImageNet's mean/std, rounded to 2 decimals.
    h = np.arange(224, dtype=np.float64)[:, None]
    w = np.arange(224, dtype=np.float64)[None, :]
    disc = ((h - 80.0) ** 2 + (w - 140.0) ** 2 < 40.0 ** 2).astype(np.float64)
    floor = (h > 150).astype(np.float64)
    checker = ((np.floor(h / 16) + np.floor(w / 16)) % 2)
    sky = (1.0 - floor) * (1.0 - disc)
    rgb = np.stack([
        sky * (0.35 + 0.2 * h / 150) + disc * 0.95 + floor * (0.3 + 0.4 * checker),
        sky * (0.55 + 0.2 * h / 150) + disc * 0.8 + floor * (0.25 + 0.35 * checker),
        sky * (0.9 - 0.1 * h / 150) + disc * 0.2 + floor * (0.2 + 0.3 * checker),
    ])
    mean = np.array([0.485, 0.456, 0.406])[:, None, None]
    std = np.array([0.229, 0.224, 0.225])[:, None, None]
    img = np.round((np.clip(rgb, 0.0, 1.0) - mean) / std, 2)
    examples["resnet18"] = {
        "id": "example-1",
        "inputs": [{"name": "input__0", "shape": [1, 3, 224, 224], "datatype": "FP32",
                    "data": [float(v) + 0.0 for v in img.reshape(-1)]}],
    }

    ids = [int(v) for v in rng.integers(1, TEXT_VOCAB, size=12)]
    examples["text_classifier"] = {
        "id": "example-1",
        "inputs": [
            {"name": "input_ids", "shape": [1, 12], "datatype": "INT64", "data": ids},
            {"name": "attention_mask", "shape": [1, 12], "datatype": "INT64",
             "data": [1] * 12},
        ],
    }

    examples["mlp"] = {
        "id": "example-1",
        "inputs": [{"name": "input__0", "shape": [1, 64], "datatype": "FP32",
                    "data": [round(float(v), 4) for v in rng.normal(0.0, 1.0, 64)]}],
    }
    return examples


def write_examples(out_dir, names):
    os.makedirs(out_dir, exist_ok=True)
    examples = example_requests()
    for name in names:
        path = os.path.join(out_dir, name + ".json")
        with open(path + ".tmp", "w") as f:
            json.dump(examples[name], f, separators=(",", ":"))
            f.write("\n")
        os.replace(path + ".tmp", path)
        print("wrote %s (%d bytes)" % (path, os.path.getsize(path)))


# ---------------------------------------------------------------------------------
# Verification: load each model back, run its example request.

def verify(repo, examples_dir, names):
    np_types = {"FP32": np.float32, "INT64": np.int64}
    for name in names:
        with open(os.path.join(examples_dir, name + ".json")) as f:
            request = json.load(f)
        inputs = {t["name"]: np.asarray(t["data"], dtype=np_types[t["datatype"]])
                  .reshape(t["shape"]) for t in request["inputs"]}
        model_file = os.path.join(repo, name, "1", EXPORTERS[name][2])
        order = (("input_ids", "attention_mask") if name == "text_classifier"
                 else ("input__0",))
        if name == "fraud_xgb":
            import xgboost as xgb
            booster = xgb.Booster(model_file=model_file, params={"nthread": 2})

            def run(arrays):
                return booster.inplace_predict(arrays[0]).reshape(-1, 1)
        else:
            torch = torch_setup()
            m = torch.jit.load(model_file)

            def run(arrays):
                with torch.no_grad():
                    return m(*[torch.from_numpy(a) for a in arrays]).numpy()
        out = run([inputs[k] for k in order])
        # The same request three times in one batch gives the same rows.
        out3 = run([np.ascontiguousarray(np.repeat(inputs[k], 3, axis=0))
                    for k in order])
        assert out3.shape[0] == 3 and np.allclose(out3, out, atol=1e-5), name
        if name == "fraud_xgb":
            shown = "output__0 = %s (probability of fraud)" % out.tolist()
        elif name == "resnet18":
            top = np.argsort(-out[0])[:3]
            shown = "output__0 %s, top-3 classes %s logits %s" % (
                list(out.shape), top.tolist(),
                [round(float(out[0, i]), 4) for i in top])
        else:
            shown = "%s %s = %s" % ("logits" if name == "text_classifier"
                                    else "output__0", list(out.shape),
                                    np.round(out, 5).tolist())
        assert np.isfinite(out).all(), name
        print("verify %-16s %s" % (name, shown))


def main(argv):
    # TorchScript writes some module constants in set order; a fixed hash seed makes
    # the saved files byte-identical from run to run.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", help="model repository folder (created if missing)")
    parser.add_argument("--only", action="append", choices=MODEL_NAMES,
                        help="write only this model (repeatable); default: all")
    parser.add_argument("--write-examples", metavar="DIR2",
                        help="also write DIR2/<model>.json example requests")
    parser.add_argument("--verify", action="store_true",
                        help="load the models back and run the example requests")
    args = parser.parse_args(argv)
    names = [n for n in MODEL_NAMES if not args.only or n in args.only]

    os.makedirs(args.repo, exist_ok=True)
    start = time.monotonic()
    for name in names:
        t0 = time.monotonic()
        print("%s:" % name)
        write_model(args.repo, name)
        model_dir = os.path.join(args.repo, name)
        size = os.path.getsize(os.path.join(model_dir, "1", EXPORTERS[name][2]))
        print("  wrote %s (%.1f KiB) in %.2f s"
              % (model_dir, size / 1024.0, time.monotonic() - t0))
    print("all models in %.2f s" % (time.monotonic() - start))

    examples_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")
    if args.write_examples:
        examples_dir = args.write_examples
        write_examples(examples_dir, names)
    if args.verify:
        verify(args.repo, examples_dir, names)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
