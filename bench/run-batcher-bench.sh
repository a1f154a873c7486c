#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs bench/batcher_bench and appends its results to bench/RESULTS.md.
#
#   bench/run-batcher-bench.sh [BENCH_ARGS...]
#
# Builds the bench if needed (build dir: $FERRY_BENCH_BUILD_DIR, default
# build-bench, Release), writes the fraud_xgb example model and 4096 rows of its
# synthetic features into a temporary directory, then runs the bench twice:
#   1. the full bench with OMP_WAIT_POLICY=passive: the recorded numbers. With
#      XGBoost's default (libgomp spin-waits after every parallel region) the
#      idle OpenMP worker competes with the 256 client threads for the 2 cores;
#   2. the XGBoost closed loops (batching on and off, 3 s each) of the headline
#      layout with OMP_WAIT_POLICY unset, as one comparison line.
# Extra arguments go to both runs (e.g. --duration 3). Takes about 100 s on
# 2 cores once built. Results are only comparable on an otherwise idle machine:
# the load average before the run is recorded with them.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_build batcher_bench
bench="${build_dir}/bench/batcher_bench"

tmp="$(mktemp -d -t ferry-batcher-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" --only fraud_xgb --only mlp >/dev/null
(cd "${root}/tools" && "${python}" -c "
import numpy as np, make_example_models as m
m.fraud_features(np.random.default_rng(1), 4096).astype('<f4').tofile('${tmp}/rows.f32')
np.random.default_rng(2).standard_normal((4096, 64)).astype('<f4').tofile('${tmp}/mlp_rows.f32')")

load_before="$(bench_load run-batcher-bench)"
commit="$(bench_commit)"

main_cmd=(env OMP_WAIT_POLICY=passive "${bench}" --models "${tmp}/models" --rows "${tmp}/rows.f32"
          --markdown "${tmp}/main.md" "$@")
echo "run-batcher-bench: ${main_cmd[*]}" >&2
"${main_cmd[@]}" | tee "${tmp}/main.out"

# The comparison: the headline layout (first of --configs, 1x2 by default),
# batching on and off only, 3 s each; the other arguments as given.
headline="1x2"
cmp_args=()
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --configs) headline="${args[i + 1]%%,*}"; i=$((i + 1)) ;;
    --modes | --duration) i=$((i + 1)) ;;
    --configs=*) headline="${args[i]#--configs=}"; headline="${headline%%,*}" ;;
    --modes=* | --duration=*) ;;
    *) cmp_args+=("${args[i]}") ;;
  esac
done
cmp_cmd=(env -u OMP_WAIT_POLICY "${bench}" --models "${tmp}/models" --rows "${tmp}/rows.f32"
         --skip-identity "${cmp_args[@]}" --configs "${headline}" --modes off,on --duration 3)
echo "run-batcher-bench: ${cmp_cmd[*]}" >&2
"${cmp_cmd[@]}" >"${tmp}/cmp.out"
grep '^BENCH_JSON ' "${tmp}/cmp.out" | sed 's/^BENCH_JSON //' >"${tmp}/cmp.json"

# The MLP (TorchScript) in-process: batching on and off at the default layout.
mlp_cmd=(env OMP_WAIT_POLICY=passive "${bench}" --models "${tmp}/models" --model mlp
         --rows "${tmp}/mlp_rows.f32" --skip-identity --configs 2x1 --modes off,on --duration 3)
echo "run-batcher-bench: ${mlp_cmd[*]}" >&2
"${mlp_cmd[@]}" >"${tmp}/mlp.out"
grep '^BENCH_JSON ' "${tmp}/mlp.out" | sed 's/^BENCH_JSON //' >"${tmp}/mlp.json"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

bench_results_init

# Paths in the recorded commands: the temporary directory and the checkout.
show() { local s="$*"; s="${s//${tmp}/\$TMP}"; echo "${s//${root}\//}"; }
{
  echo
  echo "## batcher_bench, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(bench_machine); load average before the run ${load_before}, after ${load_after}"
  echo "- commit: ${commit}"
  echo "- command: \`bench/run-batcher-bench.sh${*:+ $*}\`, which ran"
  echo "  \`$(show "${main_cmd[@]}")\` (\$TMP: fraud_xgb from tools/make-example-models, 4096 rows of its synthetic features)"
  cat "${tmp}/main.md"
  "${python}" - "${tmp}/cmp.json" "$(show "${cmp_cmd[@]}")" "${tmp}/mlp.json" \
    "$(show "${mlp_cmd[@]}")" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["xgboost"]["configs"][0]
rate = lambda x: "%.1fk" % (x / 1e3)
print("- comparison with OMP_WAIT_POLICY unset (libgomp spin-waits), %s instance(s) × %s thread(s): "
      "on %s rows/s (avg batch %.1f), off %s rows/s, on/off %.1fx; command `%s`"
      % (c["instances"], c["intra_op_threads"], rate(c["on"]["rows_per_s"]), c["on"]["avg_batch"],
         rate(c["off"]["rows_per_s"]), c["gain"], sys.argv[2]))
m = json.load(open(sys.argv[3]))["xgboost"]["configs"][0]
print("- batching gain (mlp, TorchScript, %s client threads, in-process, %s instance(s) × %s "
      "thread(s)): %.1fx (on %s rows/s, avg batch %.1f; off %s rows/s); command `%s`"
      % (m["on"].get("clients", 256), m["instances"], m["intra_op_threads"], m["gain"],
         rate(m["on"]["rows_per_s"]), m["on"]["avg_batch"], rate(m["off"]["rows_per_s"]),
         sys.argv[4]))
EOF
} >>"${results}"
echo "run-batcher-bench: appended to ${results}" >&2
