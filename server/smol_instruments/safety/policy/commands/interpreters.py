"""Interpreters and runners: `python`, `node`, `perl`, `deno`, `uv run`, `coverage run`.

Inline code (`python -c`, `perl -e`, `node -e`, `python -m timeit STMT`) always needs
approval and is denied when it clearly does something deny-worthy; a script file needs
approval; `python -m MODULE` is the program MODULE (`python -m pytest` is pytest); runners
(`uv run CMD`, `poetry run CMD`, `npx PKG`) run CMD, which is judged like any other.
"""

from __future__ import annotations

import re

from ...shell import UNKNOWN, Field
from ..analysis.invocation import Invocation
from ..analysis.state import UNKNOWN_OUTPUT, Call, Output
from ..arguments import canonical, operands
from ..tables import INTERPRETERS, RUNNERS, names
from .registry import handles

_VERSION_FLAGS = ("-v", "--version", "-V", "-h", "--help", "-version", "-VV")


@handles(RUNNERS)
def runner(inv: Invocation) -> Output | None:
    """`uv run CMD`, `poetry run CMD`, `npx PKG`, `npm exec PKG`: CMD is judged."""
    subcommand, value_options = RUNNERS[inv.name]
    args = inv.args
    i = 0
    if subcommand:
        if operands(inv.name, inv.texts)[:1] != [subcommand]:
            return None
        i = next(k for k, arg in enumerate(args) if arg.text == subcommand) + 1
    else:
        inv.emit("approval.package-run")
    inv.claim()
    while i < len(args) and args[i].text.startswith("-"):
        if args[i].text == "--":
            i += 1
            break
        if args[i].text in ("--with", "--with-requirements", "--from", "-p", "--package", "--spec"):
            inv.emit("approval.package-install")
        i += 2 if args[i].text in value_options else 1
    if i < len(args):
        inv.launch(args[i:])
    return UNKNOWN_OUTPUT


@handles(name for name in INTERPRETERS if name != "python")
def interpreter(inv: Invocation) -> Output | None:
    language, code_flags, long_code = INTERPRETERS[inv.name]
    args = inv.args
    if inv.name in ("deno", "bun"):
        if args and args[0].text in ("eval", "-e", "--eval", "-p", "--print"):
            inv.claim()
            if len(args) > 1:
                inv.inline_code(args[1], language)
            return UNKNOWN_OUTPUT
        return deno_bun(inv)
    inv.claim()
    if inv.name in ("perl", "ruby") and any(re.fullmatch(r"-\w*i\S*", a.text) for a in args):
        _in_place_targets(inv)
    i = 0
    while i < len(args):
        text = args[i].text
        if text in long_code:
            if i + 1 < len(args):
                inv.inline_code(args[i + 1], language)
            return UNKNOWN_OUTPUT
        if text.startswith("--"):
            if inv.name == "node" and text == "--test":
                inv.claimed = False
                return None
            i += 1
            continue
        if text == "-":
            return inv.stdin_code(language)
        if text.startswith("-") and len(text) > 1:
            letters = text[1:]
            for k, letter in enumerate(letters):
                if letter in code_flags:
                    rest = letters[k + 1 :]
                    code = Field(rest) if rest else (args[i + 1] if i + 1 < len(args) else None)
                    if code is not None:
                        inv.inline_code(code, language)
                    return UNKNOWN_OUTPUT
            i += 1
            continue
        return inv.run_script(args[i], f"{language} script")
    if any(arg.text in _VERSION_FLAGS for arg in args):
        inv.emit("allow.version")
        return UNKNOWN_OUTPUT
    return inv.stdin_code(language)


def _in_place_targets(inv: Invocation) -> None:
    """`perl -pi -e CODE FILES`: the files after the code are rewritten."""
    args = inv.args
    code_at = next((k for k, arg in enumerate(args) if re.fullmatch(r"-\w*[eE]", arg.text)), None)
    files = (
        [arg for arg in args[code_at + 2 :] if not arg.text.startswith("-")]
        if code_at is not None
        else []
    )
    for arg in files or [Field(UNKNOWN)]:
        inv.write(arg)


_DENO_BUN_OWN = names(
    "test check lint fmt add install i remove x publish upgrade info doc types help completions "
    "pm outdated"
)


def deno_bun(inv: Invocation) -> Output | None:
    found = operands(inv.name, inv.texts)
    if not found or found[0] in _DENO_BUN_OWN:
        return None
    inv.claim()
    if found[0] == "run" and len(found) > 1 and inv.name == "bun":
        script = found[1]
        if script in ("test", "lint", "typecheck", "check", "build") or script.startswith(
            ("test:", "lint:")
        ):
            inv.emit("allow.test-runner")
            return UNKNOWN_OUTPUT
    target = found[1] if found[0] == "run" and len(found) > 1 else found[0]
    inv.emit("approval.run-script", what=f"`{target}`")
    return UNKNOWN_OUTPUT


@handles("python")
def python(inv: Invocation) -> Output | None:
    args = inv.args
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "-":
            inv.claim()
            return inv.stdin_code("python")
        if text.startswith("--"):
            i += 2 if text == "--check-hash-based-pycs" else 1
            continue
        if text.startswith("-") and len(text) > 1:
            letters = text[1:]
            for k, letter in enumerate(letters):
                rest = letters[k + 1 :]
                if letter == "c":
                    inv.claim()
                    code = (
                        Field(rest) if rest else (args[i + 1] if i + 1 < len(args) else Field(""))
                    )
                    inv.inline_code(code, "python")
                    return UNKNOWN_OUTPUT
                if letter == "m":
                    j = i + 1 if not rest else i
                    module = rest or (args[j].text if j < len(args) else "")
                    if not module:
                        return None
                    inv.claim()
                    inv.invoke(Call(canonical(module), args[j + 1 :], inv.display), inv.stdin)
                    return UNKNOWN_OUTPUT
                if letter in "WX":
                    if not rest:
                        i += 1
                    break
            i += 1
            continue
        inv.claim()
        return inv.run_script(args[i], "python script")
    inv.claim()
    if any(arg.text in _VERSION_FLAGS for arg in args):
        inv.emit("allow.version")
        return UNKNOWN_OUTPUT
    return inv.stdin_code("python")


@handles("timeit")
def timeit(inv: Invocation) -> None:
    """`python -m timeit [-s SETUP] STATEMENT...`: every statement is Python code it runs."""
    args = inv.args
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-s", "--setup") and i + 1 < len(args):
            inv.inline_code(args[i + 1], "python")
            i += 2
            continue
        if text.startswith(("-s", "--setup=")) and len(text) > 2:
            inv.inline_code(Field(text.split("=", 1)[1] if "=" in text else text[2:]), "python")
        elif text in ("-n", "--number", "-r", "--repeat", "-u", "--unit"):
            i += 1
        elif not text.startswith("-"):
            inv.inline_code(args[i], "python")
        i += 1


_COVERAGE_VALUES = names("--rcfile --source --include --omit --concurrency --context --data-file")


@handles("coverage")
def coverage(inv: Invocation) -> Output | None:
    """`coverage run -m pytest` runs pytest; `coverage run script.py` runs a script."""
    args = inv.args
    if operands(inv.name, inv.texts)[:1] != ["run"]:
        return None
    i = next(k for k, arg in enumerate(args) if arg.text == "run") + 1
    while i < len(args) and args[i].text.startswith("-") and args[i].text != "-m":
        i += 2 if args[i].text in _COVERAGE_VALUES else 1
    if i < len(args) and args[i].text == "-m" and i + 1 < len(args):
        inv.claim()
        inv.invoke(Call(canonical(args[i + 1].text), args[i + 2 :], inv.display), inv.stdin)
        return UNKNOWN_OUTPUT
    if i < len(args):
        return inv.run_script(args[i], "python script")
    return None
