#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs dependencies, builds Ferry, writes the example models into example-models/
# and runs Ferry on them: lists the models, then one example inference per model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
REPO=${FERRY_MODEL_REPOSITORY:-example-models}
tools/make-example-models "$REPO"
echo
build/ferry models --model-repository "$REPO"
for model in fraud_xgb mlp text_classifier resnet18; do
  echo
  echo "\$ build/ferry infer --model-repository $REPO --model $model --request tools/examples/$model.json"
  # resnet18 answers with 1000 logits: show the start of each response only.
  build/ferry infer --model-repository "$REPO" --model "$model" \
    --request "tools/examples/$model.json" 2>/dev/null | cut -c 1-400
done
