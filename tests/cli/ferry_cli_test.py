# SPDX-License-Identifier: Apache-2.0
"""Black-box tests of the ferry binary: `ferry models` and `ferry infer` on the real
example models, checked against Debian's python3-torch and python3-xgboost.

Run by CTest as: /usr/bin/python3 ferry_cli_test.py FERRY_BINARY SOURCE_DIR
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

FERRY = None
SOURCE_DIR = None
REPO = None  # example model repository, made once for the whole module


def ferry(*args, stdin=None):
    return subprocess.run([FERRY, *args], input=stdin, capture_output=True, text=True,
                          timeout=300)


def example(name):
    with open(os.path.join(SOURCE_DIR, "tools", "examples", name + ".json")) as f:
        return json.load(f)


def infer(model, request):
    r = ferry("infer", "--model-repository", REPO, "--model", model, "--request", "-",
              stdin=json.dumps(request))
    return r


def as_array(tensor_json):
    return np.array(tensor_json["data"], dtype=np.float64).reshape(tensor_json["shape"])


def request_arrays(request):
    out = {}
    for t in request["inputs"]:
        dtype = np.int64 if t["datatype"] == "INT64" else np.float32
        out[t["name"]] = np.array(t["data"], dtype=dtype).reshape(t["shape"])
    return out


class ModelsCommandTest(unittest.TestCase):
    def test_lists_the_four_example_models_ready_with_their_tensors(self):
        r = ferry("models", "--model-repository", REPO, "--json", "--strict")
        self.assertEqual(r.returncode, 0, r.stderr)
        models = {m["name"]: m for m in json.loads(r.stdout)["models"]}
        self.assertEqual(set(models), {"fraud_xgb", "resnet18", "text_classifier", "mlp"})
        for m in models.values():
            self.assertTrue(m["ready"], m)
            self.assertEqual([v["state"] for v in m["versions"]], ["READY"])
        self.assertEqual(models["fraud_xgb"]["platform"], "xgboost")
        self.assertEqual(models["fraud_xgb"]["inputs"],
                         [{"name": "input__0", "datatype": "FP32", "shape": [-1, 32]}])
        self.assertEqual(models["resnet18"]["outputs"][0]["shape"], [-1, 1000])
        self.assertEqual([i["name"] for i in models["text_classifier"]["inputs"]],
                         ["input_ids", "attention_mask"])

    def test_table_shows_states(self):
        r = ferry("models", "--model-repository", REPO)
        self.assertEqual(r.returncode, 0, r.stderr)
        header, *rows = r.stdout.strip().splitlines()
        self.assertTrue(header.startswith("MODEL"))
        self.assertEqual(len(rows), 4)
        self.assertTrue(all(" READY " in row for row in rows), rows)

    def test_broken_model_sits_unavailable_beside_working_ones(self):
        with tempfile.TemporaryDirectory() as repo:
            shutil.copytree(os.path.join(REPO, "mlp"), os.path.join(repo, "mlp"))
            bad = os.path.join(repo, "bad_dims")
            shutil.copytree(os.path.join(REPO, "mlp"), bad)
            with open(os.path.join(bad, "config.pbtxt")) as f:
                config = f.read().replace('name: "mlp"', 'name: "bad_dims"')
            with open(os.path.join(bad, "config.pbtxt"), "w") as f:
                f.write(config.replace("dims: [ 1 ]", "dims: [ 7 ]"))
            broken = os.path.join(repo, "broken_file")
            os.makedirs(os.path.join(broken, "1"))
            with open(os.path.join(broken, "1", "model.json"), "w") as f:
                f.write("{ not a model")
            r = ferry("models", "--model-repository", repo, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            models = {m["name"]: m for m in json.loads(r.stdout)["models"]}
            self.assertTrue(models["mlp"]["ready"])
            self.assertFalse(models["bad_dims"]["ready"])
            self.assertIn("output 'output__0': config dims [7]",
                          models["bad_dims"]["versions"][0]["reason"])
            self.assertFalse(models["broken_file"]["ready"])
            self.assertIn("model.json", json.dumps(models["broken_file"]))
            strict = ferry("models", "--model-repository", repo, "--strict")
            self.assertEqual(strict.returncode, 1)

    def test_missing_repository_is_an_error(self):
        r = ferry("models", "--model-repository", "/nonexistent/repo")
        self.assertEqual(r.returncode, 1)
        self.assertIn("/nonexistent/repo", r.stderr)


class InferCommandTest(unittest.TestCase):
    def test_xgboost_matches_python_predict(self):
        import xgboost
        request = example("fraud_xgb")
        rows = np.random.default_rng(3).normal(size=(5, 32)).astype(np.float32)
        request["inputs"][0]["shape"] = [5, 32]
        request["inputs"][0]["data"] = rows.ravel().tolist()
        r = infer("fraud_xgb", request)
        self.assertEqual(r.returncode, 0, r.stderr)
        response = json.loads(r.stdout)
        self.assertEqual(response["id"], "example-1")
        self.assertEqual(response["model_version"], "1")
        booster = xgboost.Booster(model_file=os.path.join(REPO, "fraud_xgb", "1", "model.json"))
        want = booster.predict(xgboost.DMatrix(rows))
        got = as_array(response["outputs"][0])
        self.assertEqual(got.shape, (5, 1))
        np.testing.assert_allclose(got[:, 0], want, atol=1e-6)

    def test_torch_models_match_python(self):
        import torch
        for name in ("mlp", "text_classifier", "resnet18"):
            with self.subTest(model=name):
                request = example(name)
                r = infer(name, request)
                self.assertEqual(r.returncode, 0, r.stderr)
                got = as_array(json.loads(r.stdout)["outputs"][0])
                module = torch.jit.load(os.path.join(REPO, name, "1", "model.pt"))
                args = [torch.from_numpy(a) for a in request_arrays(request).values()]
                with torch.no_grad():
                    want = module(*args).numpy()
                np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)

    def test_requested_outputs_are_filtered(self):
        request = example("mlp")
        request["outputs"] = [{"name": "nope"}]
        r = infer("mlp", request)
        self.assertEqual(r.returncode, 1)
        self.assertIn("requested output 'nope'", r.stderr)

    def test_bad_requests_get_errors_naming_the_field(self):
        cases = [
            ("fraud_xgb", {"inputs": [{"name": "input__0", "shape": [1, 31],
                                       "datatype": "FP32", "data": [0.0] * 31}]},
             "input 'input__0': shape [1,31] does not match the model's [-1,32]"),
            ("fraud_xgb", {"inputs": [{"name": "input__0", "shape": [1, 32],
                                       "datatype": "FP64", "data": [0.0] * 32}]},
             "input 'input__0': expected FP32, got FP64"),
            ("fraud_xgb", {"inputs": [{"name": "x", "shape": [1, 32],
                                       "datatype": "FP32", "data": [0.0] * 32}]},
             "unexpected input 'x'"),
            ("text_classifier", {"inputs": [{"name": "input_ids", "shape": [1, 3],
                                             "datatype": "INT64", "data": [1, 2, 3]}]},
             "input 'attention_mask' is missing"),
            ("mlp", {"inputs": [{"name": "input__0", "shape": [1, 64],
                                 "datatype": "FP32", "data": [0.0] * 63}]},
             "data has 63 elements"),
        ]
        for model, request, message in cases:
            with self.subTest(message=message):
                r = infer(model, request)
                self.assertEqual(r.returncode, 1, r.stdout)
                self.assertIn(message, r.stderr)
        r = ferry("infer", "--model-repository", REPO, "--model", "mlp", "--request", "-",
                  stdin="{not json")
        self.assertEqual(r.returncode, 1)
        self.assertIn("not valid JSON", r.stderr)

    def test_unknown_model_and_version(self):
        r = infer("nope", example("mlp"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("model 'nope'", r.stderr)
        r = ferry("infer", "--model-repository", REPO, "--model", "mlp", "--version", "9",
                  "--request", os.path.join(SOURCE_DIR, "tools", "examples", "mlp.json"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("no version 9", r.stderr)

    def test_help_is_useful(self):
        for args in (["--help"], ["models", "--help"], ["infer", "--help"]):
            r = ferry(*args)
            self.assertEqual(r.returncode, 0, args)
            self.assertIn("--model-repository" if args != ["--help"] else "models", r.stdout)
        r = ferry("infer", "--help")
        self.assertIn("Example", r.stdout)


if __name__ == "__main__":
    FERRY, SOURCE_DIR = sys.argv[1], sys.argv[2]
    del sys.argv[1:3]
    with tempfile.TemporaryDirectory(prefix="ferry-cli-test-") as tmp:
        REPO = os.path.join(tmp, "models")
        subprocess.run([os.path.join(SOURCE_DIR, "tools", "make-example-models"), REPO],
                       check=True, stdout=subprocess.DEVNULL)
        unittest.main(verbosity=2)
