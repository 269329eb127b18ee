#!/usr/bin/env bash
# A Docker engine and the sandbox image, for CI and for machines without Docker installed.
#
#   bash .ci/docker.sh              install / start the engine, build the image when absent;
#                                   prints `export DOCKER_HOST=...` on stdout (logs on stderr)
#   eval "$(bash .ci/docker.sh env)"  the same, then this shell talks to that engine
#   . .ci/docker.sh                 the same from .ci/test: exports DOCKER_HOST, and
#                                   SMOL_DOCKER_STARTED=1 when it started the engine just now
#   bash .ci/docker.sh stop         stop the engine this script started
#
# An engine that already answers (DOCKER_HOST, /var/run/docker.sock, or ours) is used as is.
# Otherwise, as root: apt-get install docker.io debootstrap, then dockerd in the background
# with its data outside the repository, so the image survives fresh clones on this machine:
#   SMOL_DOCKER_DATA  data root, images   (default /var/lib/smol-instruments/docker)
#   SMOL_DOCKER_RUN   socket, pid file    (default /run/smol-instruments)
#   SMOL_DOCKER_LOG   the engine's log    (default /var/lib/smol-instruments/dockerd.log)
# The image (SANDBOX_IMAGE, default smol-instruments-sandbox:latest) is built offline by
# `python -m smol_instruments.cli.sandbox build` when missing. A second run takes about 1 s.

_smol_docker_log() { printf '[docker] %s\n' "$*" >&2; }

_smol_docker_answers() { # HOST -> 0 when an engine answers there within 5 s
  DOCKER_HOST="$1" timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

_smol_docker_apt() {
  local missing=() pkg sudo=""
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  _smol_docker_log "installing ${missing[*]}"
  if [ ! -f /tmp/.smol-apt-updated ]; then
    $sudo apt-get update -qq && touch /tmp/.smol-apt-updated || return 1
  fi
  DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

_smol_docker_start() { # start our own dockerd and wait until it answers
  local run="$1" data="$2" log="$3" host="unix://$1/docker.sock" i
  if [ "$(id -u)" -ne 0 ]; then
    _smol_docker_log "no Docker engine answers and starting one needs root: run this as root," \
      "or start Docker and set DOCKER_HOST"
    return 1
  fi
  mkdir -p "$run/docker" "$data" "$(dirname "$log")"
  _smol_docker_log "starting dockerd ($host, data in $data, log in $log)"
  setsid nohup dockerd --storage-driver=overlay2 --iptables=false --bridge=none \
    --data-root "$data" --exec-root "$run/docker" -H "$host" --pidfile "$run/docker.pid" \
    >>"$log" 2>&1 </dev/null &
  for i in $(seq 1 60); do
    _smol_docker_answers "$host" && return 0
    sleep 0.5
  done
  _smol_docker_log "dockerd did not answer within 30 s; the end of $log:"
  tail -n 20 "$log" >&2
  return 1
}

_smol_docker_setup() {
  local repo run data log host image python candidate
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  run="${SMOL_DOCKER_RUN:-/run/smol-instruments}"
  data="${SMOL_DOCKER_DATA:-/var/lib/smol-instruments/docker}"
  log="${SMOL_DOCKER_LOG:-/var/lib/smol-instruments/dockerd.log}"
  image="${SANDBOX_IMAGE:-smol-instruments-sandbox:latest}"

  if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
    _smol_docker_apt docker.io debootstrap || return 1
  fi
  host=""
  for candidate in "${DOCKER_HOST:-}" unix:///var/run/docker.sock "unix://$run/docker.sock"; do
    if [ -n "$candidate" ] && _smol_docker_answers "$candidate"; then
      host="$candidate"
      break
    fi
  done
  if [ -z "$host" ]; then
    host="unix://$run/docker.sock"
    _smol_docker_start "$run" "$data" "$log" || return 1
    SMOL_DOCKER_STARTED=1
    export SMOL_DOCKER_STARTED
  fi
  DOCKER_HOST="$host"
  export DOCKER_HOST
  _smol_docker_log "engine $(docker version --format '{{.Server.Version}}' 2>/dev/null) at $host"

  if docker image inspect "$image" >/dev/null 2>&1; then
    _smol_docker_log "image $image present"
  else
    python="$repo/.venv/bin/python"
    [ -x "$python" ] || python="${PYTHON:-python3}"
    _smol_docker_log "image $image missing: building it (offline: about a minute the first time)"
    # stdout too goes to stderr: ours carries only the `export` line.
    (cd "$repo" && "$python" -m smol_instruments.cli.sandbox build) >&2 || return 1
  fi
}

_smol_docker_stop() {
  local run="${SMOL_DOCKER_RUN:-/run/smol-instruments}" pid
  pid="$(cat "$run/docker.pid" 2>/dev/null)" || { _smol_docker_log "no engine of ours runs"; return 0; }
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  _smol_docker_log "stopped dockerd (pid $pid)"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-env}" in
    env | up) _smol_docker_setup && printf 'export DOCKER_HOST=%s\n' "$DOCKER_HOST" ;;
    stop) _smol_docker_stop ;;
    *) echo "usage: bash .ci/docker.sh [env|stop]" >&2; exit 2 ;;
  esac
else
  # Sourced by .ci/test: a failure fails CI; elsewhere the Docker tests skip.
  if ! _smol_docker_setup; then
    _smol_docker_log "no Docker engine: the Docker tests will skip (fail under CI)"
    [ -z "${CI:-}" ]
  fi
fi
