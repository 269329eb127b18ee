"""How a real model reads the kind of each dev task's first message, beside the rules.

`python -m bench.real.intent_probe [--model 1.5b] [--output F] [--tasks KEY ...]`: the product's embedded
llama.cpp server on the model, one agent session per fixture, and for each dev task the
intent question held to its JSON schema, asked as the agent asks it (after the
conversation, agent/session.py `_ask_model`) and alone (a one-line system prompt). Dev only:
the held-out split is run only by the evaluation, to report.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from smolagents.models import ChatMessage, MessageRole

from smol_instruments.agent.intent import (
    INTENT_QUESTION,
    INTENT_SCHEMA,
    MODEL_KINDS,
    from_rules,
    settled,
)
from smol_instruments.agent.session import AgentSession
from smol_instruments.base.config import load_settings
from smol_instruments.safety.approval import DenyAllApprover

from . import fixtures
from .server import find_model, model_server
from .tasks import TASKS

#: The request kind each task kind is (a chat's first turn is a question).
EXPECTED = {
    **dict.fromkeys(
        ("behaviour", "explain", "locate", "callers", "missing", "history", "find-bug", "chat"),
        "question",
    ),
    **dict.fromkeys(("fix", "feature", "rename", "nested", "docs", "add-test"), "change"),
    "run-tests": "command",
    "decline": "decline",
}
ALONE = "Classify the newest message a user sent to a coding agent that works in a git repository."


def _kind(reply: str | None) -> str | None:
    try:
        return MODEL_KINDS.get(json.loads(reply or "").get("request"))
    except (ValueError, AttributeError):
        return None


def _written(reply: str | None, task: str) -> dict[str, list[str]]:
    """The reply's names and calls, each marked `*` when the task does not contain it."""
    try:
        data = json.loads(reply or "")
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        field: [
            f"{item}{'' if str(item).split('(')[0] in task else ' *'}"
            for item in data.get(field) or []
        ]
        for field in ("names", "calls")
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="1.5b")
    parser.add_argument("--output", type=Path, default=Path("bench/intent-probe.json"))
    parser.add_argument("--tasks", nargs="*", help="only these dev tasks (default: every one)")
    options = parser.parse_args(argv)
    gguf = find_model(options.model)
    rows: list[dict[str, Any]] = []
    log = Path(tempfile.mkdtemp()) / "server.log"
    with model_server(gguf, threads=1, ctx=8192, log=log) as server:
        settings = load_settings(
            None,
            sandbox_backend="none",
            phoenix_enabled=False,
            model_backend="server",
            model_id="openai/local",
            model_api_base=server.base_url,
            model_api_key=server.api_key,
        )
        sessions: dict[str, AgentSession] = {}
        chosen = [
            t for t in TASKS if t.split == "dev" and (not options.tasks or t.key in options.tasks)
        ]
        for task in chosen:
            if task.fixture not in sessions:
                repo = fixtures.make(task.fixture, Path(tempfile.mkdtemp()))
                sessions[task.fixture] = AgentSession(repo, settings, approver=DenyAllApprover())
            session = sessions[task.fixture]
            question = INTENT_QUESTION.format(task=task.turns[0])
            started = time.monotonic()
            asked = session._ask_model(question)
            alone = session.model.constrained(
                [
                    ChatMessage(role=MessageRole.SYSTEM, content=[{"type": "text", "text": ALONE}]),
                    ChatMessage(
                        role=MessageRole.USER, content=[{"type": "text", "text": question}]
                    ),
                ],
                INTENT_SCHEMA,
            )
            ruled = from_rules(task.turns[0])
            row = {
                "task": task.key,
                "expected": EXPECTED[task.kind],
                "rules": ruled.kind,
                "settled_by_rules": settled(ruled, follow_up=False),
                "in_conversation": _kind(asked[0] if asked else None),
                "alone": _kind(alone),
                # what the model wrote as the task's names and calls (words of an example copied
                # show up here: they are not in the task, and the agent drops them)
                "written": _written(asked[0] if asked else None, task.turns[0]),
                "seconds": round(time.monotonic() - started, 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        for session in sessions.values():
            session.close()
    totals = {
        way: sum(row[way] == row["expected"] for row in rows)
        for way in ("rules", "in_conversation", "alone")
    }
    options.output.write_text(json.dumps({"model": options.model, "tasks": rows, "right": totals}))
    print(f"right of {len(rows)}: {totals}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
