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

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${FERRY_BENCH_BUILD_DIR:-${root}/build-bench}"
python="${FERRY_PYTHON:-/usr/bin/python3}"
results="${root}/bench/RESULTS.md"

if [ ! -f "${build_dir}/CMakeCache.txt" ]; then
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  cmake "${generator[@]}" -S "${root}" -B "${build_dir}" -DCMAKE_BUILD_TYPE=Release \
    -DFERRY_BUILD_TESTS=OFF -DFERRY_BUILD_BENCH=ON
fi
cmake --build "${build_dir}" --target batcher_bench
bench="${build_dir}/bench/batcher_bench"

tmp="$(mktemp -d -t ferry-batcher-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" --only fraud_xgb >/dev/null
(cd "${root}/tools" && "${python}" -c "
import numpy as np, make_example_models as m
m.fraud_features(np.random.default_rng(1), 4096).astype('<f4').tofile('${tmp}/rows.f32')")

arch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
cpu_model="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
blas="$(readlink -f "/usr/lib/${arch}/libblas.so.3" 2>/dev/null || echo none)"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="${load_before%% *}" 'BEGIN { exit !(l > 0.5) }'; then
  echo "run-batcher-bench: warning: load average ${load_before}; other work on the machine skews the numbers" >&2
fi
commit="$(git -C "${root}" rev-parse --short HEAD 2>/dev/null || echo unknown)"
changed="$(git -C "${root}" status --porcelain 2>/dev/null | awk '{ n = split($2, p, "/"); print (n > 1 && p[2] != "") ? p[1] "/" p[2] : p[1] }' | sort -u | paste -sd, - | sed 's/,/, /g')"
if [ -n "${changed}" ]; then commit="${commit} + uncommitted changes in ${changed}"; fi

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
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

if [ ! -f "${results}" ]; then
  cat >"${results}" <<'EOF'
# Benchmark results

Appended by the scripts in bench/, newest last; never edited by hand. Each section
says when, on which machine, at which commit and with which exact command its
numbers were taken. Numbers from different machines or under other load are not
comparable, and on the 2-core development VM repeated runs differ by ±15–25%
(see /work/shared/reference/engine-measurements.md), so treat smaller differences
as noise.
EOF
fi

# Paths in the recorded commands: the temporary directory and the checkout.
show() { local s="$*"; s="${s//${tmp}/\$TMP}"; echo "${s//${root}\//}"; }
{
  echo
  echo "## batcher_bench, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(nproc) cores, ${cpu_model}, libblas.so.3 → ${blas}; load average before the run ${load_before}, after ${load_after}"
  echo "- commit: ${commit}"
  echo "- command: \`bench/run-batcher-bench.sh${*:+ $*}\`, which ran"
  echo "  \`$(show "${main_cmd[@]}")\` (\$TMP: fraud_xgb from tools/make-example-models, 4096 rows of its synthetic features)"
  cat "${tmp}/main.md"
  "${python}" - "${tmp}/cmp.json" "$(show "${cmp_cmd[@]}")" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["xgboost"]["configs"][0]
rate = lambda x: "%.1fk" % (x / 1e3)
print("- comparison with OMP_WAIT_POLICY unset (libgomp spin-waits), %s instance(s) × %s thread(s): "
      "on %s rows/s (avg batch %.1f), off %s rows/s, on/off %.1fx; command `%s`"
      % (c["instances"], c["intra_op_threads"], rate(c["on"]["rows_per_s"]), c["on"]["avg_batch"],
         rate(c["off"]["rows_per_s"]), c["gain"], sys.argv[2]))
EOF
} >>"${results}"
echo "run-batcher-bench: appended to ${results}" >&2
