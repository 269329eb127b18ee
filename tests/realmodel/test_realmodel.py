"""A real model through the real command line and the real daemon: what it makes deterministic.

A small real model's words vary; these tests assert only what must hold whatever it writes:
the run ends with a status and no traceback, events arrive in order with the final one last,
the tokens the host counts are the tokens the server reports, and from the second model call
of a conversation on, the server reuses its prefix cache (the agent does not rewrite history).
The precise behaviour stays tested against the scripted model.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from bench.real import agents, fixtures
from bench.real.proxy import Call
from smolagents.models import ChatMessage, MessageRole
from tests.support.lsp import Recorder, _plain, daemon_env, start_daemon, wait_until

from smol_instruments.agent.model import build_model
from smol_instruments.agent.repeats import before_repetition
from smol_instruments.base.config import Settings
from smol_instruments.tools.edit import edit_blocks_grammar

from .conftest import RealModel

pytestmark = [pytest.mark.realmodel, pytest.mark.timeout(900)]

STATUSES = {"completed", "incomplete", "max_steps", "failed", "cancelled"}
MAX_STEPS = 3
QUESTION = "What does the function add in calc/ops.py return?"


def _options(model: RealModel) -> agents.RunOptions:
    return agents.RunOptions(model.api_base, model.api_key, MAX_STEPS, 300.0, 600.0)


def assert_calls_sound(calls: list[Call], prompt_tokens: int | None = None) -> None:
    """Every call answered; the counted tokens are the server's; the prefix cache is reused.

    A reply that goes on after its code block without meeting one of the server-side stops, or
    that begins to repeat a line, is cut by the client (by design: nothing after the first block
    is wanted); such a call ends without the server's usage, so only the others are counted.
    """
    assert calls, "no model call reached the server"
    assert all(c.status == 200 and c.error is None for c in calls)
    cut = [c for c in calls if c.client_gone]
    assert all(
        re.search(r"```[\w]*\n.*?\n```", c.reply, re.DOTALL)  # went on after its block
        or before_repetition(c.reply) != c.reply  # or began to repeat a line
        for c in cut
    ), [c.reply for c in cut]
    whole = [c for c in calls if not c.client_gone]
    assert all((c.completion_tokens or 0) > 0 for c in whole)
    if prompt_tokens is not None:
        assert prompt_tokens == sum(c.prompt_tokens or 0 for c in whole), [
            (c.prompt_tokens, c.finish_reason, c.client_gone, c.stream, c.reply[-80:])
            for c in calls
        ]
    for number, (previous, call) in enumerate(itertools.pairwise(calls), start=2):
        if call.client_gone or previous.client_gone:
            continue  # a call the client cut reports no timings
        assert (call.cache_n or 0) > 0, f"call {number} reused no cached prefix"
        if call.messages[:1] == previous.messages[:1]:  # same system message: history kept
            assert (call.cache_n or 0) >= (previous.prompt_tokens or 0) // 2, (
                f"call {number} re-evaluated {call.prompt_n} of "
                f"{call.prompt_tokens} prompt tokens: earlier messages were rewritten"
            )


def test_run_ends_cleanly_and_counts_the_servers_tokens(
    real_model: RealModel, tmp_path: Path
) -> None:
    repo = fixtures.make("calc", tmp_path)
    mark = real_model.mark()
    command = [*agents.cli(), "run", "--json", "--yes", "--repo", str(repo), QUESTION]
    done = subprocess.run(
        command,
        env=agents.environment(_options(real_model)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] in STATUSES
    assert done.returncode == (0 if result["status"] == "completed" else 1)
    assert 1 <= result["steps"] <= MAX_STEPS + 1
    assert result["answer"].strip()
    assert result["usage"]["completionTokens"] > 0
    assert_calls_sound(real_model.calls_since(mark), result["usage"]["promptTokens"])


def test_chat_keeps_memory_and_the_cache_across_turns(
    real_model: RealModel, tmp_path: Path
) -> None:
    repo = fixtures.make("calc", tmp_path)
    mark = real_model.mark()
    done = subprocess.run(
        [*agents.cli(), "chat", "--yes", "--repo", str(repo)],
        input=f"{QUESTION}\nAnd what does multiply return?\n",
        env=agents.environment(_options(real_model)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stdout.count("agent> ") == 2
    statuses = [
        line.split(" · ")[0].removeprefix("── ")
        for line in done.stderr.splitlines()
        if line.startswith("── ") and " · tokens " in line
    ]
    assert len(statuses) == 2 and set(statuses) <= STATUSES
    assert done.returncode == (0 if statuses == ["completed", "completed"] else 1)
    calls = real_model.calls_since(mark)
    assert len(calls) >= 2
    assert_calls_sound(calls)
    # The second turn's first call carries the first turn: memory was kept.
    second_turn = next(c for c in calls if "multiply" in c.messages[-1]["content"])
    assert any(QUESTION in m["content"] for m in second_turn.messages)


async def _chat(client: Any, message: str) -> dict[str, Any]:
    return _plain(await client.protocol.send_request_async("smol/chat", {"message": message}))


async def test_daemon_streams_events_in_order_to_the_final_one(
    real_model: RealModel, tmp_path: Path
) -> None:
    repo = fixtures.make("calc", tmp_path / "work")
    settings = {
        "MODEL_ID": "openai/local",
        "MODEL_API_BASE": real_model.api_base,
        "MODEL_BACKEND": "server",
        "MODEL_API_KEY": real_model.api_key,
        "MODEL_TIMEOUT_S": "300",
        "AGENT_MAX_STEPS": str(MAX_STEPS),
    }
    recorder = Recorder()
    mark = real_model.mark()
    client = await start_daemon(repo, recorder, env=daemon_env(settings, tmp_path))
    try:
        result = await _chat(client, QUESTION)
        session = result["sessionId"]
        await wait_until(lambda: "final" in recorder.kinds(session), timeout=30)
    finally:
        await client.shutdown_session()
    assert result["status"] in STATUSES
    events = [e for e in recorder.events if e["sessionId"] == session]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "step" and kinds[-1] == "final" and kinds.count("final") == 1
    assert events[-1]["status"] == result["status"]
    steps = [e["step"] for e in events if e["kind"] == "step"]
    assert steps == list(range(1, len(steps) + 1)) and len(steps) == result["steps"]
    current = 0
    for event in events:  # everything a step reports comes after that step began
        if event["kind"] == "step":
            current = event["step"]
        elif "step" in event:
            assert event["step"] == current
    assert_calls_sound(real_model.calls_since(mark), result["usage"]["promptTokens"])
    log = (tmp_path / "daemon.log").read_text() if (tmp_path / "daemon.log").exists() else ""
    assert "Traceback" not in log, log[-3000:]


def test_the_embedded_default_answers_from_the_model_cache(
    real_model: RealModel, tmp_path: Path
) -> None:
    """No server configured: the command line starts its own llama.cpp server and ends cleanly."""
    repo = fixtures.make("calc", tmp_path)
    env = agents.environment(_options(real_model)) | {
        "MODEL_BACKEND": "embedded",
        "MODEL_FILE": str(real_model.gguf),
        "MODEL_THREADS": "1",
        "MODEL_AUTO_PULL": "false",
    }
    for name in ("MODEL_ID", "MODEL_API_BASE", "MODEL_API_KEY"):
        env.pop(name)
    done = subprocess.run(
        [*agents.cli(), "run", "--json", "--yes", "--repo", str(repo), QUESTION],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] in STATUSES
    assert done.returncode == (0 if result["status"] == "completed" else 1)
    assert result["usage"]["promptTokens"] > 0 and result["usage"]["completionTokens"] > 0


def test_a_text_change_is_held_to_the_blocks_grammar_by_the_real_server(
    real_model: RealModel, tmp_path: Path
) -> None:
    """The server takes the grammar (a GBNF it cannot parse would fail every text change) and
    a reply held to it is the file's path, then a SEARCH/REPLACE block, whatever the model
    would have written. Nothing is applied without the user."""
    repo = fixtures.make("calc", tmp_path)
    before = (repo / "README.md").read_text()
    mark = real_model.mark()
    command = [
        *agents.cli(),
        "run",
        "--json",
        "--repo",
        str(repo),
        "add a Usage section to the README",
    ]
    done = subprocess.run(
        command,
        # what is checked is how the first reply starts: short replies keep the tier quick
        env={**agents.environment(_options(real_model)), "MODEL_MAX_TOKENS": "120"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert json.loads(done.stdout)["status"] in STATUSES
    calls = real_model.calls_since(mark)
    assert calls and all(c.status == 200 and c.error is None for c in calls)
    # the first reply is free; one that is no change makes the next one held to the form
    held = [c for c in calls if c.reply.startswith("README.md\n<<<<<<< SEARCH\n")]
    unaided = "<<<<<<< SEARCH" in calls[0].reply or "```" in calls[0].reply  # blocks, or lines
    assert unaided or held, [(c.messages[-1]["content"][-300:], c.reply[:300]) for c in calls]
    assert (repo / "README.md").read_text() == before


def _held_reply(real_model: RealModel, readme: str, prompt: str, *, max_tokens: int) -> str:
    """The real server's reply to `prompt`, held to the blocks' grammar for a README.rst of
    `readme`, at temperature 0."""
    settings = Settings(
        model_id="openai/local",
        model_api_base=real_model.api_base,
        model_api_key=real_model.api_key,
        model_temperature=0.0,
        model_max_tokens=max_tokens,
    )
    model = build_model(settings)
    model.hold_next_reply(edit_blocks_grammar({"README.rst": readme}))
    return str(model.generate([ChatMessage(role=MessageRole.USER, content=prompt)]).content)


def test_a_held_search_part_is_lines_of_its_file_whatever_the_prompt_shows(
    real_model: RealModel,
) -> None:
    """Held to the grammar, the SEARCH part the real server lets the model write is lines of
    the file, even asked with the old instruction whose slot words the 1.5B model copied into
    every reply (`<lines copied exactly from the file>`)."""
    readme = (fixtures.REPOS / "inflection" / "README.rst").read_text()
    prompt = (
        f"README.rst:\n```\n{readme}```\nThe task: add a Usage section to the README\n"
        "Reply with the file's path on its own line, then a block:\n<<<<<<< SEARCH\n"
        "<lines copied exactly from the file>\n=======\n<the new lines>\n>>>>>>> REPLACE"
    )
    reply = _held_reply(real_model, readme, prompt, max_tokens=200)
    assert reply.startswith("README.rst\n<<<<<<< SEARCH\n"), reply
    search = reply.split("<<<<<<< SEARCH\n", 1)[1].split("=======\n", 1)[0]
    lines = set(readme.splitlines())
    complete = search.splitlines(keepends=True)
    if complete and not complete[-1].endswith("\n"):
        complete.pop()  # cut by max_tokens mid-line
    assert all(line.rstrip("\n") in lines for line in complete), search
    assert "<lines copied" not in reply


@pytest.mark.parametrize(
    "slot", ["<the new lines>", "<the new lines, with a Usage section>", "<the new line>"]
)
def test_a_held_reply_cannot_write_the_new_lines_slot(real_model: RealModel, slot: str) -> None:
    """Asked to copy the instruction's block as it is, a reply held to the grammar still
    cannot write its `<the new lines>` slot as the new lines (the 1.5B model wrote it back ten
    times on dev infl-readme-usage, then with words of the task in it); what it writes
    instead is any other line."""
    readme = "Calc\n====\n\nA calculator.\n"
    prompt = (
        f"README.rst:\n```\n{readme}```\nReply with exactly these five lines, copied as "
        f"they are:\nREADME.rst\n<<<<<<< SEARCH\n=======\n{slot}\n>>>>>>> REPLACE"
    )
    reply = _held_reply(real_model, readme, prompt, max_tokens=60)
    assert reply.startswith("README.rst\n<<<<<<< SEARCH\n"), reply
    assert "<the new line" not in reply, reply
