"""The baseline agent: smolagents' stock `CodeAgent` with its default prompts, on our tools.

`python -m bench.real.baseline --repo R --out FILE [options] TURN [TURN ...]` runs each turn
(memory kept between turns, like `chat`) with `CodeAgent(tools=..., model=LiteLLMModel(...))`
and upstream's own prompt templates and code-block format. The tools are the project's tool
objects bound to the repository with the same settings, approver (approve all but a deny, as
`--yes`), sandbox and patch store as the command line, so only the agent differs. Writes one
JSON document to FILE: each turn's status, answer, steps and error, and every step's model
output, code, observation and error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def _settings(args: argparse.Namespace) -> Any:
    from smol_instruments.base.config import load_settings

    return load_settings(
        None,
        model_id=args.model_id,
        model_api_base=args.api_base,
        model_api_key=args.api_key,
        model_timeout_s=args.timeout,
        agent_max_steps=args.max_steps,
        model_backend="server",
        sandbox_backend="local",
        phoenix_enabled=False,
    )


def _steps(memory_steps: list[Any], turn: int) -> list[dict[str, Any]]:
    from smolagents import ActionStep

    out = []
    for step in memory_steps:
        if not isinstance(step, ActionStep):
            continue
        out.append(
            {
                "turn": turn,
                "step": step.step_number,
                "model_output": step.model_output
                if isinstance(step.model_output, str)
                else str(step.model_output or ""),
                "code": step.code_action,
                "observation": step.observations,
                "error": str(step.error) if step.error is not None else None,
                "final": bool(step.is_final_answer),
                "seconds": round(step.timing.duration or 0.0, 2) if step.timing else None,
            }
        )
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    from smolagents import CodeAgent, LiteLLMModel
    from smolagents.utils import AgentMaxStepsError

    from smol_instruments.safety.approval import AutoApprover
    from smol_instruments.sandbox.select import open_sandbox
    from smol_instruments.tools import build_tools
    from smol_instruments.tools.base import ToolContext

    settings = _settings(args)
    repo = Path(args.repo).resolve()
    ctx = ToolContext.create(
        repo, settings, approver=AutoApprover(), sandbox=open_sandbox(settings, repo)
    )
    model = LiteLLMModel(
        model_id=settings.model_id,
        api_base=settings.model_api_base,
        api_key=settings.model_api_key,
        temperature=settings.model_temperature,
        max_tokens=settings.model_max_tokens,
        timeout=settings.model_timeout_s,
    )
    agent = CodeAgent(
        tools=list(build_tools(ctx).values()), model=model, max_steps=settings.agent_max_steps
    )
    turns: list[dict[str, Any]] = []
    transcript: list[dict[str, Any]] = []
    try:
        for number, message in enumerate(args.turns):
            started = time.monotonic()
            before = len(agent.memory.steps)
            status, answer, error = "completed", "", None
            try:
                result = agent.run(message, reset=number == 0, return_full_result=True)
                answer = "" if result.output is None else str(result.output)
                last = agent.memory.steps[-1] if agent.memory.steps else None
                if isinstance(getattr(last, "error", None), AgentMaxStepsError):
                    status = "max_steps"
            except Exception as exc:  # the baseline's faults are results, not crashes
                status, error = "failed", f"{type(exc).__name__}: {exc}"[:2000]
            turn_steps = _steps(agent.memory.steps[0 if number == 0 else before :], number)
            transcript.extend(turn_steps)
            turns.append(
                {
                    "status": status,
                    "answer": answer,
                    "steps": len(turn_steps),
                    "error": error,
                    "seconds": round(time.monotonic() - started, 1),
                }
            )
    finally:
        ctx.sandbox.close()
    return {"turns": turns, "transcript": transcript}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real.baseline", description=__doc__)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--api-key", default="not-needed")
    parser.add_argument("--model-id", default="openai/local")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--max-steps", type=int, default=10)
    parser.add_argument("turns", nargs="+")
    args = parser.parse_args(argv)
    document = run(args)
    Path(args.out).write_text(json.dumps(document, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
