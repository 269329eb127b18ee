#!/usr/bin/env bash
# Install code-server (real VS Code in the browser) and Debian's Chromium for the extension's
# end-to-end tests and the main job, without downloads from outside the package registries.
# Quick when already installed (a marker file). Prints the code-server binary path on stdout.
#
#   bash .ci/code-server.sh          # -> ~/.cache/smol-instruments/code-server/bin/code-server
#
# The recipe (measured, see docs/extension.md): code-server's own install downloads ripgrep from
# GitHub, so install it with --ignore-scripts, build the native modules here and use Debian's rg.
set -euo pipefail

VERSION="${CODE_SERVER_VERSION:-4.99.4}"
CACHE="${SMOL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/smol-instruments}"
DIR="$CACHE/code-server"
MARKER="$DIR/.installed-$VERSION"

log() { printf '[code-server] %s\n' "$*" >&2; }

apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  log "apt-get install ${missing[*]}"
  if [ ! -f /tmp/.smol-apt-updated ]; then
    $sudo apt-get update -qq && touch /tmp/.smol-apt-updated
  fi
  DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

apt_install libkrb5-dev libsecret-1-dev pkg-config ripgrep chromium python3 make g++ git

if [ -f "$MARKER" ] && [ -x "$DIR/bin/code-server" ]; then
  echo "$DIR/bin/code-server"
  exit 0
fi

command -v node >/dev/null || { log "Node.js 20 is needed (apt-get install nodejs npm)"; exit 1; }
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" = "20" ] || log "warning: code-server $VERSION is built for Node 20, this is Node $major"

started=$SECONDS
log "installing code-server $VERSION into $DIR (takes a few minutes, once)"
rm -rf "$DIR"
mkdir -p "$DIR"
cd "$DIR"
printf '{ "name": "smol-code-server", "private": true }\n' > package.json
export npm_config_yes=true npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
npm install --no-save --ignore-scripts --loglevel=error "code-server@$VERSION" >&2
npm rebuild argon2 --loglevel=error >&2

VSCODE="$DIR/node_modules/code-server/lib/vscode"
(
  cd "$VSCODE"
  npm install --omit=dev --ignore-scripts --loglevel=error >&2
  mkdir -p node_modules/@vscode/ripgrep/bin
  cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  npm rebuild kerberos node-pty @parcel/watcher @vscode/spdlog native-watchdog @vscode/deviceid \
    --loglevel=error >&2
  [ -e node_modules.asar ] || ln -s node_modules node_modules.asar
  cd extensions
  npm install --omit=dev --ignore-scripts --loglevel=error >&2
)

mkdir -p bin
cat > bin/code-server <<EOF
#!/usr/bin/env bash
exec node "$DIR/node_modules/code-server/out/node/entry.js" "\$@"
EOF
chmod +x bin/code-server
"$DIR/bin/code-server" --version >/dev/null
touch "$MARKER"
log "installed in $((SECONDS - started)) s"
echo "$DIR/bin/code-server"
