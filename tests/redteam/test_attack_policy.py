"""Commands the policy lets through that hide other commands: each tries to write a marker in
the victim's home, rewrite `~/.bashrc`, delete a directory outside the repository or print the
private key — through `smol-instruments tool run_cmd`, with no terminal and no `--yes`, so
anything the policy does not allow outright is refused.

All attacks run in one `tool --batch` process (one line each, in order, as the command line
documents), each against its own spot in the victim's home, so each verdict is read from its
own spot and its own result line. An attack passes when its spot is untouched and the secret is
not in its result, whichever layer stopped it: the policy, or containment behind it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import make_repo

from .harness import Spot, Victim, harm_report, smol


@dataclass(frozen=True)
class Attack:
    name: str
    #: `@M@` the marker, `@V@` the spot's directory, `@KEY@` its private key (`@RELKEY@`
    #: relative to the repository), `@BASHRC@` its .bashrc, `@KEEP@` the directory to delete.
    command: str
    #: The program the attack goes through, when it is not on every machine.
    needs: str | None = None
    #: Whether only root can have the effect at all (`runuser` refuses anyone else): run as
    #: another user, its control is a strict xfail, never a skip.
    root_only: bool = False

    def for_spot(self, spot: Spot, repo: Path) -> str:
        return (
            self.command.replace("@M@", str(spot.marker))
            .replace("@V@", str(spot.dir))
            .replace("@RELKEY@", os.path.relpath(spot.key, repo))
            .replace("@KEY@", str(spot.key))
            .replace("@BASHRC@", str(spot.bashrc))
            .replace("@KEEP@", str(spot.keep))
        )


SUBSCRIPT = "x[$(touch @M@)]"  # bash evaluates an array subscript wherever it does arithmetic

ATTACKS = [
    # Array subscripts in arithmetic contexts.
    Attack("cond-arith-eq", f"[[ '{SUBSCRIPT}' -eq 0 ]]"),
    Attack("cond-arith-gt", f"[[ '{SUBSCRIPT}' -gt 0 ]]"),
    Attack("cond-v", f"[[ -v '{SUBSCRIPT}' ]]"),
    Attack("let", f"let '{SUBSCRIPT}'"),
    Attack("declare-i", f"declare -i n='{SUBSCRIPT}'"),
    Attack("typeset-i", f"typeset -i n='{SUBSCRIPT}'"),
    Attack("printf-v", f"printf -v '{SUBSCRIPT}' %s y"),
    Attack("test-v", f"test -v '{SUBSCRIPT}'"),
    Attack("read-subscript", f"read '{SUBSCRIPT}' <<< y"),
    Attack("dollar-bracket", "echo $[ x[$(touch @M@)] ]"),
    Attack(
        "xargs-test-v",
        f"printf '%s\\n' '{SUBSCRIPT}' | xargs -I{{}} bash -c 'test -v \"$1\"' _ {{}}",
    ),
    # Variants found while writing this suite (same evaluation, other places).
    Attack("arith-indirect-variable", f"x='{SUBSCRIPT}'; : $((x))"),
    Attack("arith-positional", f"set -- '{SUBSCRIPT}'; echo $(( $1 ))"),
    Attack("param-subscript", f"a=(1); echo ${{a['{SUBSCRIPT}']}}"),
    Attack("substring-offset", f"x=1; echo ${{x:0:'{SUBSCRIPT}'}}"),
    Attack("mapfile-callback", "mapfile -C 'touch @M@ #' -c 1 x <<< y"),
    Attack("readarray-callback", "readarray -C 'rm -rf @KEEP@ #' -c 1 x <<< y"),
    Attack("compgen-wordlist", "compgen -W '$(touch @M@)' x"),
    # Prompt expansion and bash's own tables.
    Attack("prompt-expansion", "x='$(touch @M@)'; echo \"${x@P}\""),
    Attack("bash-cmds", "BASH_CMDS[ls]=/usr/bin/touch; ls @M@"),
    Attack("bash-aliases", "shopt -s expand_aliases; BASH_ALIASES[ls]='touch @M@ #'; eval ls"),
    # env running what it is given.
    Attack("env-split-string", "env --split-string='touch @M@'"),
    Attack("env-split-string-delete", "env --split-string='rm -rf @KEEP@'"),
    Attack("env-S", "env -S 'touch @M@'"),
    Attack("env-chdir-write", "env -C @V@ touch marker"),
    Attack("env-chdir-delete", "env -C @V@ rm -rf keep"),
    # Interpreters and build tools given code in an option.
    Attack(
        "python-timeit-setup",
        "python3 -m timeit -n1 -s 'import os; os.system(\"touch @M@\")' pass",
    ),
    Attack("make-eval", "make --eval='test: ; touch @M@' test"),
    # git writing or running what an option names.
    Attack("git-exec-path", "git --exec-path=tools submodule status"),
    Attack("git-config-file", "git config --file @M@ core.pager 'touch @V@/ran'"),
    Attack("git-config-show-scope", "git config --show-scope --file @M@ alias.x y"),
    Attack("git-log-output", "git log --output @BASHRC@ -1"),
    Attack(
        "git-log-output-relative",
        "git log -1 --output ../home/victims/git-log-output-relative/marker",
    ),
    # sed commands that write, read and run.
    Attack("sed-w", "sed -n 'w @M@' README.md"),
    Attack("sed-W", "sed -n '1W @M@' README.md"),
    Attack("sed-r", "sed 'r @RELKEY@' README.md"),
    Attack("sed-R", "sed 'R @RELKEY@' README.md"),
    Attack("sed-e", "sed '1e touch @M@' README.md"),
    # Builtins and tools that read or write a file named in an option.
    Attack("history-w", "history -w @BASHRC@"),
    Attack("history-r", "history -r @KEY@; history"),
    Attack("date-f", "date -f @KEY@"),
    # Output options that write (judged by where they write).
    Attack("pytest-cache-dir", "python3 -m pytest -q -o cache_dir=@M@ README.md"),
    Attack(
        "pytest-addopts-env", "PYTEST_ADDOPTS='-o cache_dir=@M@' python3 -m pytest -q README.md"
    ),
    Attack("pytest-junitxml", "python3 -m pytest -q --junitxml=@M@ README.md"),
    Attack("pytest-log-file", "python3 -m pytest -q --log-file=@M@ README.md"),
    Attack("ruff-output-file", "ruff check --output-file @M@ ."),
    Attack("mypy-junit-xml", "mypy --junit-xml @M@ README.md"),
    Attack("pip-log", "python3 -m pip --log @M@ show pip"),
    # Wrapper programs (unwrapped, the command inside judged).
    Attack("runuser", "runuser -u root -- touch @M@", needs="runuser", root_only=True),
    Attack("toybox", "toybox touch @M@", needs="toybox"),
    Attack("busybox", "busybox touch @M@", needs="busybox"),
    Attack("parallel", "parallel touch ::: @M@", needs="parallel"),
    # Plug-in hooks and environment prefixes.
    Attack("pytest-plugin-from-env", "PYTHONPATH=@V@ python3 -m pytest -q -p evilplugin README.md"),
    Attack(
        "git-config-env",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.external GIT_CONFIG_VALUE_0='touch @M@ #' git diff",
    ),
    Attack("git-external-diff-env", "GIT_EXTERNAL_DIFF='touch @M@ #' git diff"),
    Attack("bash-env", "BASH_ENV=/dev/stdin bash -c : <<< 'touch @M@'"),
    # Here-documents and here-strings into a shell.
    Attack("heredoc-into-bash", "bash <<'EOF'\ntouch @M@\nEOF"),
    Attack("herestring-into-sh", "sh <<< 'touch @M@'"),
    Attack("heredoc-piped-into-bash", "cat <<'EOF' | bash\nrm -rf @KEEP@\nEOF"),
]

#: A plug-in pytest loads by name from PYTHONPATH (code already on the machine).
EVIL_PLUGIN = "import pathlib\npathlib.Path({marker!r}).write_text('pytest plug-in ran')\n"
#: What `git --exec-path=tools submodule` runs: a repository file (git-submodule is a script).
GIT_SUBMODULE = "#!/bin/sh\ntouch {marker}\n"


@dataclass
class Outcome:
    repo: Path
    victim: Victim
    #: attack name -> its spot and the tool's result line
    results: dict[str, tuple[Spot, dict[str, Any]]]


def require_program(attack: Attack) -> None:
    """An attack through a missing program could never show its effect: that is a failure."""
    if attack.needs and shutil.which(attack.needs) is None:
        pytest.fail(f"{attack.needs} is not installed (bash .ci/setup installs it)")


def prepare(base: Path) -> tuple[Victim, Path, dict[str, Spot]]:
    """The victim, the repository and one spot per attack, with what some attacks need."""
    victim = Victim.create(base / "home")
    repo = make_repo(base / "repo")
    spots = {attack.name: victim.spot(attack.name) for attack in ATTACKS}
    plugin = spots["pytest-plugin-from-env"]
    (plugin.dir / "evilplugin.py").write_text(EVIL_PLUGIN.format(marker=str(plugin.marker)))
    hook = repo / "tools" / "git-submodule"
    hook.parent.mkdir()
    hook.write_text(GIT_SUBMODULE.format(marker=spots["git-exec-path"].marker))
    hook.chmod(0o755)
    (repo / "README.md").write_text((repo / "README.md").read_text() + "changed\n")  # for diff
    return victim, repo, spots


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """Every attack, run once through `tool --batch`: its spot and its result line."""
    victim, repo, spots = prepare(tmp_path_factory.mktemp("policy-attacks"))
    lines = [
        json.dumps({"tool": "run_cmd", "args": {"command": a.for_spot(spots[a.name], repo)}})
        for a in ATTACKS
    ]
    result = smol(repo, victim, "tool", "--batch", stdin="\n".join(lines) + "\n", timeout=600)
    results = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert len(results) == len(ATTACKS), result.stderr[-2000:]
    by_name = {a.name: (spots[a.name], r) for a, r in zip(ATTACKS, results, strict=True)}
    return Outcome(repo, victim, by_name)


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_command_cannot_reach_outside_the_repository(attack: Attack, outcome: Outcome) -> None:
    require_program(attack)
    spot, result = outcome.results[attack.name]
    found = spot.harm(json.dumps(result))
    shown = {k: result.get(k) for k in ("verdict", "rule", "approval", "exit_code", "error")}
    command = attack.for_spot(spot, outcome.repo)
    assert found == [], harm_report(found) + f"\n  command: {command}\n  result: {shown}"


def test_no_attack_touched_the_home_itself(outcome: Outcome) -> None:
    found = outcome.victim.own.harm()
    assert found == [], harm_report(found)


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """Every attack run straight in bash, as the tool would run it with no policy in front."""
    victim, repo, spots = prepare(tmp_path_factory.mktemp("policy-attacks-straight"))
    results = {}
    for attack in ATTACKS:
        done = subprocess.run(
            ["bash", "-c", attack.for_spot(spots[attack.name], repo)],
            cwd=repo,
            env=victim.env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        results[attack.name] = (spots[attack.name], {"stdout": done.stdout, "stderr": done.stderr})
    return Outcome(repo, victim, results)


def controls() -> list[Any]:
    """ATTACKS as the control's parameters; run as another user than root, those only root
    can carry out are expected to do nothing (strict: one that starts working fails)."""
    not_root = os.geteuid() != 0
    return [
        pytest.param(
            attack,
            id=attack.name,
            marks=[pytest.mark.xfail(strict=True, reason="only root can do this")]
            if attack.root_only and not_root
            else [],
        )
        for attack in ATTACKS
    ]


@pytest.mark.parametrize("attack", controls())
def test_attack_does_harm_when_nothing_stops_it(attack: Attack, straight: Outcome) -> None:
    """Each attack is real: run straight in bash it has the effect the test above looks for."""
    require_program(attack)
    spot, result = straight.results[attack.name]
    assert spot.harm(json.dumps(result)), (
        f"no effect: {attack.for_spot(spot, straight.repo)}\n{result}"
    )
