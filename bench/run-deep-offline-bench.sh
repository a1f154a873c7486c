#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Deep-model offline scoring: `ferry run` with the resnet18 example on N random
# images (bench/make_image_jsonl.py: one KServe v2 request per JSONL line) ÷ a
# python3-torch DataLoader loop over the same file at its best batch size
# (bench/baselines/torch_dataloader.py; the batch size is picked by a first
# sweep, then the timed run uses it). Whole-process wall times, best of ROUNDS
# alternating rounds. Appends a section to bench/RESULTS.md.
#
#   bench/run-deep-offline-bench.sh [IMAGES (default 64)] [ROUNDS (default 2)]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

images="${1:-64}"
rounds="${2:-2}"
bench_build ferry
tmp="$(mktemp -d -t ferry-deep-offline-bench.XXXXXX)"
trap 'rm -rf "${tmp}"' EXIT
"${root}/tools/make-example-models" "${tmp}/models" --only resnet18 >/dev/null
"${python}" "${root}/bench/make_image_jsonl.py" --images "${images}" "${tmp}/images.jsonl"
load_before="$(bench_load run-deep-offline-bench)"

sweep="$("${python}" "${root}/bench/baselines/torch_dataloader.py" \
  --model "${tmp}/models/resnet18/1/model.pt" --input "${tmp}/images.jsonl" \
  --output "${tmp}/torch.jsonl" --batch-sizes 1,4,8,16)"
batch="$("${python}" -c 'import json,sys; print(json.loads(sys.argv[1])["batch_size"])' "${sweep}")"
echo "torch DataLoader sweep: ${sweep}" >&2


ferry_cmd=("${build_dir}/ferry" run --model-repository "${tmp}/models" --model resnet18
           --input "${tmp}/images.jsonl" --output "${tmp}/ferry.jsonl" --progress none)
torch_cmd=("${python}" "${root}/bench/baselines/torch_dataloader.py"
           --model "${tmp}/models/resnet18/1/model.pt" --input "${tmp}/images.jsonl"
           --output "${tmp}/torch.jsonl" --batch-sizes "${batch}")
ferry_times=() torch_times=()
for ((r = 1; r <= rounds; r++)); do
  rm -rf "${tmp}/ferry.jsonl"*
  bench_wall t "${ferry_cmd[@]}" >"${tmp}/ferry.out" 2>&1 || { cat "${tmp}/ferry.out" >&2; exit 1; }
  ferry_times+=("${t}")
  echo "round ${r}: ferry run ${t} s ($(grep -m1 'completed' "${tmp}/ferry.out"))" >&2
  bench_wall t "${torch_cmd[@]}" >"${tmp}/torch.out"
  torch_times+=("${t}")
  echo "round ${r}: torch DataLoader ${t} s ($(cat "${tmp}/torch.out"))" >&2
done
ferry_s="$(bench_min "${ferry_times[@]}")"
torch_s="$(bench_min "${torch_times[@]}")"
speedup="$(awk -v p="${torch_s}" -v f="${ferry_s}" 'BEGIN { printf "%.2f", p / f }')"
lines="$(wc -l <"${tmp}/ferry.jsonl")"
summary="${images} images: ferry run ${ferry_s} s, torch DataLoader (batch ${batch}) ${torch_s} s (whole processes): ferry run is ${speedup}x as fast; ferry wrote ${lines} result lines"
echo "${summary}"
show() { local s="$*"; s="${s//${tmp}/\$TMP}"; echo "${s//${root}\//}"; }
bench_results_init
{
  echo
  echo "## deep offline: ferry run (resnet18) vs a torch DataLoader loop, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(bench_machine); load average before ${load_before}"
  echo "- commit: $(bench_commit)"
  echo "- command: \`bench/run-deep-offline-bench.sh ${images} ${rounds}\` (\$TMP: resnet18 from tools/make-example-models, \`bench/make_image_jsonl.py --images ${images}\`); best of ${rounds} alternating rounds"
  echo "  - \`$(show "${ferry_cmd[@]}")\`: ${ferry_times[*]} s; last: $(grep -m1 'completed' "${tmp}/ferry.out")"
  echo "  - \`$(show "${torch_cmd[@]}")\`: ${torch_times[*]} s; batch-size sweep first: ${sweep}"
  echo "- ${summary}"
} >>"${results}"
echo "run-deep-offline-bench: appended to ${results}" >&2
