#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Black-box tests of `ferry run`: the real binary, the real fraud_xgb example
model, real files, real SIGKILL.

Run by CTest as: /usr/bin/python3 ferry_run_test.py FERRY_BINARY SOURCE_DIR
"""
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

FERRY = None
SOURCE_DIR = None
REPO = None
TMP = None
BIG = None  # the 1 000 000-row input, made once
BIG_ROWS = 1_000_000
FEATURES = 32


def write_csv(path, rows, malformed=()):
    """Rows of 32 features: 20 000 distinct feature rows cycled (enough for a
    tree model), ids 0..rows-1; rows in `malformed` carry a word."""
    rng = np.random.default_rng(11)
    distinct = min(rows, 20_000)
    x = rng.normal(size=(distinct, FEATURES)).astype(np.float32)
    feats = [",".join(f"{v:.5g}" for v in r) for r in x]
    bad = set(malformed)
    with open(path, "w") as f:
        f.write("id," + ",".join(f"f{i}" for i in range(FEATURES)) + "\n")
        block = []
        for i in range(rows):
            if i in bad:
                block.append(f"{i},oops{feats[i % distinct][4:]}\n")
            else:
                block.append(f"{i},{feats[i % distinct]}\n")
            if len(block) == 100_000:
                f.write("".join(block))
                block = []
        f.write("".join(block))


def run(args, **kw):
    return subprocess.run([FERRY, "run", "--model-repository", REPO, "--model", "fraud_xgb",
                           "--id-column", "id", "--progress", "none", *args],
                          capture_output=True, text=True, **kw)


def start(args):
    return subprocess.Popen([FERRY, "run", "--model-repository", REPO, "--model",
                             "fraud_xgb", "--id-column", "id", "--progress", "none", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def wait_for_progress(db, fraction, proc, timeout=120):
    """Blocks until the run's job store shows `fraction` of the records done
    (read from the SQLite file the way any other reader would)."""
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
            row = con.execute("SELECT total, completed + failed FROM jobs").fetchone()
            con.close()
            if row and row[0] > 0 and row[1] >= fraction * row[0]:
                return row[1]
        except sqlite3.Error:
            pass
        time.sleep(0.02)
    return None


def peak_rss_kib(proc):
    """Polls VmHWM of a running process until it exits; returns the last value."""
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    return peak


class FerryRunTest(unittest.TestCase):
    reference = None  # output of an uninterrupted run of BIG

    @classmethod
    def uninterrupted(cls):
        if cls.reference is None:
            out = os.path.join(TMP, "ref.csv")
            proc = start(["--input", BIG, "--output", out])
            cls.reference_rss = peak_rss_kib(proc)
            stdout, stderr = proc.communicate()
            assert proc.returncode == 0, stderr
            cls.reference_summary = stdout
            cls.reference = read(out)
        return cls.reference

    def test_one_million_rows_in_order_and_equal_to_ferry_infer(self):
        ref = self.uninterrupted()
        lines = ref.decode().splitlines()
        self.assertEqual(len(lines), BIG_ROWS + 1)
        self.assertEqual(lines[0], "id,output__0")
        ids = [int(l.split(",", 1)[0]) for l in lines[1:]]
        self.assertEqual(ids, list(range(BIG_ROWS)))
        self.assertIn("1000000 records: 1000000 scored, 0 failed", self.reference_summary)
        # Rows spread over the file give exactly what `ferry infer` gives.
        with open(BIG) as f:
            f.readline()
            picks = {0, 1, 12345, 500000, BIG_ROWS - 1}
            rows = {}
            for i, line in enumerate(f):
                if i in picks:
                    rows[i] = [float(v) for v in line.strip().split(",")[1:]]
        for i, feats in rows.items():
            req = {"inputs": [{"name": "input__0", "shape": [1, FEATURES],
                               "datatype": "FP32", "data": feats}]}
            p = subprocess.run([FERRY, "infer", "--model-repository", REPO, "--model",
                                "fraud_xgb", "--request", "-"], input=json.dumps(req),
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            want = json.loads(p.stdout)["outputs"][0]["data"][0]
            got = float(lines[i + 1].split(",")[1])
            self.assertEqual(np.float32(got), np.float32(want), f"row {i}")

    def test_memory_stays_flat_as_the_file_grows(self):
        self.uninterrupted()
        small = os.path.join(TMP, "small.csv")
        write_csv(small, BIG_ROWS // 10)
        proc = start(["--input", small, "--output", os.path.join(TMP, "small.out.csv")])
        small_rss = peak_rss_kib(proc)
        proc.communicate()
        self.assertEqual(proc.returncode, 0)
        print(f"\npeak RSS: {small_rss} KiB at {BIG_ROWS // 10} rows, "
              f"{self.reference_rss} KiB at {BIG_ROWS} rows", file=sys.stderr)
        # Ten times the records, same memory (chunks and queues are bounded).
        self.assertLess(self.reference_rss, small_rss * 1.3 + 20_000)

    def test_sigkill_three_times_then_resume_gives_identical_output(self):
        ref = self.uninterrupted()
        out = os.path.join(TMP, "killed.csv")
        rng = random.Random(5)
        resumed_from = []
        for attempt in range(3):
            args = ["--input", BIG, "--output", out]
            if attempt > 0:
                args.append("--resume")
            proc = start(args)
            # A random moment, once the run is 20, 40, 60 % of the way (the
            # last 40 % take longer than the 0-0.3 s of extra wait).
            done = wait_for_progress(out + ".ferry-state/jobs.db", 0.2 * (attempt + 1), proc)
            self.assertIsNotNone(done, "the run ended before it could be killed")
            time.sleep(rng.uniform(0.0, 0.3))
            self.assertIsNone(proc.poll(), "the run ended before it could be killed")
            proc.send_signal(signal.SIGKILL)
            stdout, _ = proc.communicate()
            self.assertEqual(proc.returncode, -signal.SIGKILL)
            if attempt > 0:
                resumed_from.append(stdout)
        done = run(["--input", BIG, "--output", out, "--resume"])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("resuming job", done.stdout)
        self.assertEqual(read(out), ref)
        self.assertEqual(read(out + ".errors.jsonl"), b"")
        # Resumes start from the chunks already done, not from zero.
        self.assertTrue(any("resuming job" in s and "(0 of" not in s for s in resumed_from + [done.stdout]),
                        resumed_from + [done.stdout])

    def test_one_percent_malformed_lines_are_reported_and_nothing_is_lost(self):
        rows = 50_000
        bad = sorted(random.Random(3).sample(range(rows), rows // 100))
        path = os.path.join(TMP, "malformed.csv")
        write_csv(path, rows, bad)
        out = os.path.join(TMP, "malformed.out.csv")
        p = run(["--input", path, "--output", out, "--chunk-size", "2000"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"{rows} records: {rows - len(bad)} scored, {len(bad)} failed", p.stdout)
        errors = [json.loads(l) for l in read(out + ".errors.jsonl").decode().splitlines()]
        self.assertEqual([e["line"] for e in errors], [i + 2 for i in bad])
        self.assertEqual([e["id"] for e in errors], [str(i) for i in bad])
        for e in errors:
            self.assertEqual(e["error"]["code"], "invalid_record")
            self.assertIn("is not a number", e["error"]["message"])
        ids = [int(l.split(",", 1)[0]) for l in read(out).decode().splitlines()[1:]]
        self.assertEqual(ids, sorted(set(range(rows)) - set(bad)))

    def test_ctrl_c_stops_cleanly_and_resume_finishes(self):
        ref = self.uninterrupted()
        out = os.path.join(TMP, "interrupted.csv")
        proc = start(["--input", BIG, "--output", out])
        self.assertIsNotNone(wait_for_progress(out + ".ferry-state/jobs.db", 0.3, proc))
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertIn("--resume", stderr)
        again = run(["--input", BIG, "--output", out])
        self.assertEqual(again.returncode, 1)
        self.assertIn("pass --resume", again.stderr)
        done = run(["--input", BIG, "--output", out, "--resume"])
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(read(out), ref)

    def test_errors_name_the_problem(self):
        missing = run(["--input", os.path.join(TMP, "nope.csv"), "--output",
                       os.path.join(TMP, "nope.out.csv")])
        self.assertEqual(missing.returncode, 1)
        self.assertIn("nope.csv", missing.stderr)
        narrow = os.path.join(TMP, "narrow.csv")
        with open(narrow, "w") as f:
            f.write("id,a,b\n1,2,3\n")
        p = run(["--input", narrow, "--output", os.path.join(TMP, "narrow.out.csv")])
        self.assertEqual(p.returncode, 1)
        self.assertIn("input__0", p.stderr)
        p = run(["--input", narrow, "--output", os.path.join(TMP, "n2.csv"),
                 "--columns", "a,zzz"])
        self.assertEqual(p.returncode, 1)
        self.assertIn("zzz", p.stderr)


if __name__ == "__main__":
    FERRY, SOURCE_DIR = sys.argv[1], sys.argv[2]
    del sys.argv[1:3]
    with tempfile.TemporaryDirectory(prefix="ferry-run-test-") as tmp:
        TMP = tmp
        REPO = os.path.join(tmp, "models")
        subprocess.run([os.path.join(SOURCE_DIR, "tools", "make-example-models"), REPO,
                        "--only", "fraud_xgb"], check=True, stdout=subprocess.DEVNULL)
        BIG = os.path.join(tmp, "big.csv")
        write_csv(BIG, BIG_ROWS)
        unittest.main(verbosity=2)
