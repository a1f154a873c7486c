#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The benchmark suite, one row per script, each appending its section to
# bench/RESULTS.md:
#   run-serving-bench.sh    latency overhead, serving efficiency, batching gain over the wire
#   run-batcher-bench.sh    batcher overhead, in-process batching gain and efficiency
#   run-offline-bench.sh    ferry run vs pandas + xgboost vs bare predict (1 M rows)
#   run-isolation-bench.sh  online p99 with and without an offline job
# About 12 minutes on 2 cores once build-bench/ is built (the first build adds
# ~10 minutes). Run it on an otherwise idle machine: every script records the
# load average it saw. `bench/soak.sh` (60 s at 1000 connections) is separate.
#
#   bench/run-all.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "${here}/lib.sh"

bench_build ferry engine_bench batcher_bench isolation_bench
start=$(date +%s)
for script in run-serving-bench.sh run-batcher-bench.sh run-offline-bench.sh run-deep-offline-bench.sh run-choices-bench.sh \
              run-isolation-bench.sh; do
  echo "run-all: ${script} ($(( $(date +%s) - start )) s so far)" >&2
  "${here}/${script}"
done
echo "run-all: done in $(( $(date +%s) - start )) s; see ${results}" >&2
