"""Figures for the model's streamed reply: the daemon's model class reads a long reply from the
scripted server, watching each delta for a repeat (agent/repeats.py) and for the end of its
first code block, as a run does.

The reply under test never ends a sentence (one long line of clauses joined by commas: what a
small model writes when it rambles); the baseline is a reply of the same size and shape made
of sentences that each end. Both run through the same code in the same process, alternately.
Before the sentence pattern started only where a line or a sentence ends, each delta of the
first took time in proportion to the whole line so far, squared: 4,000 characters took 60 s.
"""

from __future__ import annotations

import time

from .figures import Figure, _median_alternating, _scripted_settings


def _reply(chars: int, end: str) -> str:
    parts, size, n = [], 0, 0
    while size < chars:
        part = f"then step {n} of the plan reads the next file and checks it{end} "
        parts.append(part)
        size += len(part)
        n += 1
    return "".join(parts)


def _read_whole(model: object, messages: list[dict[str, str]], reply: str) -> float:
    start = time.perf_counter()
    text = "".join(d.content or "" for d in model.generate_stream(messages))  # type: ignore[attr-defined]
    took = time.perf_counter() - start
    if not text.startswith(reply.strip()):  # a reply cut short would time less work
        raise AssertionError(f"the reply came back as {len(text)} of {len(reply)} characters")
    return took


def stream_watch(quick: bool = False) -> list[Figure]:
    from tests.support.scripted_model import ScriptedModel, Turn

    from smol_instruments.agent.model import build_model

    chars, rounds = (3000, 3) if quick else (12000, 7)
    rambling, sentences = _reply(chars, ","), _reply(chars, ".")
    turns = [Turn(text, chunk_chars=4) for _ in range(rounds + 1) for text in (rambling, sentences)]
    with ScriptedModel(turns) as scripted:
        settings = _scripted_settings(scripted, model_max_tokens=4 * chars)
        model = build_model(settings)
        messages = [{"role": "user", "content": "go on"}]
        _read_whole(model, messages, rambling)  # warm up both
        _read_whole(model, messages, sentences)
        ours, baseline = _median_alternating(
            lambda: _read_whole(model, messages, rambling),
            lambda: _read_whole(model, messages, sentences),
            rounds,
        )
    deltas = chars // 4
    return [
        Figure(
            "stream_watch",
            f"a {chars:,}-character streamed reply that ends no sentence vs one that does",
            ours * 1000,
            "ms",
            baseline * 1000,
            target=2.0,
            target_on="ratio",
            note=f"about {deltas:,} deltas of 4 characters each, read through the model class; "
            f"{ours / deltas * 1e6:.0f} µs per delta; each reply checked to come back whole",
        )
    ]
