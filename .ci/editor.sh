#!/usr/bin/env bash
# The main job: VS Code with the Smol Instruments extension and its daemon, on a repository.
#
#   bash .ci/editor.sh [REPO]        # default: a scratch copy of extension/sample-project
#   PORT=8081 bash .ci/editor.sh     # code-server's port (default 8080)
#   SMOL_EDITOR=code-server          # force code-server even when a desktop `code` is on PATH
#   bash .ci/editor.sh --which       # print which editor it would open: desktop or code-server
#   bash .ci/editor.sh --folder [REPO]   # print the folder it would open (making the scratch copy)
#
# Sets up what is missing (the Python environment, node_modules, the .vsix, code-server), then:
# with a desktop VS Code (`code` on PATH and a display) it opens REPO in an isolated profile
# with the extension; otherwise it starts code-server on 127.0.0.1:PORT and prints the address
# to open in a browser. Runs in the foreground; Ctrl-C stops the editor it started.
# The model comes from the environment or REPO/.env (MODEL_ID, MODEL_API_BASE, see .env.example).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
PORT="${PORT:-8080}"
CACHE="${SMOL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/smol-instruments}"
PROFILE="$CACHE/editor"

log() { printf '[editor] %s\n' "$*" >&2; }

desktop_code() {
  [ "${SMOL_EDITOR:-}" = "code-server" ] && return 1
  command -v code >/dev/null || return 1
  code --version 2>/dev/null | head -1 | grep -qv 'code-server' || return 1
  [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || [ "$(uname)" = "Darwin" ]
}

# The repository to open: the one given, or a scratch git copy of the sample project (so the
# agent's root is the sample, not this checkout, and accepted patches do not touch the checkout).
open_folder() {
  if [ $# -ge 1 ]; then
    (cd "$1" && pwd)
    return
  fi
  local folder="$ROOT/.ci/cache/sample-project"
  if [ ! -d "$folder/.git" ]; then
    mkdir -p "$folder"
    cp -R extension/sample-project/. "$folder/"
    git -C "$folder" init -q
    git -C "$folder" add -A
    git -C "$folder" -c user.email=sample@smol.invalid -c user.name=sample commit -qm "sample project"
  fi
  echo "$folder"
}

case "${1:-}" in
  --which) if desktop_code; then echo desktop; else echo code-server; fi; exit 0 ;;
  --folder) shift; open_folder "$@"; exit 0 ;;
esac

bash .ci/setup

# node_modules and the .vsix, rebuilt only when the sources changed.
stamp=node_modules/.smol-lock-sha256
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -d node_modules ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing node_modules"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
vsix="$ROOT/smol-instruments.vsix"
if [ ! -f "$vsix" ] || [ -n "$(find package.json esbuild.mjs extension/src extension/webview extension/media -newer "$vsix" -print -quit)" ]; then
  log "packaging the extension"
  npm run --silent package >/dev/null
fi

folder="$(open_folder "$@")"

# One profile for this job: its settings point the extension at this checkout's Python.
write_settings() {
  mkdir -p "$1/User"
  node - "$1/User/settings.json" "$ROOT/.venv/bin/python" <<'EOF'
const fs = require('fs');
const [file, python] = process.argv.slice(2);
let settings = {};
try { settings = JSON.parse(fs.readFileSync(file, 'utf8')); } catch { /* new profile */ }
Object.assign(settings, {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'smolInstruments.pythonPath': python,
});
fs.writeFileSync(file, JSON.stringify(settings, null, 2) + '\n');
EOF
}

if desktop_code; then
  write_settings "$PROFILE/desktop-user"
  args=(--user-data-dir "$PROFILE/desktop-user" --extensions-dir "$PROFILE/desktop-extensions")
  code "${args[@]}" --install-extension "$vsix" --force >/dev/null
  log "opening $folder in VS Code (close the window to end)"
  exec code "${args[@]}" --new-window --wait "$folder"
fi

code_server="$(bash .ci/code-server.sh)"
if curl -s -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null; then
  log "port $PORT is in use; choose another: PORT=8081 bash .ci/editor.sh"
  exit 1
fi
write_settings "$PROFILE/user-data"
mkdir -p "$PROFILE/extensions"
printf 'auth: none\ncert: false\n' > "$PROFILE/config.yaml"
common=(--config "$PROFILE/config.yaml" --user-data-dir "$PROFILE/user-data" --extensions-dir "$PROFILE/extensions")
"$code_server" "${common[@]}" --install-extension "$vsix" --force >/dev/null

# Its own process group, so Ctrl-C stops code-server, its extension host and the daemon.
setsid "$code_server" "${common[@]}" --bind-addr "127.0.0.1:$PORT" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust "$folder" \
  >"$PROFILE/code-server.log" 2>&1 &
pid=$!
stop() {
  trap - EXIT INT TERM
  kill -TERM -- "-$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
trap stop EXIT INT TERM

for _ in $(seq 1 150); do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  kill -0 "$pid" 2>/dev/null || { log "code-server exited; see $PROFILE/code-server.log"; exit 1; }
  sleep 0.2
done
query="$(node -p 'encodeURIComponent(process.argv[1])' "$folder")"
log "code-server log: $PROFILE/code-server.log; Ctrl-C stops it"
echo "Open http://127.0.0.1:$PORT/?folder=$query  (Smol Instruments on $folder)"
wait "$pid"
