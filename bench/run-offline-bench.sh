#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Offline scoring: `ferry run` on a CSV of N rows x 32 features with the
# fraud_xgb example (200 trees), against what a user would write instead
# (bench/baselines/pandas_xgboost.py: pandas read_csv in chunks +
# inplace_predict) and against the physical limit (bench/baselines/
# bare_xgboost.py: predict on features already parsed into memory, best batch
# size). Each program runs ROUNDS times, alternating, and the best wall time of
# each is compared as ratios; the outputs of ferry run and of the pandas script
# must be byte-identical. Appends a section to bench/RESULTS.md.
#
#   bench/run-offline-bench.sh [ROWS (default 1000000)] [ROUNDS (default 2)]
#
# About 60 s for 1 M rows on 2 cores once built.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

rows="${1:-1000000}"
rounds="${2:-2}"
bench_build ferry
ferry="${build_dir}/ferry"

tmp="$(mktemp -d -t ferry-offline-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" --only fraud_xgb >/dev/null
model="${tmp}/models/fraud_xgb/1/model.json"
"${python}" "${root}/bench/make_tabular_csv.py" --rows "${rows}" --features 32 "${tmp}/rows.csv"
load_before="$(bench_load run-offline-bench)"


ferry_cmd=("${ferry}" run --model-repository "${tmp}/models" --model fraud_xgb
           --input "${tmp}/rows.csv" --output "${tmp}/ferry.csv" --id-column id --progress none)
pandas_cmd=("${python}" "${root}/bench/baselines/pandas_xgboost.py" --model "${model}"
            --input "${tmp}/rows.csv" --output "${tmp}/pandas.csv" --id-column id)
bare_cmd=("${python}" "${root}/bench/baselines/bare_xgboost.py" --model "${model}"
          --input "${tmp}/rows.csv" --id-column id)

ferry_times=() pandas_times=() bare_times=()
for ((r = 1; r <= rounds; r++)); do
  rm -rf "${tmp}/ferry.csv" "${tmp}/ferry.csv.ferry-state"
  bench_wall t "${ferry_cmd[@]}" >"${tmp}/ferry.out" 2>&1 || { cat "${tmp}/ferry.out" >&2; exit 1; }
  ferry_times+=("${t}")
  echo "round ${r}: ferry run ${t} s" >&2
  bench_wall t "${pandas_cmd[@]}" >"${tmp}/pandas.json"
  pandas_times+=("${t}")
  echo "round ${r}: pandas + xgboost ${t} s ($(cat "${tmp}/pandas.json"))" >&2
  "${bare_cmd[@]}" >"${tmp}/bare.json"
  bare_times+=("$("${python}" -c 'import json,sys; print(json.load(open(sys.argv[1]))["seconds"])' "${tmp}/bare.json")")
  echo "round ${r}: bare predict $(cat "${tmp}/bare.json")" >&2
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

ferry_s="$(bench_min "${ferry_times[@]}")"
pandas_s="$(bench_min "${pandas_times[@]}")"
bare_s="$(bench_min "${bare_times[@]}")"
identical="no"
if cmp -s "${tmp}/ferry.csv" "${tmp}/pandas.csv"; then identical="yes"; fi
speedup="$(awk -v p="${pandas_s}" -v f="${ferry_s}" 'BEGIN { printf "%.2f", p / f }')"
over_bare="$(awk -v b="${bare_s}" -v f="${ferry_s}" 'BEGIN { printf "%.2f", f / b }')"
verdict() { awk -v x="$1" -v t="$2" -v dir="$3" 'BEGIN { ok = dir == "ge" ? x >= t : x <= t; print ok ? "met" : "MISSED" }'; }

show() { local s="$*"; s="${s//${tmp}/\$TMP}"; echo "${s//${root}\//}"; }
summary="ferry run ${ferry_s} s, pandas + xgboost ${pandas_s} s, bare predict ${bare_s} s: ferry run is ${speedup}x faster than the pandas script (target ≥ 2: $(verdict "${speedup}" 2 ge)) and ${over_bare}x bare predict (target ≤ 1.35: $(verdict "${over_bare}" 1.35 le)); outputs byte-identical: ${identical}"
echo "${summary}"
bench_results_init
{
  echo
  echo "## offline: ferry run vs pandas + xgboost vs bare predict, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(bench_machine); load average before ${load_before}, after ${load_after}"
  echo "- commit: $(bench_commit)"
  echo "- command: \`bench/run-offline-bench.sh ${rows} ${rounds}\` (\$TMP: fraud_xgb from tools/make-example-models, \`bench/make_tabular_csv.py --rows ${rows} --features 32\`); best of ${rounds} alternating rounds, whole-process wall time except bare predict (in-process, parsing excluded)"
  echo "  - \`$(show "${ferry_cmd[@]}")\`: ${ferry_times[*]} s"
  echo "  - \`$(show "${pandas_cmd[@]}")\`: ${pandas_times[*]} s; last round's split $(cat "${tmp}/pandas.json")"
  echo "  - \`$(show "${bare_cmd[@]}")\`: ${bare_times[*]} s; last round $(cat "${tmp}/bare.json")"
  echo "- ${rows} records: ${summary}"
} >>"${results}"
echo "run-offline-bench: appended to ${results}" >&2
