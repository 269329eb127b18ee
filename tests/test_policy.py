"""The command policy: the adversarial corpus, policy.toml, and that verdict() never raises."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import make_repo
from policy_corpus import DESTRUCTIVE, EXPECTED_RULES, RISKY, SAFE
from smol_instruments.safety import policy as policy_package
from smol_instruments.safety.policy import (
    CommandPolicy,
    PolicyConfigError,
    PolicyDecision,
    PolicyRules,
    load_rules,
)
from smol_instruments.safety.policy.analysis import engine
from smol_instruments.safety.shell import (
    ShellSyntaxError,
    expand_word,
    parse,
    parse_repaired,
    simple_commands,
)

# --- the layout every corpus command runs against -------------------------------------------


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A fake home holding `~/.ssh/id_rsa` and the repository at `~/projects/repo`."""
    home = tmp_path_factory.mktemp("policy") / "home"
    repo = home / "projects" / "repo"
    (repo / ".git" / "hooks").mkdir(parents=True)
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "activate").write_text("")
    (repo / "build").mkdir()
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("not a real key")
    (home / "elsewhere").mkdir()
    (repo / "outside_link").symlink_to(home / "elsewhere")
    return home, repo


def make_policy(repo: Path, home: Path, **kwargs: bool) -> CommandPolicy:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))  # the policy reads the home directory once, here
        return CommandPolicy.load(repo, **kwargs)


@pytest.fixture(scope="module")
def policy(layout: tuple[Path, Path]) -> CommandPolicy:
    home, repo = layout
    return make_policy(repo, home)


def explain(decision: PolicyDecision) -> str:
    return f"{decision.verdict} by {decision.rule}: {decision.reason}"


# --- the corpus -----------------------------------------------------------------------------


def failures(policy: CommandPolicy, commands: list[str], wanted: str) -> str:
    """Every command in `commands` whose verdict is not `wanted`, one per line."""
    wrong = []
    for command in commands:
        decision = policy.verdict(command)
        if decision.verdict != wanted:
            wrong.append(f"{command!r}: {explain(decision)}")
    return "\n".join(wrong)


# One test per group (not per command): the whole file must run in seconds.
def test_every_destructive_or_exfiltrating_command_is_denied(policy: CommandPolicy) -> None:
    assert not failures(policy, DESTRUCTIVE, "deny")


def test_no_risky_command_is_allowed(policy: CommandPolicy) -> None:
    allowed = [c for c in RISKY if policy.verdict(c).verdict == "allow"]
    assert not allowed


def test_every_risky_command_needs_approval(policy: CommandPolicy) -> None:
    assert not failures(policy, RISKY, "require_approval")


def test_every_safe_command_is_allowed(policy: CommandPolicy) -> None:
    assert not failures(policy, SAFE, "allow")


def test_the_deciding_rule_is_reported(policy: CommandPolicy) -> None:
    wrong = [
        f"{command!r}: wanted {rule}, got {explain(policy.verdict(command))}"
        for command, rule in EXPECTED_RULES.items()
        if policy.verdict(command).rule != rule
    ]
    assert not wrong, "\n".join(wrong)


WRAPPERS = {
    "bash -c": lambda command: "bash -c " + shlex.quote(command),
    "if": lambda command: "if true; then " + command + "\nfi",
    "for": lambda command: "for i in 1; do " + command + "\ndone",
    "substitution": lambda command: "x=$(" + command + "\n)",
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_wrapping_a_denied_command_never_loosens_it(policy: CommandPolicy, wrapper: str) -> None:
    wrapped = [WRAPPERS[wrapper](command) for command in DESTRUCTIVE]
    assert not failures(policy, wrapped, "deny")


def test_the_corpus_is_large_and_its_groups_are_disjoint() -> None:
    assert len(DESTRUCTIVE) + len(RISKY) + len(SAFE) >= 180
    assert len(DESTRUCTIVE) >= 100 and len(RISKY) >= 60 and len(SAFE) >= 60
    groups = [set(DESTRUCTIVE), set(RISKY), set(SAFE)]
    assert sum(len(g) for g in groups) == len(set().union(*groups)), "a command is in two groups"
    assert len(DESTRUCTIVE) == len(groups[0]) and len(RISKY) == len(groups[1])


def test_reasons_are_one_readable_sentence(policy: CommandPolicy) -> None:
    for command in DESTRUCTIVE + RISKY + SAFE:
        decision = policy.verdict(command)
        assert decision.reason and "\n" not in decision.reason, command
        assert decision.rule.split(".")[0] in ("deny", "approval", "allow"), command
        assert decision.rule.startswith(
            {"deny": "deny.", "require_approval": "approval.", "allow": "allow."}[decision.verdict]
        ), explain(decision)


def test_a_reason_names_the_command_and_what_is_risky(policy: CommandPolicy) -> None:
    decision = policy.verdict("rm -rf /")
    assert decision.reason.startswith("`rm -rf /`")
    assert "recursively deletes" in decision.reason
    assert "`~/.ssh/id_rsa`" in policy.verdict("cat ~/.ssh/id_rsa").reason


def test_decisions_serialise_to_exactly_four_keys(policy: CommandPolicy) -> None:
    decision = policy.verdict("git status")
    assert decision.to_dict() == {
        "command": "git status",
        "verdict": "allow",
        "rule": "allow.read-only",
        "reason": decision.reason,
    }


# --- structure: the strictest part decides --------------------------------------------------


@pytest.mark.parametrize(
    ("command", "verdict", "rule"),
    [
        ("ls && pwd", "allow", "allow.read-only"),
        ("ls; pip install x; pwd", "require_approval", "approval.package-install"),
        ("pip install x && rm -rf / && ls", "deny", "deny.recursive-delete-root"),
        ("git push || curl x | sh", "deny", "deny.pipe-to-shell"),
        ("pytest && git commit -m x", "require_approval", "approval.git-history"),
        ("(ls; (cat x; (rm -rf ~)))", "deny", "deny.recursive-delete-home"),
    ],
)
def test_a_compound_command_gets_its_strictest_part(
    policy: CommandPolicy, command: str, verdict: str, rule: str
) -> None:
    decision = policy.verdict(command)
    assert (decision.verdict, decision.rule) == (verdict, rule), explain(decision)


def test_paths_are_judged_against_the_repository_root(layout: tuple[Path, Path]) -> None:
    home, repo = layout
    policy = make_policy(repo, home)
    assert policy.verdict(f"rm -rf {repo}/build").verdict == "require_approval"
    assert policy.verdict(f"rm -rf {home}/projects/other").verdict == "deny"
    assert policy.verdict("rm -rf build").verdict == "require_approval"
    assert policy.verdict(f"rm -rf {repo}").rule == "deny.delete-repo"
    # The same absolute path is outside another repository.
    other = home / "projects" / "other"
    (other / ".git").mkdir(parents=True, exist_ok=True)
    assert make_policy(other, home).verdict(f"rm -rf {repo}/build").verdict == "deny"


def test_a_symlink_out_of_the_repository_is_outside(policy: CommandPolicy) -> None:
    assert policy.verdict("rm -rf outside_link/x").verdict == "deny"
    assert policy.verdict("echo x > outside_link/file").rule == "deny.write-outside"


def test_cd_changes_where_relative_paths_point(policy: CommandPolicy) -> None:
    assert policy.verdict("cd build && rm -rf x").verdict == "require_approval"
    assert policy.verdict("cd build && rm -rf ../../x").verdict == "deny"
    assert policy.verdict("(cd /tmp); rm -rf x").verdict == "require_approval"


# --- policy.toml ----------------------------------------------------------------------------


@pytest.fixture
def repo_with_policy(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".smol-instruments").mkdir()
    return repo


def write_policy(repo: Path, text: str) -> Path:
    path = repo / ".smol-instruments" / "policy.toml"
    path.write_text(text)
    return path


def test_without_a_policy_file_the_defaults_apply(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    policy = CommandPolicy.load(tmp_path)
    assert policy.rules.repo == () and policy.warnings == []
    assert policy.verdict("npm install").verdict == "require_approval"


def test_a_stricter_repository_rule_applies(repo_with_policy: Path) -> None:
    write_policy(
        repo_with_policy,
        """
[[rule]]
id = "deny.terraform-destroy"
verdict = "deny"
command = "terraform"
subcommand = "destroy"
reason = "destroys infrastructure"

[[rule]]
id = "approval.make-test"
verdict = "require_approval"
command = ["make", "gmake"]
subcommand = "test"
reason = "runs tests that talk to the staging database"

[[rule]]
id = "deny.force-push"
verdict = "deny"
command = "git"
subcommand = "push"
flags_any = ["f", "force", "force-with-lease"]
reason = "force-pushes are not allowed in this repository"
""",
    )
    policy = CommandPolicy.load(repo_with_policy)
    decision = policy.verdict("terraform destroy -auto-approve")
    assert (decision.verdict, decision.rule) == ("deny", "deny.terraform-destroy")
    assert decision.reason == "`terraform destroy -auto-approve` destroys infrastructure"
    assert policy.verdict("terraform plan").verdict == "require_approval"
    assert policy.verdict("make test").rule == "approval.make-test"
    assert policy.verdict("make lint").verdict == "allow"
    assert policy.verdict("git push -f origin main").rule == "deny.force-push"
    assert policy.verdict("git push origin main").verdict == "require_approval"
    # Repository rules see through wrappers and inline shells like the defaults do.
    assert policy.verdict("sh -c 'cd infra && terraform destroy'").verdict == "deny"
    assert policy.warnings == []


LOOSENING = """
[[rule]]
id = "allow.npm-install"
verdict = "allow"
command = "npm"
subcommand = ["install", "ci"]
reason = "installs from the lock file"

[[rule]]
id = "allow.rm"
verdict = "allow"
command = "rm"
"""


def test_a_loosening_repository_rule_is_ignored_by_default(repo_with_policy: Path) -> None:
    write_policy(repo_with_policy, LOOSENING)
    policy = CommandPolicy.load(repo_with_policy)
    assert policy.verdict("npm install").rule == "approval.package-install"
    assert policy.verdict("rm -rf build").verdict == "require_approval"
    assert any(
        "allow.npm-install" in w and "POLICY_ALLOW_REPO_LOOSENING" in w for w in policy.warnings
    )


def test_loosening_is_honoured_when_the_user_allows_it(repo_with_policy: Path) -> None:
    write_policy(repo_with_policy, LOOSENING)
    policy = CommandPolicy.load(repo_with_policy, allow_repo_loosening=True)
    decision = policy.verdict("npm ci")
    assert (decision.verdict, decision.rule) == ("allow", "allow.npm-install")
    assert decision.reason == "`npm ci` installs from the lock file"
    assert policy.verdict("rm -rf build").verdict == "allow"
    # Deny is never loosened, and loosening one part leaves the others alone.
    assert policy.verdict("rm -rf /").verdict == "deny"
    assert policy.verdict("npm ci && curl x | sh").verdict == "deny"
    assert any("never loosened" in w for w in policy.warnings)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[[rule]]\nid = "x"\nverdict = "block"\ncommand = "x"\n', "'verdict'"),
        ('[[rule]]\nid = 1\nverdict = "deny"\ncommand = "x"\n', "'id'"),
        ('[[rule]]\nid = "x"\nverdict = "deny"\ncommand = "x"\ncolour = "red"\n', "'colour'"),
        ('[[rule]]\nid = "x"\nverdict = "deny"\n', "'command'"),
        ('[[rule]]\nid = "x"\nverdict = "deny"\ncommand = 3\n', "'command'"),
        ('[[rule]]\nid = "x"\nverdict = "deny"\ncommand = "x"\nargs_any = "-f"\n', "'args_any'"),
        (
            '[[rule]]\nid = "x"\nverdict = "deny"\ncommand = "x"\nmax_operands = -1\n',
            "'max_operands'",
        ),
        (
            '[[rule]]\nid = "x"\nverdict = "deny"\ncommand = "x"\n[[rule]]\nid = "x"\nverdict = "deny"\ncommand = "y"\n',
            "'id'",
        ),
        ("rules = []\n", "'rules'"),
        ('rule = "deny everything"\n', "'rule'"),
        ("version = 2\n", "'version'"),
        ("[[rule]\nid = \n", "not valid TOML"),
    ],
)
def test_a_malformed_policy_file_is_one_readable_line(
    repo_with_policy: Path, text: str, fragment: str
) -> None:
    path = write_policy(repo_with_policy, text)
    with pytest.raises(PolicyConfigError) as caught:
        CommandPolicy.load(repo_with_policy)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message
    assert fragment in message
    if "TOML" not in fragment:
        assert "allowed" in message


# --- the rules file -------------------------------------------------------------------------

POLICY_SOURCES = Path(policy_package.__file__).parent


def test_every_rule_id_the_analysis_applies_is_a_row_of_the_rules_file() -> None:
    rules = PolicyRules()
    named = set()
    for source in POLICY_SOURCES.rglob("*.py"):
        if source.name == "rules.py":
            continue  # the loader, whose help text shows an example id
        named |= set(re.findall(r'"((?:deny|approval|allow)\.[a-z-]+)"', source.read_text()))
    missing = sorted(
        rule_id
        for rule_id in named
        if rule_id not in rules.by_id and not any(r.id == rule_id for r in rules.table)
    )
    assert not missing
    # A rule the analysis applies by id has exactly one row without a command.
    for rule_id in named - {r.id for r in rules.table}:
        assert rule_id in rules.by_id, rule_id


def test_the_default_rules_are_read_by_the_repository_loader(tmp_path: Path) -> None:
    text = (POLICY_SOURCES / "default_rules.toml").read_text()
    defaults = load_rules(POLICY_SOURCES / "default_rules.toml", text, repository=False)
    assert len(defaults) == len(PolicyRules().defaults) > 150
    # As a repository's file, the same text is refused, in one line: rows need a command.
    repo = tmp_path / "repo"
    (repo / ".smol-instruments").mkdir(parents=True)
    (repo / ".smol-instruments" / "policy.toml").write_text(text)
    with pytest.raises(PolicyConfigError, match=r"#\d+ key '(command|id)'"):
        CommandPolicy.load(repo)


def test_the_parser_does_not_crash_on_characters_that_crash_tree_sitter_bash() -> None:
    # tree-sitter-bash 0.25 reads out of bounds after `{` on code points above U+DFFFF.
    code = (
        "from smol_instruments.safety.policy import CommandPolicy\n"
        "policy = CommandPolicy('.')\n"
        "for i in range(3000):\n"
        "    assert policy.verdict('{' + chr(0x10FFFF - i % 64)).verdict != 'deny'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()[-500:]


# --- hidden commands, by their effect -------------------------------------------------------

# Each writes the marker file {m} when bash runs it (checked below, in a scratch directory);
# the marker is outside the repository, so the payload itself is never allowed.
HIDDEN_COMMANDS = [
    "[[ 1 -eq 'a[$(touch {m})]' ]]",
    "x='a[$(touch {m})]'; [[ $x -gt 0 ]]",
    "x='a[$(touch {m})]'; (( x ))",
    "echo $[ 'a[$(touch {m})]' ]",
    "let 'x=a[$(touch {m})]'",
    "declare -i n; n='a[$(touch {m})]'",
    "typeset -i n='a[$(touch {m})]'",
    "declare 'a[$(touch {m})]=1'",
    "printf -v 'a[$(touch {m})]' %s x",
    "test -v 'a[$(touch {m})]'",
    "[ -v 'a[$(touch {m})]' ]",
    "read 'a[$(touch {m})]' <<< x",
    "mapfile -C 'touch {m}' -c 1 lines <<< x",
    "x='a[$(touch {m})]'; echo ${{!x}}",
    "x='$(touch {m})'; echo ${{x@P}}",
    "for ((i = 0; i < 'a[$(touch {m})]'; i++)); do :; done",
    "shopt -s expand_aliases; BASH_ALIASES[zz]='touch {m}'\nzz",
    "sed -n '1e touch {m}' README.md",
    "python3 -m timeit -n 1 -s 'import os; os.system(\"touch {m}\")' pass",
    "make --eval='x:; touch {m}' x",
    "git -c alias.x='!touch {m}' x",
    "cat <<EOF | sh\ntouch {m}\nEOF",
    "bash < <(echo 'touch {m}')",
    "x=abc; echo ${{x:'a[$(touch {m})]'}}",
    "i='b[$(touch {m})]'; a=(1); echo ${{a[$i]}}",
    "x=abc; i='b[$(touch {m})]'; echo ${{x:i}}",
    "a=( ['b[$(touch {m})]']=1 )",
    "a=(1 2); echo ${{a['b[$(touch {m})]']}}",
    "env 'BASH_FUNC_ls%%=() {{ touch {m}; }}' bash -c ls",
]


def test_commands_hidden_in_allowed_ones_do_not_run_through_run_cmd(repo: Path) -> None:
    scratch = make_repo(repo.parent / "scratch")
    outside = repo.parent  # the markers land here, next to the repository
    for i, command in enumerate(HIDDEN_COMMANDS):
        shell = ["bash", "-c", command.format(m=f"../bash-{i}")]
        subprocess.run(shell, cwd=scratch, capture_output=True, timeout=60)
    not_hidden = [c for i, c in enumerate(HIDDEN_COMMANDS) if not (outside / f"bash-{i}").exists()]
    assert not not_hidden, "bash does not run the payload of these"
    lines = [
        json.dumps({"tool": "run_cmd", "args": {"command": command.format(m=f"../tool-{i}")}})
        for i, command in enumerate(HIDDEN_COMMANDS)
    ]
    lines.append(json.dumps({"tool": "run_cmd", "args": {"command": "touch control"}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SANDBOX_", "POLICY_"))}
    env.update(SANDBOX_BACKEND="none", PHOENIX_ENABLED="false", HOME=str(outside))
    result = subprocess.run(
        [sys.executable, "-m", "smol_instruments", "tool", "--batch", "--repo", str(repo)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    # allowed commands run (in a view of the repository: what they make comes back said)
    control = json.loads(result.stdout.splitlines()[-1])
    assert "control: an empty file, not proposed" in control.get("not_proposed", []), control
    ran = [c for i, c in enumerate(HIDDEN_COMMANDS) if (outside / f"tool-{i}").exists()]
    assert not ran


# --- robustness -----------------------------------------------------------------------------

SHELL_PIECES = [
    "rm -rf /",
    "ls",
    "'",
    '"',
    "`",
    "$(",
    ")",
    "${",
    "}",
    "<<EOF\n",
    "\nEOF\n",
    "|",
    "&&",
    ";",
    "&",
    "sh -c ",
    "eval ",
    "\\",
    "\n",
    "\x00",
    "(",
    "{ ",
    "if ",
    "then ",
    "fi",
    "case ",
    " in ",
    "esac",
    "for x in ",
    "do ",
    "done",
    "$'\\x",
    "~",
    "*",
    "((",
    "[[",
    ">",
    "<(",
]


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300))
def test_verdict_never_raises_on_random_text(policy: CommandPolicy, text: str) -> None:
    decision = policy.verdict(text)
    assert isinstance(decision, PolicyDecision)
    assert decision.verdict in ("allow", "require_approval", "deny")


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(SHELL_PIECES) | st.text(max_size=4), max_size=40))
def test_verdict_never_raises_on_shell_like_text(policy: CommandPolicy, pieces: list[str]) -> None:
    decision = policy.verdict("".join(pieces))
    assert isinstance(decision, PolicyDecision)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("x" * 30_000, "require_approval"),
        ("(" * 5_000, "require_approval"),
        ("$(" * 3_000, "require_approval"),
        ("${a:-" * 3_000, "require_approval"),
        ("{" * 3_000 + "a,b" + "}" * 3_000, "require_approval"),
        ("eval " * 400 + "ls", "require_approval"),
        ("bash -c " * 200 + "ls", "require_approval"),
        ("echo " + "$(echo " * 300 + ")" * 300, "require_approval"),
        ("ls\x00rm -rf /", "require_approval"),
        ("cat <<E\n" * 1_000, "allow"),
        ("echo ok; " * 1_000, "allow"),
    ],
)
def test_pathological_input_gets_a_decision(policy: CommandPolicy, text: str, verdict: str) -> None:
    assert policy.verdict(text).verdict == verdict


def test_an_internal_error_is_a_deny_so_yes_cannot_pass_it(
    policy: CommandPolicy, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a bug in the analysis")

    monkeypatch.setattr(engine.Analysis, "run", broken)
    decision = policy.verdict("ls")
    assert (decision.verdict, decision.rule) == ("deny", "deny.policy-error")


# --- the parser underneath ------------------------------------------------------------------


class _NoEnv:
    def var(self, name: str) -> str | None:
        return {"HOME": "/home/u", "IFS": " \t\n", "X": "a b"}.get(name)

    def output(self, script: object) -> str | None:
        return None


def words_of(source: str) -> list[list[str]]:
    return [
        [f.text for w in command.words for f in expand_word(w, _NoEnv())]
        for command in simple_commands(parse(source))
    ]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("r''m -rf /", [["rm", "-rf", "/"]]),
        ('"r"m -rf "/"', [["rm", "-rf", "/"]]),
        ("\\rm -rf /", [["rm", "-rf", "/"]]),
        ("$'\\x72m' ~/x", [["rm", "/home/u/x"]]),
        ("echo '~' \"~\" ~", [["echo", "~", "~", "/home/u"]]),
        ("rm${IFS}-rf${IFS}/", [["rm", "-rf", "/"]]),
        ('echo $X "$X"', [["echo", "a", "b", "a b"]]),
        ("echo {a,b}{1..2}", [["echo", "a1", "a2", "b1", "b2"]]),
        ("a | b && c; d &", [["a"], ["b"], ["c"], ["d"]]),
        ("if a; then b; elif c; then d; else e; fi", [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ("for x in 1 2; do a; done; while b; do c; done", [["a"], ["b"], ["c"]]),
        ("case $x in a|b) c;; *) d;; esac", [["c"], ["d"]]),
        ("f() { a; }; g() ( b )", [["a"], ["b"]]),
        ("cat <<'EOF' | sh\nrm -rf /\nEOF\nls", [["cat"], ["sh"], ["ls"]]),
        ("a # b; c", [["a"]]),
        ("a \\\n b", [["a", "b"]]),
    ],
)
def test_the_parser_finds_every_command_and_its_words(
    source: str, expected: list[list[str]]
) -> None:
    assert words_of(source) == expected


@pytest.mark.parametrize(
    "source", ["echo 'x", 'echo "x', "echo $(x", "(a", "a )", "if a; then b", "echo `x", "| a"]
)
def test_incomplete_shell_is_a_syntax_error(source: str) -> None:
    with pytest.raises(ShellSyntaxError):
        parse(source)


def test_text_with_a_syntax_error_is_still_read_as_tree_sitter_repairs_it() -> None:
    script, error = parse_repaired("rm -rf /\necho 'unclosed")
    assert error is not None and "unexpected" in error
    commands = [[w.raw for w in c.words] for c in simple_commands(script)]
    assert commands == [["rm", "-rf", "/"], ["echo"], ["'unclosed"]]
