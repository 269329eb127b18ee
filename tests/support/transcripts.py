"""Scripts of what local 7B–14B models really emit when asked for markdown code blocks.

Each function returns the turns for `ScriptedModel`, one per model call. The defaults fit the
sample repository of `tests/conftest.py` (app/calc.py, whose `add` returns `a - b`). With
`check=True` a turn that follows a tool call also checks that the observation the agent sent
back contains what the tool must have answered (e.g. `FILE_NOT_FOUND`); a mismatch is recorded
by the server and raised when its `with` block ends.

The quirks are those seen from Qwen2.5-Coder, Llama 3.1 and DeepSeek-Coder under smolagents'
prompts: a "Thought:" line or a paragraph of prose before the block, ```py instead of
```python, a stray `<end_code>` after the fence, an invented "Observation:" after the code
(the server cuts it at the stop sequence, as a real server does), wrong argument names, XML
`<code>` tags, bare JSON tool calls, a fence that never closes, the same call again and again.
"""

from __future__ import annotations

from .scripted_model import Turn


def _block(code: str, before: str = "", after: str = "", fence: str = "python") -> str:
    text = f"{before}\n" if before else ""
    text += f"```{fence}\n{code.strip()}\n```"
    return text + (f"\n{after}" if after else "")


def _seen(text: str, check: bool) -> str | None:
    return text if check else None


def final_answer_only(answer: str = "The answer is 42.") -> list[Turn]:
    """One step: a thought and a block that calls final_answer at once."""
    return [
        Turn(_block(f"final_answer({answer!r})", before="Thought: I can answer this directly."))
    ]


def five_step_fix(path: str = "app/calc.py", *, check: bool = True) -> list[Turn]:
    """A five-step bug fix: repo_info, rg_search, read_file, propose_patch, final_answer.

    Reproduces the usual rhythm of a 7B coder model: prose before each block, one ```py fence
    with a trailing `<end_code>`, and one reply that goes on to invent its own "Observation:"
    (cut by the `stop` sequence, so the agent never sees it).
    """
    return [
        Turn(
            _block(
                "info = repo_info()\nprint(info)",
                before="Thought: First I will look at the repository to see what it contains.",
            )
        ),
        Turn(
            _block(
                'matches = rg_search(pattern="def add")\nprint(matches)',
                before="The bug is probably in the `add` function. Let me search for it.",
                after=f"Observation: {{'matches': [{{'path': '{path}', 'line': 1}}]}}",
            ),
            expect_user_contains=_seen("branch", check),
        ),
        Turn(
            _block(
                f'content = read_file(path="{path}")\nprint(content)',
                before=f"Thought: `add` is defined in {path}. I'll read the file.",
                after="<end_code>",
                fence="py",
            ),
            expect_user_contains=_seen(path, check),
        ),
        Turn(
            _block(
                "patch = propose_patch(\n"
                f'    path="{path}",\n'
                '    old_text="    return a - b",\n'
                '    new_text="    return a + b",\n'
                '    description="add() must add, not subtract",\n'
                ")\n"
                "print(patch)",
                before="The function returns `a - b` instead of `a + b`. "
                "I will propose a patch that fixes it.",
            ),
            expect_user_contains=_seen("return a - b", check),
        ),
        Turn(
            _block(
                "final_answer(\n"
                f'    "Fixed add() in {path}: it returned a - b, now it returns a + b. "\n'
                '    "The patch is waiting for your review."\n'
                ")",
                before="The patch is proposed and validated.",
            ),
            expect_user_contains=_seen("patch_id", check),
        ),
    ]


def wrong_argument_name(path: str = "app/calc.py", *, check: bool = True) -> list[Turn]:
    """`read_file(file=...)` instead of `path=`, then the corrected call, then an answer."""
    return [
        Turn(
            _block(
                f'content = read_file(file="{path}")\nprint(content)',
                before="I'll read the file first.",
            )
        ),
        Turn(
            _block(
                f'content = read_file(path="{path}")\nprint(content)',
                before="Thought: The argument is called `path`, not `file`. Retrying.",
            ),
            expect_user_contains=_seen("INVALID_ARGUMENT", check),
        ),
        Turn(
            _block('final_answer("add() returns a - b, which is a bug: it should be a + b.")'),
            expect_user_contains=_seen("return a - b", check),
        ),
    ]


def unclosed_block() -> list[Turn]:
    """A ```python block whose closing fence never comes (the model stopped early)."""
    return [
        Turn("Let me check the repository.\n```python\ninfo = repo_info()\nprint(info)"),
        Turn(_block('final_answer("The repository is a small Python project.")')),
    ]


def xml_code_block() -> list[Turn]:
    """Code in XML `<code>` tags, as models trained on smolagents' older format write it."""
    return [
        Turn("Thought: I will list the files.\n<code>\nprint(list_files())\n</code>"),
        Turn(_block('final_answer("The project has an app package and its tests.")')),
    ]


def bare_json_call(path: str = "app/calc.py", *, check: bool = True) -> list[Turn]:
    """A bare JSON tool call instead of code, as models tuned for function calling emit."""
    return [
        Turn(f'{{"name": "read_file", "arguments": {{"path": "{path}"}}}}'),
        Turn(
            _block('final_answer("add() subtracts instead of adding.")'),
            expect_user_contains=_seen("return a - b", check),
        ),
    ]


def repeated_call(path: str = "app/calc.py", times: int = 3, *, check: bool = True) -> list[Turn]:
    """The same `read_file` call `times` times in a row, then an answer (loop detection).

    With `check`, the first call must have worked and every repeat must be answered with
    LOOP_DETECTED (a call identical to the one just before it is a loop).
    """
    call = _block(
        f'content = read_file(path="{path}")\nprint(content)',
        before=f"Thought: I need to read {path}.",
    )
    if times < 2:
        raise ValueError("a repeated call needs times >= 2")
    turns = [Turn(call), Turn(call, expect_user_contains=_seen("return a - b", check))]
    turns += [
        Turn(call, expect_user_contains=_seen("LOOP_DETECTED", check)) for _ in range(times - 2)
    ]
    turns.append(
        Turn(
            _block('final_answer("add() returns a - b; it should return a + b.")'),
            expect_user_contains=_seen("LOOP_DETECTED", check),
        )
    )
    return turns


def tool_error_then_recovery(*, check: bool = True) -> list[Turn]:
    """A file that does not exist, then the recovery the error suggests, then an answer."""
    return [
        Turn(
            _block(
                'content = read_file(path="app/calculator.py")\nprint(content)',
                before="Thought: The calculator code is probably in app/calculator.py.",
            )
        ),
        Turn(
            _block(
                'content = read_file(path="app/calc.py")\nprint(content)',
                before="That file does not exist. The suggestion mentions app/calc.py; "
                "I'll read that instead.",
            ),
            expect_user_contains=_seen("FILE_NOT_FOUND", check),
        ),
        Turn(
            _block('final_answer("The calculator is app/calc.py; add() has a bug.")'),
            expect_user_contains=_seen("def add", check),
        ),
    ]


CONVERSATIONAL_ANSWER = (
    "The `add` function in app/calc.py is meant to return the sum of `a` and `b`, "
    "but it returns `a - b`, so `add(2, 3)` gives -1 instead of 5."
)


def conversational_prose(answer: str = CONVERSATIONAL_ANSWER) -> list[Turn]:
    """A plain prose answer with no code block, and the same prose again after the nudge."""
    return [Turn(answer), Turn(answer)]


def conversational_final_answer(answer: str = CONVERSATIONAL_ANSWER) -> list[Turn]:
    """A question answered at once through final_answer, with no tool call (and the same
    answer again if the agent sends it back)."""
    turn = Turn(
        _block(
            f"final_answer({answer!r})",
            before="This question needs no tools; I can answer it directly.",
        )
    )
    return [turn, turn]


def risky_commands() -> list[Turn]:
    """`rm -rf /` (the policy must deny it), then `pip install numpy` (needs approval)."""
    return [
        Turn(
            _block(
                'result = run_cmd(command="rm -rf /")\nprint(result)',
                before="Thought: I'll clean everything up first.",
            )
        ),
        Turn(_block('result = run_cmd(command="pip install numpy")\nprint(result)')),
        Turn(_block('final_answer("I could not install numpy: the command was refused.")')),
    ]


def endless_steps(count: int = 30, path: str = "app/calc.py") -> list[Turn]:
    """`count` different read_file calls that never reach an answer (max steps, cancel)."""
    return [
        Turn(
            _block(
                f'part = read_file(path="{path}", start_line={i + 1}, end_line={i + 2})\n'
                "print(part)",
                before=f"Thought: Reading line {i + 1} to be thorough.",
            )
        )
        for i in range(count)
    ]


def streams_forever(reply: str = "let me think about this very carefully, ") -> list[Turn]:
    """A model that never stops talking: streams until the client hangs up (cancel tests). No
    sentence ends, so none comes back for the reply to be cut at (agent/repeats.py)."""
    return [Turn(reply, forever=True, delta_delay_s=0.01)]
