"""Generated code reaches the tools as plain functions: no attribute chain leads behind them.

Each attack is the code a prompt-injected model would write. It runs in the agent's real
interpreter with the real tools; what counts is its effect: a marker file outside the
repository, a file written through a path object, a patch applied without approval.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from smolagents.default_tools import FinalAnswerTool
from smolagents.local_python_executor import InterpreterError
from tests.support.scripted_model import ScriptedModel, Turn

from smol_instruments.agent.executor import ToolFunctionsExecutor, plain
from smol_instruments.agent.pipeline import instrument
from smol_instruments.agent.session import AgentSession
from smol_instruments.agent.state import AgentState
from smol_instruments.base.config import Settings
from smol_instruments.safety.approval import DenyAllApprover
from smol_instruments.tools import build_tools
from smol_instruments.tools.base import ToolContext


@pytest.fixture
def executor(repo: Path, settings: Settings) -> ToolFunctionsExecutor:
    ctx = ToolContext.create(repo, settings, approver=DenyAllApprover())
    tools = instrument(
        build_tools(ctx), AgentState(), settings=settings, cancel=ctx.cancel, events=None
    )
    executor = ToolFunctionsExecutor(additional_authorized_imports=[])
    executor.send_tools({tool.name: tool for tool in tools} | {"final_answer": FinalAnswerTool()})
    executor.send_variables({})
    return executor


def _run(executor: ToolFunctionsExecutor, code: str) -> str:
    """The code's printed output, or the interpreter's refusal."""
    try:
        result = executor(code)
    except InterpreterError as exc:
        return f"refused: {exc}"
    return result.logs + repr(result.output)


# Walks a model might try from a tool to what stands behind it.
WALKS = [
    "run_cmd.wrapped",
    "run_cmd.ctx",
    "run_cmd.wrapped.ctx.policy",
    "read_file.wrapped.ctx.jail",
    "apply_patch.wrapped.ctx.gate",
    "propose_patch.wrapped.ctx.patches",
    "propose_patch.wrapped.ctx.sandbox",
    "read_file.wrapped.ctx.root",
    "getattr(run_cmd, 'wrapped')",
    "getattr(getattr(run_cmd, 'wrapped'), 'ctx')",
    "run_cmd.state",
    "run_cmd.forward",
    "run_cmd.__self__",
    "run_cmd.__closure__",
    "run_cmd.__globals__",
    "run_cmd.__wrapped__",
    "getattr(run_cmd, '__closure__')",
    "run_cmd.func",
    "run_cmd.args",
    "run_cmd.keywords",
    "'{0.wrapped.ctx}'.format(run_cmd)",
    "'{0.__closure__}'.format(run_cmd)",
    "[c for c in [run_cmd]][0].wrapped",
    "type(run_cmd).__dict__",
]


@pytest.mark.parametrize("walk", WALKS)
def test_no_attribute_walk_reaches_behind_a_tool(
    executor: ToolFunctionsExecutor, walk: str
) -> None:
    shown = _run(executor, f"print({walk})")
    for inside in (
        "ToolContext",
        "CommandPolicy",
        "PathJail",
        "ApprovalGate",
        "PatchStore",
        "PatchService",
        "PosixPath",
        "InstrumentedTool",
        "cell at",
        "bound method",
    ):
        assert inside not in shown, f"{walk} reached {inside}: {shown[:300]}"


def test_replacing_the_policy_does_not_run_a_denied_command(
    executor: ToolFunctionsExecutor, repo: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "outside-marker"
    attack = f"""
class Yes:
    def verdict(self, command):
        return None
try:
    run_cmd.wrapped.ctx.policy = Yes()
except Exception as exc:
    print("blocked", exc)
setattr(run_cmd, "ctx", None)
print(run_cmd(command="touch {marker} && rm -rf /"))
"""
    _run(executor, attack)
    assert not marker.exists()


def test_moving_the_jail_root_does_not_open_the_filesystem(
    executor: ToolFunctionsExecutor, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-TEXT")
    attack = f"""
try:
    read_file.wrapped.ctx.jail.root = "/"
except Exception as exc:
    print("blocked", exc)
print(read_file(path="{secret}"))
"""
    assert "TOP-SECRET-TEXT" not in _run(executor, attack)


def test_an_unapproved_patch_cannot_be_marked_approved(
    executor: ToolFunctionsExecutor, repo: Path
) -> None:
    before = (repo / "app" / "calc.py").read_text()
    attack = """
p = propose_patch(path="app/calc.py", old_text="a - b", new_text="a + b + 1000")
try:
    apply_patch.wrapped.ctx.gate.approver.decide = lambda request: True
except Exception as exc:
    print("blocked", exc)
print(apply_patch(patch_id=p["patch_id"]))
"""
    _run(executor, attack)
    assert (repo / "app" / "calc.py").read_text() == before


def test_results_are_plain_data(executor: ToolFunctionsExecutor) -> None:
    out = _run(
        executor,
        "info = repo_info()\nprint(type(info['root']).__name__ if 'root' in info else 'none')",
    )
    assert "PosixPath" not in out
    assert plain({"p": Path("/x"), "t": (1, 2)}) == {"p": "/x", "t": [1, 2]}


def test_tools_still_work_as_functions(executor: ToolFunctionsExecutor) -> None:
    out = _run(executor, 'r = read_file(path="app/calc.py")\nprint(r["content"][:40])')
    assert "def add" in out


FORMAT_WALKS = [
    "'{0.__globals__}'.format(run_cmd)",
    "'{0.__closure__}'.format(run_cmd)",
    "'{0.__closure__[0].cell_contents}'.format(run_cmd)",
    "str.format('{0.__globals__}', run_cmd)",
    "'{a.__globals__}'.format_map({'a': run_cmd})",
    "'{0:{1.__globals__}}'.format(1, run_cmd)",
    "getattr('{0.__globals__}', 'format')(run_cmd)",
    "getattr('{0.__globals__}', 'form' + 'at')(run_cmd)",
    "[s.format(run_cmd) for s in ['{0.__globals__}']][0]",
]


@pytest.mark.parametrize("walk", FORMAT_WALKS)
def test_format_strings_cannot_walk_into_objects(
    executor: ToolFunctionsExecutor, walk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SMOL_TEST_SECRET", "sk-THE-SECRET-TOKEN")
    shown = _run(executor, f"print({walk})")
    for inside in ("cell at", "__builtins__", "ToolFunctionsExecutor", "sk-THE-SECRET-TOKEN"):
        assert inside not in shown, f"{walk} reached {inside}: {shown[:300]}"


def test_a_bare_format_method_is_refused(executor: ToolFunctionsExecutor) -> None:
    shown = _run(executor, "f = '{0.__globals__}'.format\nprint(f(run_cmd))")
    assert "refused" in shown and "__builtins__" not in shown


def test_ordinary_formatting_still_works(executor: ToolFunctionsExecutor) -> None:
    code = "print('{} and {name} {:>4}'.format(1, 7, name='x'), '{k}'.format_map({'k': 2}))"
    assert "1 and x    7 2" in _run(executor, code)


def test_a_hostile_reply_in_a_real_run_reaches_nothing(
    repo: Path, settings: Settings, tmp_path: Path
) -> None:
    """The same walks through the agent's own loop: the model's reply is the attack."""
    marker = tmp_path / "pwned"
    attack = f"""```python
try:
    run_cmd.wrapped.ctx.policy = None
except Exception as exc:
    print("blocked:", exc)
print(run_cmd(command="touch {marker}"))
```"""
    with ScriptedModel([Turn(attack), Turn('```python\nfinal_answer("done")\n```')]) as model:
        configured = settings.model_copy(
            update={
                "model_id": model.model_id,
                "model_api_base": model.base_url,
                "model_api_key": "x",
            }
        )
        session = AgentSession(repo, configured, approver=DenyAllApprover())
        try:
            outcome = session.run("do what the file says")
        finally:
            session.close()
    assert not marker.exists()
    assert outcome.status == "completed"
    assert "has no attribute 'wrapped'" in model.requests[1].prompt_text()


FRAME_WALKS = [
    "(x for x in [1]).gi_frame.f_locals",
    "getattr((x for x in [1]), 'gi_frame')",
    "getattr(getattr((x for x in [1]), 'gi' + '_frame'), 'f_globals')",
    "(x for x in [1]).gi_code.co_consts",
]


@pytest.mark.parametrize("walk", FRAME_WALKS)
def test_generator_frames_are_closed(executor: ToolFunctionsExecutor, walk: str) -> None:
    assert _run(executor, f"print({walk})").startswith("refused")


def test_the_allowed_imports_cannot_be_widened(
    executor: ToolFunctionsExecutor, tmp_path: Path
) -> None:
    """The escape: reach the interpreter's own variables, add `os`, run a host command."""
    marker = tmp_path / "escaped"
    attack = (
        "g = (x for x in [1])\n"
        "try:\n    g.gi_frame.f_locals['authorized_imports'].append('os')\n"
        "except Exception as exc:\n    print('blocked', exc)\n"
        f"import os\nos.system('touch {marker}')\n"
    )
    _run(executor, attack)
    assert not marker.exists()


def test_tools_and_final_answer_in_one_block_wait_for_the_results(
    executor: ToolFunctionsExecutor,
) -> None:
    result = executor('r = read_file(path="nope.py")\nprint(r["error"])\nfinal_answer("fixed it")')
    assert not result.is_final_answer
    assert "FILE_NOT_FOUND" in result.logs and "final_answer was not taken" in result.logs
    assert executor('final_answer("done")').is_final_answer


def test_a_printed_tool_result_shows_its_text_as_lines() -> None:
    """Small models misread one escaped line; a printed result shows the file as lines."""
    from smol_instruments.agent.executor import tool_function

    read = tool_function("read_file", lambda **_: {"path": "a.py", "content": "x = 1\ny = 2\n"})
    result = read(path="a.py")
    assert str(result) == "path: a.py\ncontent: |\n  x = 1\n  y = 2"
    assert result == {"path": "a.py", "content": "x = 1\ny = 2\n"}  # still the plain dict


def test_a_refused_import_of_the_repositorys_module_says_how_to_read_it() -> None:
    """Small models import the code they were asked about, and retry; the error shows the way."""
    from smol_instruments.agent.executor import ToolFunctionsExecutor

    executor = ToolFunctionsExecutor([])
    executor.send_tools({})
    with pytest.raises(InterpreterError) as caught:
        executor("from textutils.strings import slugify\nprint(slugify('x'))")
    message = str(caught.value)
    assert "print(read_file(path='textutils/strings.py'))" in message
    assert "is not allowed" in message


def test_unpacking_a_tool_result_as_a_tuple_says_it_is_one_dict() -> None:
    from smol_instruments.agent.executor import ToolFunctionsExecutor

    executor = ToolFunctionsExecutor([])
    executor.send_tools({})
    with pytest.raises(InterpreterError) as caught:
        executor("passed, code, output = {'passed': True, 'exit_code': 0}")
    assert "A tool returns one dict, not a tuple" in str(caught.value)
