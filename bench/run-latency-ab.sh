#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Before/after latency of a change on the request path: the `ferry` binary of
# revision REV (built in a temporary worktree, Release; or BEFORE_BINARY, a
# ferry binary built earlier) against the working tree's, at concurrency 1,
# alternating rounds (see bench/latency_ab.py). Appends a section to
# bench/RESULTS.md. About 2 minutes per round once built.
#
#   bench/run-latency-ab.sh REV|BEFORE_BINARY [--rounds N]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rev="${1:?usage: bench/run-latency-ab.sh REV|BEFORE_BINARY [--rounds N]}"
shift
bench_build ferry
tmp="$(mktemp -d -t ferry-latency-ab.XXXXXX)"
cleanup() {
  git -C "${root}" worktree remove --force "${tmp}/before" >/dev/null 2>&1 || true
  rm -rf "${tmp}"
}
trap cleanup EXIT
if [ -x "${rev}" ] && [ -f "${rev}" ]; then
  before="${rev}"
  before_label="the binary ${rev}"
else
  git -C "${root}" worktree add --detach "${tmp}/before" "${rev}" >/dev/null
  FERRY_BENCH_BUILD_DIR="${tmp}/before/build-bench" bash -c \
    "source '${tmp}/before/bench/lib.sh' && bench_build ferry" >/dev/null
  before="${tmp}/before/build-bench/ferry"
  before_label="$(git -C "${root}" rev-parse --short "${rev}")"
fi
"${root}/tools/make-example-models" "${tmp}/models" --only fraud_xgb --only mlp >/dev/null
load_before="$(bench_load run-latency-ab)"
header="- machine: $(bench_machine); load average before ${load_before}
- before: ${before_label}; after: $(bench_commit)
- command: \`bench/run-latency-ab.sh ${rev}${*:+ $*}\` (fraud_xgb and mlp from tools/make-example-models with max_queue_delay 0; \`ferry bench --concurrency 1\`, HTTP \`--binary\` and \`--protocol grpc\`, the after build's generator for both)"
bench_results_init
"${python}" "${root}/bench/latency_ab.py" --before "${before}" \
  --after "${build_dir}/ferry" --models "${tmp}/models" --results "${results}" \
  --header "${header}" "$@"
echo "run-latency-ab: appended to ${results}" >&2
