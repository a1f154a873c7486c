#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Engine-level choices, side by side with bench/engine_bench (see
# bench/choices_bench.py): glibc malloc vs libtcmalloc-minimal4, and 1 instance x
# N threads vs N instances x 1 thread, for fraud_xgb, mlp, resnet18 and
# text_classifier. Appends a section to bench/RESULTS.md. About 4 minutes on 2 cores.
#
#   bench/run-choices-bench.sh [--rounds 2] [--seconds 2]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_build engine_bench
tmp="$(mktemp -d -t ferry-choices-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" >/dev/null
load_before="$(bench_load run-choices-bench)"
header="- machine: $(bench_machine); load average before ${load_before}
- commit: $(bench_commit)
- command: \`bench/run-choices-bench.sh${*:+ $*}\` (\$MODELS: the four examples from tools/make-example-models)"
bench_results_init
"${python}" "${root}/bench/choices_bench.py" --engine-bench "${build_dir}/bench/engine_bench" \
  --models "${tmp}/models" --results "${results}" --header "${header}" "$@"
echo "run-choices-bench: appended to ${results}" >&2
