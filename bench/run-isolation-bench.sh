#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs bench/isolation_bench (online p99 with and without an offline job on the
# same model) on the fraud_xgb example and appends the result to
# bench/RESULTS.md, twice: the example's config (Ferry's default layout, one
# instance per core with one intra-op thread each) and the same model as one
# instance using every core.
#
#   bench/run-isolation-bench.sh [BENCH_ARGS...]     (e.g. --rate 4000)
#
# Build dir: $FERRY_BENCH_BUILD_DIR (default build-bench, Release). About 60 s
# once built. Only comparable on an otherwise idle machine. Job workers read,
# parse and format under SCHED_IDLE, as `ferry serve` runs them by default.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_build isolation_bench
bench="${build_dir}/bench/isolation_bench"

tmp="$(mktemp -d -t ferry-isolation-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" --only fraud_xgb >/dev/null
# The default layout (one instance per core, one thread each) and one instance
# with every core.
cp -r "${tmp}/models" "${tmp}/models-1xN"
sed -i 's/^    kind: KIND_CPU/    count: 1\n    kind: KIND_CPU/' "${tmp}/models-1xN/fraud_xgb/config.pbtxt"

echo "load average before: $(bench_load run-isolation-bench)"
for repo in models models-1xN; do
  "${bench}" --model-repository "${tmp}/${repo}" --model fraud_xgb --rate 2000 \
    --seconds 10 --offline-rows 4000000 --worker-sched-idle --record "${results}" "$@"
done
