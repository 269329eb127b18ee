#!/usr/bin/env bash
# Phoenix (the trace viewer) for the tests, in its OWN virtual environment: it is about
# 850 MB and must never enter the project's .venv. Reused across runs when present and working.
#
#   bash .ci/phoenix.sh      install or check; prints the Python to use on stdout
#   . .ci/phoenix.sh         the same from .ci/test, and exports SMOL_PHOENIX_PYTHON
#
# SMOL_PHOENIX_VENV   where the environment lives (default ~/.cache/smol-instruments/phoenix-venv)
# SMOL_PHOENIX_SPEC   what pip installs (default below; the REST API read-back is checked with it)
# PYTHON              the interpreter that creates the environment (default python3)
#
# tests/support/phoenix.py finds the same environment (or SMOL_PHOENIX_PYTHON) and starts
# `phoenix serve` from it; without it the Phoenix tests skip, or fail when CI is set.

_smol_phoenix_setup() {
  local venv="${SMOL_PHOENIX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/smol-instruments/phoenix-venv}"
  local spec="${SMOL_PHOENIX_SPEC:-arize-phoenix>=20,<21}"
  local python="${PYTHON:-python3}"
  local stamp="$venv/.smol-phoenix-spec"
  local started

  # Importing Phoenix takes about 15 s: the quick check reads the installed version instead.
  if [ -x "$venv/bin/python" ] && [ -x "$venv/bin/phoenix" ] \
    && [ "$(cat "$stamp" 2>/dev/null)" = "$spec" ] \
    && "$venv/bin/python" -c 'import importlib.metadata as m; m.version("arize-phoenix")' \
      >/dev/null 2>&1; then
    printf '[phoenix] ready: %s\n' "$venv" >&2
  else
    if [ -e "$venv" ] && [ ! -f "$venv/pyvenv.cfg" ] && [ -n "$(ls -A "$venv" 2>/dev/null)" ]; then
      printf '[phoenix] %s exists and is not a virtualenv: not touching it\n' "$venv" >&2
      return 1
    fi
    started=$(date +%s)
    printf '[phoenix] installing %s into %s (about 850 MB, one to two minutes)\n' "$spec" "$venv" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")" || return 1
    "$python" -m venv "$venv" || return 1
    "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null || return 1
    "$venv/bin/python" -m pip install -q "$spec" || return 1
    "$venv/bin/python" -c 'import phoenix.server.main' || return 1
    printf '%s' "$spec" >"$stamp"
    printf '[phoenix] installed in %s s: %s\n' "$(($(date +%s) - started))" "$venv" >&2
  fi
  SMOL_PHOENIX_PYTHON="$venv/bin/python"
  export SMOL_PHOENIX_PYTHON
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  _smol_phoenix_setup
  printf '%s\n' "$SMOL_PHOENIX_PYTHON"
else
  # Sourced by .ci/test: a failed install fails CI, elsewhere the Phoenix tests skip.
  if ! _smol_phoenix_setup; then
    printf '[phoenix] install failed: the Phoenix tests will skip (fail under CI)\n' >&2
    unset -f _smol_phoenix_setup
    [ -z "${CI:-}" ]
  fi
  unset -f _smol_phoenix_setup
fi
