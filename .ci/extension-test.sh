#!/usr/bin/env bash
# Everything CI runs for the VS Code extension, in order: install, typecheck, lint, unit tests,
# build, package (.vsix), the protocol tests against the real daemon and the real ACP agent
# (`smol-instruments acp` driven by the official ACP TypeScript client), and the end-to-end tests in
# real VS Code (code-server in Chromium, installed by .ci/code-server.sh): the scripted model's
# story, and a question answered by the embedded default model with its trace in Phoenix
# (Phoenix from .ci/phoenix.sh, the model from .ci/model.sh; both instant once cached).
#
#   bash .ci/extension-test.sh            # all of it; a missing prerequisite of e2e is a failure
#   SMOL_SKIP_E2E=1 bash .ci/extension-test.sh   # everything but the editor
#
# Screenshots and logs of the end-to-end run: test-artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '[extension] %s\n' "$*" >&2; }
timed() {
  local name="$1"; shift
  local started=$SECONDS
  step "$name"
  "$@"
  step "$name: $((SECONDS - started)) s"
}

install_node_modules() {
  # npm ci wipes node_modules; skip it when the lock file is what was installed last time.
  local stamp=node_modules/.smol-lock-sha256 want
  if [ -f package-lock.json ]; then
    want="$(sha256sum package-lock.json | cut -d' ' -f1)"
    if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && [ -d node_modules ]; then
      step "node_modules up to date"
      return 0
    fi
    npm ci --no-audit --no-fund --loglevel=error
    echo "$want" > "$stamp"
  else
    npm install --no-audit --no-fund --loglevel=error
  fi
}

command -v node >/dev/null || { echo "[extension] Node.js 20 is needed (apt-get install nodejs npm)" >&2; exit 1; }

timed "npm install" install_node_modules
timed "typecheck" npm run --silent typecheck
timed "lint" npm run --silent lint
timed "unit tests" npm run --silent test:unit
timed "build" npm run --silent build
timed "package" npm run --silent package
[ -x .venv/bin/python ] || bash .ci/setup
bash .ci/model.sh qwen2.5-coder-0.5b   # the real model of the ACP protocol test (cached)
timed "protocol test" env SMOL_E2E_REQUIRED=1 npm run --silent test:protocol
if [ "${SMOL_SKIP_E2E:-}" = "1" ]; then
  step "end-to-end test skipped (SMOL_SKIP_E2E=1)"
  exit 0
fi
code_server="$(bash .ci/code-server.sh)"
. .ci/phoenix.sh     # exports SMOL_PHOENIX_PYTHON
bash .ci/model.sh qwen2.5-coder-1.5b   # the main job's default model (about 1.1 GB, cached)
timed "end-to-end test" env SMOL_CODE_SERVER="$code_server" SMOL_E2E_REQUIRED=1 npm run --silent test:e2e
step "screenshots: test-artifacts/"
