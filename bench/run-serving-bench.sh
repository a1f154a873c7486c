#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Online serving against the physical limit: `ferry serve` driven by `ferry bench`
# (HTTP binary and gRPC) vs bench/engine_bench (the engine alone), in one run —
# latency overhead at concurrency 1, serving efficiency at saturation (fraud_xgb,
# mlp, resnet18), batching gain on ÷ off over the wire, length bucketing on ÷ off
# (text_classifier, lengths 8..128). See bench/serving_bench.py.
# Appends a section to bench/RESULTS.md. About 4 minutes on 2 cores once built.
#
#   bench/run-serving-bench.sh [--efficiency-models fraud_xgb,mlp]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build ferry engine_bench
tmp="$(mktemp -d -t ferry-serving-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" >/dev/null
load_before="$(bench_load run-serving-bench)"
header="- machine: $(bench_machine); load average before ${load_before}
- commit: $(bench_commit)
- command: \`bench/run-serving-bench.sh${*:+ $*}\` (\$MODELS: the examples from tools/make-example-models, plus copies with max_queue_delay 0, without dynamic_batching, and text_classifier with max_padding_waste 1)"
bench_results_init
"${python}" "${root}/bench/serving_bench.py" --ferry "${build_dir}/ferry" \
  --engine-bench "${build_dir}/bench/engine_bench" --models "${tmp}/models" \
  --results "${results}" --header "${header}" "$@"
echo "run-serving-bench: appended to ${results}" >&2
