#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs bench/isolation_bench (online p99 with and without an offline job on the
# same model) on the fraud_xgb example and appends the result to
# bench/RESULTS.md, twice: the example's config (1 instance x 2 intra-op
# threads) and the same model with intra_op_threads 1.
#
#   bench/run-isolation-bench.sh [BENCH_ARGS...]     (e.g. --rate 4000)
#
# Build dir: $FERRY_BENCH_BUILD_DIR (default build-bench, Release). About 60 s
# once built. Only comparable on an otherwise idle machine.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_build isolation_bench
bench="${build_dir}/bench/isolation_bench"

tmp="$(mktemp -d -t ferry-isolation-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" --only fraud_xgb >/dev/null
cp -r "${tmp}/models" "${tmp}/models-1t"
cat >> "${tmp}/models-1t/fraud_xgb/config.pbtxt" <<'CFG'
parameters { key: "intra_op_threads" value: { string_value: "1" } }
CFG

echo "load average before: $(bench_load run-isolation-bench)"
for repo in models models-1t; do
  "${bench}" --model-repository "${tmp}/${repo}" --model fraud_xgb --rate 2000 \
    --seconds 10 --offline-rows 2000000 --record "${results}" "$@"
done
