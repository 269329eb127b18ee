"""The loop's answers to what small models really do, through the real agent and LiteLLM.

Each test scripts the model with a habit seen in real runs (tests/support/transcripts.py has
more) and checks what the run then did: how many model calls, what the model was told, the
run's status and answer.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import hypothesis
import pytest
from hypothesis import strategies as st
from tests.support.scripted_model import ScriptedModel, Turn, estimate_tokens
from tests.test_agent import run, session_for

from smol_instruments.agent.outcome import NOT_DONE, claims_change
from smol_instruments.base.config import Settings

pytestmark = pytest.mark.timeout(180)


def block(code: str, before: str = "I will do that.") -> str:
    return f"{before}\n```python\n{code.strip()}\n```"


def test_a_final_answer_beside_tool_calls_waits_for_their_results(
    repo: Path, settings: Settings
) -> None:
    turns = [
        block('r = read_file(path="src/app.py")\nprint(r)\nfinal_answer("The code was fixed.")'),
        block('final_answer("app/calc.py exists; src/app.py does not.")'),
    ]
    outcome, requests = run(repo, settings, turns, "is there an src/app.py?")
    assert outcome.answer == "app/calc.py exists; src/app.py does not."
    seen = requests[1].prompt_text()
    assert "FILE_NOT_FOUND" in seen and "final_answer was not taken" in seen


def test_a_change_that_was_never_proposed_is_not_completed(repo: Path, settings: Settings) -> None:
    turns = [
        block('print(read_file(path="app/calc.py"))'),
        block('final_answer("I fixed the bug in add.")'),
        block('final_answer("I fixed the bug in add.")'),
    ]
    outcome, requests = run(repo, settings, turns, "Fix the bug in add() in app/calc.py")
    assert "no change has been proposed" in requests[2].prompt_text()  # one reminder
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith(NOT_DONE)
    assert (repo / "app" / "calc.py").read_text().count("a - b") == 1  # nothing was written


def test_a_placeholder_is_not_an_answer(repo: Path, settings: Settings) -> None:
    turns = [block('final_answer("...")'), block('final_answer("Hello! How can I help?")')]
    outcome, requests = run(repo, settings, turns, "hello")
    assert "placeholder" in requests[1].prompt_text()
    assert outcome.answer == "Hello! How can I help?"


def test_the_same_failing_reply_three_times_stops_the_run(repo: Path, settings: Settings) -> None:
    broken = block('print(read_file(path="app/calc.py")\n')  # a syntax error, again and again
    outcome, requests = run(repo, settings, [broken] * 3, "read calc", agent_max_steps=10)
    assert len(requests) == 3
    assert outcome.status == "failed"
    assert "stopped early" in (outcome.error or "") and "same failing reply" in outcome.answer


def test_the_same_change_refused_three_times_stops_the_run(repo: Path, settings: Settings) -> None:
    """A text change refused as written (it changes nothing) is a failing reply like one that
    raised: the second time, the next reply is sampled hotter; the third ends the run, not ten
    steps of it (dev infl-readme-usage). Control: two different refused replies and a right
    one propose the change."""
    line = (repo / "README.md").read_text().splitlines()[0]
    same = f"README.md\n<<<<<<< SEARCH\n{line}\n=======\n{line}\n>>>>>>> REPLACE\n"
    task = "add a Usage section to README.md"
    outcome, requests = run(
        repo, settings, [same] * 3, task, agent_max_steps=10, model_temperature=0.1
    )
    assert len(requests) == 3, [r.last_user_text()[-200:] for r in requests]
    assert [r.body["temperature"] for r in requests] == [0.1, 0.1, 0.8]
    assert outcome.status == "failed" and "same failing reply" in outcome.answer
    assert "(the edit changes nothing)" in outcome.answer, outcome.answer  # what it was told
    other = same.replace(f"=======\n{line}", f"=======\n{line} ")  # only a trailing space
    right = "README.md\n<<<<<<< SEARCH\n=======\n\n## Usage\n\nRun it.\n>>>>>>> REPLACE\n"
    turns = [same, other, right, "I added a Usage section."]
    outcome, requests = run(repo, settings, turns, task, agent_max_steps=10)
    assert "I proposed patch" in outcome.answer, outcome.answer


def test_calls_refused_as_loops_stop_the_run(repo: Path, settings: Settings) -> None:
    read = block('print(read_file(path="app/calc.py"))')
    outcome, requests = run(repo, settings, [read] * 4, "read calc", agent_max_steps=10)
    assert len(requests) == 4  # one read that ran, three refused
    assert outcome.status == "failed"
    assert "kept repeating read_file(path='app/calc.py')" in outcome.answer
    # What the model was reminded of is the file, not the previous refusal.
    last = requests[3].prompt_text()
    assert "Its result began: {'path': 'app/calc.py'" in last


def test_a_refused_repeat_makes_the_next_reply_hotter_once(repo: Path, settings: Settings) -> None:
    """At temperature 0.1 the same prompt gives the same reply: the next one is sampled hotter."""
    read = block('print(read_file(path="app/calc.py"))')
    turns = [read, read, block('final_answer("add() returns a - b.")')]
    outcome, requests = run(repo, settings, turns, "read calc", model_temperature=0.1)
    temperatures = [r.body["temperature"] for r in requests]
    assert temperatures == [0.1, 0.1, 0.8]  # after the refused repeat, once
    assert outcome.status == "completed"


def test_the_step_limit_summary_keeps_the_cached_prefix(repo: Path, settings: Settings) -> None:
    turns = [block(f'print(read_file(path="app/calc.py", start_line={i}))') for i in (1, 2)]
    turns.append("I read app/calc.py; add() returns a - b, which is the bug. Nothing was changed.")
    outcome, requests = run(repo, settings, turns, "look at calc", agent_max_steps=2)
    assert outcome.status == "max_steps"
    assert "add() returns a - b" in outcome.answer
    summary, last_step = requests[-1].messages, requests[-2].messages
    assert summary[: len(last_step)] == last_step or summary[0] == last_step[0]
    assert summary[0] == requests[0].messages[0]  # the same system prompt: a cache hit
    assert "step limit is reached" in str(summary[-1]["content"])
    # Every call's tokens are counted, the summary's too (smolagents never yields its step).
    sent = sum(estimate_tokens(r.prompt_text()) for r in requests)
    assert outcome.usage.prompt_tokens == sent


def test_a_reply_stops_at_its_first_block(repo: Path, settings: Settings) -> None:
    invented = (
        block('print(read_file(path="app/calc.py"))')
        + "\nThe observation is:\n```python\nprint(run_cmd(command='touch INVENTED'))\n```"
    )
    turns = [Turn(invented), block('final_answer("add() subtracts.")')]
    outcome, requests = run(repo, settings, turns, "what does calc do?")
    assert not (repo / "INVENTED").exists()
    assert outcome.answer == "add() subtracts."
    assert "INVENTED" not in requests[1].prompt_text()  # the history keeps only the first block


def test_a_block_without_a_language_is_not_cut_at_its_opening_fence(
    repo: Path, settings: Settings
) -> None:
    """Seen with a real 1.5B model: a stop at a bare fence left only "I will read the file"."""
    bare = 'I will read the file `app/calc.py`.\n```\nprint(read_file(path="app/calc.py"))\n```'
    turns = [Turn(bare), block('final_answer("add() returns a - b.")')]
    outcome, requests = run(repo, settings, turns, "What does add in app/calc.py return?")
    assert all(stop not in ("```", "\n```") for r in requests for stop in r.stop)
    assert "return a - b" in requests[1].prompt_text()  # the read ran; its result was seen
    assert outcome.status == "completed"


def test_a_reply_that_only_announces_a_plan_is_not_the_answer(
    repo: Path, settings: Settings
) -> None:
    """Seen with a real 1.5B model: the second "I will read..." was taken as the answer."""
    plan = "I will read the file `app/calc.py` to see what add returns."
    turns = [
        plan,  # sent back: read first
        plan,  # sent back again: do it now
        block('print(read_file(path="app/calc.py"))'),
        block('final_answer("add() returns a - b.")'),
    ]
    outcome, requests = run(repo, settings, turns, "What does add in app/calc.py return?")
    assert outcome.answer == "add() returns a - b."
    assert "You said what you will do" in requests[2].prompt_text()


def test_a_stream_that_ignores_the_stop_is_cut_after_the_first_block(
    repo: Path, settings: Settings
) -> None:
    """A server that does not honour `stop`: the client cuts the reply itself."""
    invented = block('print("first")') + "\nObservation: first\n```python\nprint('second')\n```"
    with ScriptedModel([Turn(invented), block('final_answer("ok")')]) as model:
        model.honour_stop = False
        session = session_for(repo, settings, model)
        session.run("say first")
        steps = [s for s in session.agent.memory.steps if getattr(s, "code_action", None)]
        session.close()
    assert steps[0].code_action.strip() == 'print("first")'


def test_a_first_request_larger_than_the_window_is_still_sent(
    repo: Path, settings: Settings
) -> None:
    """Nothing to trim before the first step (a long selection pasted into the task): the
    request goes as it is and the server says whether it fits; the run did not crash."""
    task = "explain this:\n" + "".join(f"line {i} " + "y" * 60 + "\n" for i in range(200))
    outcome, requests = run(
        repo,
        settings,
        [block('print(read_file(path="app/calc.py"))'), block('final_answer("a list")')],
        task,
        model_num_ctx=2048,
        model_max_tokens=256,
    )
    assert outcome.status == "completed", outcome
    assert "line 199 " in requests[0].prompt_text()


def test_history_is_trimmed_visibly_to_the_context_window(repo: Path, settings: Settings) -> None:
    (repo / "big.txt").write_text("".join(f"line {i} " + "x" * 60 + "\n" for i in range(120)))
    reads = [
        block(f'print(read_file(path="big.txt", start_line={s}, end_line={s + 40}))')
        for s in (1, 41, 81)
    ]
    turns = [*reads, block('final_answer("read it all")')]
    outcome, requests = run(
        repo, settings, turns, "read big.txt", model_num_ctx=2048, model_max_tokens=256
    )
    assert outcome.status == "completed"
    last = requests[-1].prompt_text()
    assert "was cut to fit the model's context window" in last
    assert "line 100" in last  # the newest output is whole


def test_long_old_replies_are_trimmed_to_the_context_window_too(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model (tc-no-color-wins, dev): two replies of 90 lines each, with
    their outputs, came to 8,255 tokens of an 8,192 window; the server refused the request and
    the run ended with its error. Old replies are cut like old outputs."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    filler = "".join(
        f"n{i} = '{' '.join(words[(i + k) % 8] * (1 + (i * k) % 3) for k in range(6))}'\n"
        for i in range(8)
    )
    turns = [
        block(filler + 'print(read_file(path="app/calc.py"))'),
        block(filler + 'print(read_file(path="app/main.py"))'),
        block('final_answer("read both")'),
    ]
    outcome, requests = run(
        repo, settings, turns, "read app/calc.py", model_num_ctx=2048, model_max_tokens=256
    )
    assert outcome.status == "completed", outcome
    last = requests[-1].prompt_text()
    assert "characters) was cut to fit the model's context window]" in last
    assert last.count("n7 = ") == 1  # the newest reply is whole, the old one cut


@pytest.mark.parametrize(
    ("answer", "claims"),
    [
        ("I fixed the bug and the patch was applied.", True),
        ("The test has been added.", True),
        ("The bug is in add(): it returns a - b.", False),
    ],
)
def test_which_answers_claim_a_change(answer: str, claims: bool) -> None:
    assert claims_change(answer) is claims


def test_the_history_has_no_tool_call_echo_and_says_what_comes_next(
    repo: Path, settings: Settings
) -> None:
    """A small model copies "Calling tools: [...]" into its replies; it is not in the history."""
    turns = [block('print(read_file(path="app/calc.py"))'), block('final_answer("a - b")')]
    _, requests = run(repo, settings, turns, "What does add in app/calc.py return?")
    text = requests[1].prompt_text()
    assert "Calling tools" not in text and "Last output from code snippet" not in text
    assert text.rstrip().endswith("otherwise make the next call.")
    assert "content: |\n  def add(a, b):\n      return a - b" in text  # the file, as lines


def test_prose_after_a_block_is_stopped_by_the_server_and_tokens_are_counted(
    repo: Path, settings: Settings
) -> None:
    """A stop after a closed block ends the reply at the server, which still reports usage."""
    chatty = block('print(read_file(path="app/calc.py"))') + "\n\nThe function returns a - b."
    turns = [Turn(chatty), block('final_answer("add() returns a - b.")')]
    outcome, requests = run(repo, settings, turns, "What does add in app/calc.py return?")
    assert "\n```\n\n" in requests[0].stop
    assert requests[0].reply is not None and "The function returns" not in requests[0].reply
    assert outcome.usage.prompt_tokens > 0 and outcome.usage.completion_tokens > 0


def test_an_answer_that_repeats_an_error_message_is_sent_back(
    repo: Path, settings: Settings
) -> None:
    """Seen with a real 1.5B model: the recovery suggestion of FILE_NOT_FOUND given as the answer."""
    turns = [
        block('print(read_file(path="NOTES_FROM_NOWHERE.md"))'),
        block(
            "final_answer(\"No file 'NOTES_FROM_NOWHERE.md'. Call list_files() or rg_search() "
            'to find the right path.")'
        ),
        block('print(read_file(path="app/calc.py"))'),
        block('final_answer("There are no notes; app/calc.py defines add and mul.")'),
    ]
    outcome, requests = run(repo, settings, turns, "What do the notes in this repository say?")
    assert outcome.answer == "There are no notes; app/calc.py defines add and mul."
    assert "that is the text of an error message" in requests[2].prompt_text()


def test_a_reply_that_repeats_a_line_is_cut_and_its_comments_are_the_answer(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model: the answer written as comments, then the same comment until the
    token limit (minutes on a CPU). The stream is cut at the repetition; the comments answer."""
    said = "# add() returns a - b although its name says it adds the two numbers.\n"
    looping = "```python\n" + said + "# It is used by the tests in tests/.\n" + said
    with ScriptedModel([Turn(looping, forever=True)]) as model:
        session = session_for(repo, settings, model)
        outcome = session.run("what does add() in app/calc.py return?")
        session.close()
        [request] = model.requests
    assert request.disconnected  # the client stopped reading: the server stops generating
    assert outcome.status == "completed"
    assert outcome.answer == (
        "add() returns a - b although its name says it adds the two numbers. "
        "It is used by the tests in tests/."
    )


def test_comment_lines_written_as_an_answer_are_its_sentences() -> None:
    """Seen on the 1.5B model (jp-explain-walk, dev): nine comment lines, no full stops, ran
    together as one sentence. A line that starts a capital is a new sentence; one that
    continues in lower case is joined as it was."""
    from smol_instruments.agent.loop import comments_only

    code = (
        "# The walk function takes a document and a part\n"
        "# If the part is '-', it returns an EndOfList\n"
        "# for the position past the last element\n"
        "# It raises otherwise.\n"
    )
    assert comments_only(code) == (
        "The walk function takes a document and a part. If the part is '-', it returns an "
        "EndOfList for the position past the last element. It raises otherwise."
    )
    assert comments_only("x = 1  # not an answer\n") is None


def test_a_block_with_only_a_short_comment_asks_for_the_call(
    repo: Path, settings: Settings
) -> None:
    turns = [
        "```python\n# Read the file.\n```",
        block('final_answer("add() returns a - b.")'),
    ]
    outcome, requests = run(repo, settings, turns, "what does add() in app/calc.py return?")
    assert "only a comment and no code" in requests[1].prompt_text()
    assert outcome.answer == "add() returns a - b."


@pytest.mark.parametrize(
    ("task", "told"),
    [
        ("what does add in app/calc.py return?", "Answer the task now, in plain sentences"),
        ("Fix the bug in add in app/calc.py", "Make the change now: one ```python block whose"),
    ],
)
def test_a_refused_repeat_is_told_what_to_do_with_the_result(
    repo: Path, settings: Settings, task: str, told: str
) -> None:
    """Seen on the 1.5B model: the same read_file four times, though the file was above."""
    read = block('print(read_file(path="app/calc.py"))')
    turns = [read, read, "add() returns a - b instead of a + b.", "I cannot make it."]
    outcome, requests = run(repo, settings, turns, task)
    assert told in requests[2].prompt_text()
    assert told not in requests[1].prompt_text()
    if "what does" in task:  # prose after reading is the answer
        assert outcome.status == "completed"
        assert outcome.answer == "add() returns a - b instead of a + b."


def test_code_written_without_its_fence_runs_and_is_not_the_answer(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model once prose answers were allowed: the call without its fence."""
    turns = [
        '# Read the file.\nresult = read_file(path="app/calc.py")\nprint(result)\n```',
        "add() returns a - b.",
    ]
    outcome, requests = run(repo, settings, turns, "what does the function adder do?")
    assert "def add(a, b)" in requests[1].prompt_text()  # it ran: its output was shown
    assert outcome.answer == "add() returns a - b."


def test_code_without_its_fence_runs_without_the_output_it_imagined_after_it(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model (dev tc-on-color-red): the call unfenced, a closing fence, then
    what it guessed the call printed. The call runs; its guessed output is no answer."""
    turns = [
        '# Look at the code first.\nprint(read_file(path="app/calc.py"))\n```\n'
        "The output of `read_file` is `None`.```",
        "add() returns a - b.",
    ]
    outcome, requests = run(repo, settings, turns, "what does the function adder do?")
    assert "def add(a, b)" in requests[1].prompt_text()  # it ran: its output was shown
    assert outcome.answer == "add() returns a - b."


def test_a_list_of_steps_to_take_is_not_the_answer(repo: Path, settings: Settings) -> None:
    plan = (
        "# Analyze the test failures\n# Find the function with the bug\n"
        "# Examine the test case and the function's implementation\n# Run the tests again"
    )
    read = block('print(read_file(path="app/calc.py"))')
    turns = [read, plan, read.replace("calc", "main"), "add() returns a - b."]
    outcome, requests = run(repo, settings, turns, "One of the tests fails. Which function?")
    assert "only a comment and no code, so nothing ran" in requests[2].prompt_text()
    assert outcome.answer == "add() returns a - b."


def test_a_follow_up_is_answered_from_what_an_earlier_turn_read(
    repo: Path, settings: Settings
) -> None:
    """Turn 2 ("which test checks it?") names no code; turn 1 read it: no read-first nudge."""
    with ScriptedModel(["add() returns a - b.", "test_add in tests/test_calc.py."]) as model:
        session = session_for(repo, settings, model)
        first = session.run("What does add in app/calc.py return?")
        second = session.run("Which test checks it?")
        session.close()
        requests = model.requests
    assert len(requests) == 2
    assert (first.status, second.status) == ("completed", "completed")
    assert second.answer == "test_add in tests/test_calc.py."
    # the code the conversation is about comes again, beside the follow-up that points at it
    follow_up = requests[1].last_user_text()
    assert "app/calc.py (the whole file)" in follow_up
    assert follow_up.index("def add(a, b)") < follow_up.index("The task: Which test checks it?")


def test_a_follow_up_that_points_at_nothing_gets_no_context_again(
    repo: Path, settings: Settings
) -> None:
    with ScriptedModel(["add() returns a - b.", "Hello!"]) as model:
        session = session_for(repo, settings, model)
        session.run("What does add in app/calc.py return?")
        session.run("Thanks, bye")
        session.close()
    assert "def add(a, b)" not in model.requests[1].last_user_text()


def test_an_error_retold_in_one_breath_is_not_an_answer(repo: Path, settings: Settings) -> None:
    """Seen on the 1.5B model: the message and its suggestion, retold as the answer."""
    snippet = block('print(read_file_snippet(path="app/calc.py", pattern="def nothing_here"))')
    retold = (
        "The pattern `def nothing_here` does not occur in `app/calc.py`. Use a shorter or "
        "simpler pattern, or rg_search(pattern=...) to search every file."
    )
    turns = [snippet, retold, "add() returns a - b."]
    outcome, requests = run(repo, settings, turns, "what does the function add do?")
    assert "that is the text of an error message" in requests[2].prompt_text()
    assert outcome.answer == "add() returns a - b."


def test_streamed_text_is_held_back_only_where_it_may_be_a_repeat() -> None:
    from smol_instruments.agent.repeats import safe_to_pass_on

    said = "# add() returns a - b although it is called add.\n"
    assert safe_to_pass_on("Thinking about it... ") == len("Thinking about it... ")
    assert safe_to_pass_on(said + "# It is used") == len(said + "# It is used")
    assert safe_to_pass_on(said + "# add() returns") == len(said)  # may become the repeat


def test_a_sentence_that_comes_back_in_one_line_is_cut_where_it_does() -> None:
    """Seen on the 1.5B model (dev infl-readme-usage): its summary wrote two sentences in turn,
    in one line, until its token limit (250 s); tc-on-color-red one sentence 40 times, in a
    line that quotes `on_color='red'`. Cut at the second saying, once there is a third."""
    from smol_instruments.agent.repeats import before_repetition, safe_to_pass_on

    said = "The Usage section was added. The patch will be written if the user accepts it."
    again = " The patch will be written if the user accepts it."
    assert before_repetition(said + again * 2 + " The patch") == said
    assert before_repetition(said + again) == said + again  # twice may be meant
    quoted = "It is called with `on_color='red'`. The parameter is not supported by colored."
    assert before_repetition(quoted + " The parameter is not supported by colored." * 3) == quoted
    # short sentences, or long ones said once, are not a repeat
    assert before_repetition("Yes. Yes. It is. It is.\n") == "Yes. Yes. It is. It is.\n"
    # the old and new part of a SEARCH/REPLACE block say the same sentences
    block = f"README.rst\n<<<<<<< SEARCH\n{said}\n=======\n{said}\n>>>>>>> REPLACE\n"
    assert before_repetition(block) == block
    # code says the same sentence in its old and new text (the red team's patch call was cut
    # mid-string when a second saying was cut): twice is no repeat, nor anything in a fence
    doc = "Return the sum of a and b. Both of the values may be floats or ints."
    call = f"propose_patch(old_text='{doc} x', new_text='{doc} y')\n"
    assert before_repetition(call) == call
    fenced = f"```python\n{call}print('{doc} {doc}')\n```\n"  # four times, in a fence
    assert before_repetition(fenced) == fenced
    # a sentence under way that so far repeats an earlier one is held back while streaming
    assert safe_to_pass_on(said + " The patch will") == len(said)
    assert safe_to_pass_on(said + " It applies") == len(said + " It applies")


@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.given(st.text(alphabet="ab .!?\n\t", max_size=60))
def test_a_sentence_starts_only_where_a_line_or_a_sentence_ends(text: str) -> None:
    """The look-behind that keeps a long line with no full stop from being scanned once per
    character (60 s to stream 4,000 characters; bench stream_watch) finds the same sentences
    as trying every position."""
    import re

    from smol_instruments.agent.repeats import _SENTENCE

    everywhere = re.compile(r"[^\n.!?]*[.!?](?=\s)")
    assert [m.span() for m in _SENTENCE.finditer(text)] == [
        m.span() for m in everywhere.finditer(text)
    ]


def test_a_call_written_before_an_empty_block_runs(repo: Path, settings: Settings) -> None:
    """Seen on the 1.5B model: the call unfenced, then a fence and the same call again, cut
    where it began to repeat: the block is empty, the call before it is what was meant."""
    call = '# Read the file app/calc.py to see add.\nresult = read_file(path="app/calc.py")\nprint(result)\n'
    turns = [Turn(call + "```python\n" + call, forever=True), "add() returns a - b."]
    outcome, requests = run(repo, settings, turns, "what does the function adder do?")
    assert "def add(a, b)" in requests[1].prompt_text()  # the call ran once; its output shown
    assert outcome.answer == "add() returns a - b."


def test_a_run_of_lines_that_differ_only_in_their_numbers_is_cut() -> None:
    """Seen on the 1.5B model writing a test: the same assert with 1, 2, 3, ... for 1,024
    tokens (9 minutes on a loaded CPU)."""
    from smol_instruments.agent.repeats import SAME_SHAPE_RUN, before_repetition

    head = "def test_truncate():\n"
    lines = [f'    assert truncate("A man, a plan", {i}, "!!!") == "!!!"\n' for i in range(30)]
    cut = before_repetition(head + "".join(lines))
    assert cut == head + "".join(lines[:SAME_SHAPE_RUN])
    varied = head + "    assert add(1, 2) == 3\n    assert add(2, 2) == 4\n    x = compute()\n"
    assert before_repetition(varied) == varied
    # a list of data, each line different (seen on the dev task tc-py314-classifier: the
    # classifiers of a pyproject.toml were cut at the ninth, mid-change): never cut
    data = "classifiers = [\n" + "".join(
        f'  "Programming Language :: Python :: 3.{v}",\n' for v in range(2, 15)
    )
    assert before_repetition(data + "]\n") == data + "]\n"


def test_the_new_lines_of_a_search_replace_block_may_repeat_the_old_ones() -> None:
    """Seen on the real model adding a README section: the REPLACE part keeps the long line
    the SEARCH part quotes, and the reply was cut there as a repeat, so the block never
    closed. Control: the same line twice within one part is still a repeat."""
    from smol_instruments.agent.repeats import before_repetition

    kept = "Run the tests with `python -m pytest` from the project's root folder.\n"
    block = (
        "README.md\n<<<<<<< SEARCH\n" + kept + "=======\n" + kept + "\n## Usage\n\n"
        "    python -m calc\n>>>>>>> REPLACE\n"
    )
    assert before_repetition(block) == block
    twice = "README.md\n<<<<<<< SEARCH\n" + kept + "=======\n" + kept + kept
    assert before_repetition(twice) == twice[: -len(kept)]


def test_a_change_may_repeat_a_line_under_another() -> None:
    """Seen on the 1.5B model (dev sv-bump-step): rewriting semver's class, the docstring line
    `>>> ver = semver.parse("3.4.5")` of bump_minor repeated bump_patch's, and the reply was
    cut there, mid-docstring, so no change was made. In a change, a line is a repeat only with
    the line before it; control: a function written twice over is still cut."""
    from smol_instruments.agent.repeats import before_repetition

    def bump(part: str) -> str:
        return (
            f'    def bump_{part}(self):\n        """Raise the {part} part of the version.\n\n'
            f"        :return: new object with the raised {part} part\n\n"
            '        >>> ver = semver.parse("3.4.5")\n        """\n'
            f"        return self._bump_{part}_of_the_version_now()\n\n"
        )

    change = "# file: src/semver/version.py\nclass Version:\n" + bump("patch") + bump("minor")
    assert before_repetition(change) == change
    again = change + bump("minor")
    assert before_repetition(again) == change + bump("minor").split("\n", 1)[0] + "\n"


QUOTE = "The wrong line is:\n```python\nreturn a - b\n```\nIt subtracts."
CALL = 'Reading.\n```python\nprint(read_file(path="a.py"))\n```'
CHANGE = "```python\n# file: a.py\nX = 1\n```"
DEFINES = "```python\ndef f():\n    return 1\n```"
QUOTE_THEN_CALL = (
    "It is:\n```python\nx = a - b\n```\nso:\n```python\nprint(rg_search(pattern='a'))\n```"
)


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        (QUOTE, QUOTE),  # a written answer quoting the wrong line: read past the quote
        (CALL + "\nObservation: x", CALL),  # a call, then an invented observation
        (CHANGE + "\nand more", CHANGE),  # a change block acts, and so does a definition
        (DEFINES + "\nand more", DEFINES),
        (QUOTE_THEN_CALL + "\nmore", QUOTE_THEN_CALL),  # a quote, then a call
    ],
)
def test_the_reply_ends_after_its_first_block_that_acts(reply: str, kept: str) -> None:
    from smol_instruments.agent.model import first_block_only

    assert first_block_only(reply, {"read_file", "rg_search"}) == kept


def test_a_follow_up_answered_with_the_previous_answer_is_sent_back(
    repo: Path, settings: Settings
) -> None:
    """Seen on the 1.5B model: turn 2 repeated turn 1's answer word for word."""
    first = "add() in app/calc.py returns a - b, the difference of its arguments."
    with ScriptedModel([first, first, "test_add in tests/test_calc.py."]) as model:
        session = session_for(repo, settings, model)
        session.run("What does add in app/calc.py return?")
        second = session.run("Which test checks it?")
        session.close()
        requests = model.requests
    assert "that is your answer to the previous question" in requests[2].prompt_text()
    assert second.answer == "test_add in tests/test_calc.py."
    # the first answer is in the history once, as the model wrote it, not echoed as output
    assert requests[1].prompt_text().count(first) == 1


def test_an_answer_with_the_wrong_test_counts_is_sent_back_once(
    repo: Path, settings: Settings, venv_python_first: None
) -> None:
    """Seen on the 1.5B model: run_tests printed "1 failed, 4 passed", the answer said
    "10 failed, 4 passed". The sample's tests: test_add fails, test_mul passes."""
    turns = [block("print(run_tests())"), "10 failed, 1 passed.", "1 failed, 1 passed."]
    outcome, requests = run(
        repo, settings, turns, "Run the tests and tell me how many pass and how many fail."
    )
    assert len(requests) == 3
    told = requests[2].last_user_text()
    assert "the tests printed '1 failed, 1 passed', but this answer says 10 failed" in told
    assert outcome.status == "completed" and outcome.answer == "1 failed, 1 passed."


def test_right_test_counts_in_other_words_are_the_answer(
    repo: Path, settings: Settings, venv_python_first: None
) -> None:
    turns = [block("print(run_tests())"), "One test fails (test_add) and 1 test passes."]
    outcome, requests = run(repo, settings, turns, "Run the tests: how many pass?")
    assert len(requests) == 2 and outcome.answer.startswith("One test fails")


def test_wrong_test_counts_given_again_come_with_the_printed_ones(
    repo: Path, settings: Settings, venv_python_first: None
) -> None:
    """Seen on the 1.5B model: told the counts were wrong, it gave the same ones again."""
    turns = [block("print(run_tests())"), "10 failed, 1 passed.", "10 failed, 1 passed."]
    outcome, requests = run(repo, settings, turns, "Run the tests: how many fail?")
    assert len(requests) == 3
    said, note = outcome.answer.split("\n\n")
    assert said == "10 failed, 1 passed."
    assert note.startswith("Note: the tests printed '1 failed, 1 passed")
    assert note.endswith("the counts above are the model's and differ.")


def test_a_change_s_answer_is_not_held_to_the_counts_of_the_run_before_it(
    repo: Path, settings: Settings, venv_python_first: None
) -> None:
    """A change's answer quoting its patch's checks ("0 failed, 2 passed") is told from the
    diff, not compared with the tests run before the change (dev sv-finalize-keep-build got a
    "counts differ" note for its validation's counts)."""
    change = "```python\n# file: app/calc.py\ndef add(a, b):\n    return a + b\n```"
    turns = [block("print(run_tests())"), change, "Fixed add: 0 failed, 2 passed."]
    outcome, requests = run(repo, settings, turns, "test_add fails, fix add in app/calc.py")
    assert len(requests) == 3  # not sent back
    assert "the counts above are the model's" not in outcome.answer
    assert "0 failed, 2 passed" in outcome.answer


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("1 failed, 4 passed", {"failed": 1, "passed": 4}),
        ("4 tests pass and 1 test fails.", {"passed": 4, "failed": 1}),
        ("4 of 5 tests pass", {"passed": 4}),
        ("4 of the 5 tests passed; 1 has failed", {"passed": 4, "failed": 1}),
        ("There are 5 tests.", {}),
    ],
)
def test_how_an_answer_states_test_counts(answer: str, said: dict[str, int]) -> None:
    from smol_instruments.agent.answers import _SAID_COUNT, _kind

    assert {_kind(word): int(n) for n, word in _SAID_COUNT.findall(answer)} == said


def test_a_summary_in_words_is_a_summary_too() -> None:
    from smol_instruments.agent.answers import _RUN_SUMMARY

    assert _RUN_SUMMARY.findall("summary: 1 test failed, 4 tests passed (0.46 s)") == [
        "1 test failed, 4 tests passed "
    ]
    assert _RUN_SUMMARY.findall("1 failed, 4 passed in 0.46s") == ["1 failed, 4 passed "]


def test_the_previous_answer_again_is_never_the_answer_to_a_different_question(
    repo: Path, settings: Settings
) -> None:
    """Seen in the editor: a follow-up got the previous answer word for word. Told once, the
    model repeats it again: shown as what it is, and the run is not `completed`."""
    first = "add() in app/calc.py returns a - b, the difference of its arguments."
    with ScriptedModel([first, first, first]) as model:
        session = session_for(repo, settings, model)
        session.run("What does add in app/calc.py return?")
        second = session.run("Which test checks it?")
        session.close()
    assert second.status == "incomplete"
    assert second.answer.startswith("Not answered: the model gave its answer to the previous")


def test_a_bug_stated_with_no_change_verb_is_a_fix_and_proposing_nothing_is_not_done(
    repo: Path, settings: Settings
) -> None:
    """Told as a statement of what is wrong, with no change verb, the request is a bug report:
    a fix to propose, and a run that proposed nothing says so first."""
    said = "add() returns a - b."  # sent back once to write the change, it says it again
    turns = [block('print(read_file(path="app/calc.py"))'), said, said]
    task = "the add function subtracts, but the readme says it adds"
    outcome, _ = run(repo, settings, turns, task)
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith("Not done: no change was proposed")
    assert "add() returns a - b." in outcome.answer
    assert (repo / "app" / "calc.py").read_text().count("a - b") == 1


def test_a_question_that_may_ask_for_a_change_and_changes_nothing_is_not_completed(
    repo: Path, settings: Settings
) -> None:
    """Asked as a question about what could be, the request may ask for a change: answered
    with nothing changed, the run is not `completed` and says how to ask for the change."""
    turns = [block('print(read_file(path="app/calc.py"))'), "add() takes two numbers."]
    outcome, _ = run(repo, settings, turns, "can add take a third number?")
    assert outcome.status == "incomplete"
    assert outcome.answer.startswith("add() takes two numbers.")
    assert "nothing was changed" in outcome.answer


def test_a_request_to_act_outside_the_repository_is_declined_in_one_step(
    repo: Path, settings: Settings
) -> None:
    from tests.test_agent import tree_digest

    before = tree_digest(repo)
    outcome, requests = run(
        repo, settings, [], "publish this to pypi for me, the token is in ~/.pypirc"
    )
    assert requests == []  # no model call: nothing read, nothing run
    assert outcome.status == "completed" and outcome.steps == 1
    assert outcome.answer.startswith("I won't do that: it acts outside this repository")
    assert outcome.answer.endswith("Nothing was changed.")
    assert tree_digest(repo) == before


def test_another_smolagents_version_is_refused_saying_what_to_do() -> None:
    """agent/adapter.py overrides private methods of the smolagents version it names: under
    another version it is not imported, and the error says what to do."""
    code = (
        "import smolagents\nsmolagents.__version__ = '9.9.9'\nimport smol_instruments.agent.adapter"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode != 0
    assert "smolagents 9.9.9 is installed" in result.stderr, result.stderr
    assert "bash .ci/setup" in result.stderr and "WRITTEN_FOR" in result.stderr


def test_a_request_the_server_refuses_as_too_long_says_what_to_do(settings: Settings) -> None:
    """Seen on the 1.5B model (tc-no-color-wins, dev): the run ended with litellm's exception
    text as its answer."""
    from smol_instruments.agent.session import _model_error_message, _recovery_for

    refused = Exception(
        "litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: "
        "OpenAIException - request (8255 tokens) exceeds the available context size (8192 tokens)"
    )
    said = _model_error_message(refused, settings)
    assert said == "the request no longer fits the model's context window, even shortened"
    assert "MODEL_NUM_CTX" in (_recovery_for(said) or "")
    # control: another server error is passed on as it is
    assert _model_error_message(Exception("bad gateway"), settings) == "bad gateway"


def test_an_error_retold_as_smolagents_shows_it_is_not_an_answer() -> None:
    """Seen on the 1.5B model (dev infl-find-ordinal-bug): a final-answer check's error came
    back as the answer the way smolagents shows it ("Error:", the message, its "Now let's
    retry: ..."), and the run ended `completed`. Controls: the answer the check sent back, given
    again, and an answer that quotes an "Error:" line of an observation, are no retold error."""
    from smolagents import ActionStep
    from smolagents.memory import AgentMemory
    from smolagents.monitoring import AgentLogger, LogLevel, Timing
    from smolagents.utils import AgentError

    from smol_instruments.agent.answers import _echoes_an_error

    said = "The last commit dropped abs() from ordinal, so negative numbers get the wrong suffix."
    error = AgentError(
        "Check the_failures_are_named failed with error: the test runner reported these tests "
        "failing: test_inflection.py::test_ordinal; this answer does not name test_ordinal. "
        "Answer again, naming each failing test.",
        AgentLogger(level=LogLevel.OFF),
    )
    step = ActionStep(step_number=1, timing=Timing(start_time=0.0), model_output=said)
    step.error = error
    read = ActionStep(step_number=2, timing=Timing(start_time=0.0))
    read.observations = "Error: ordinal(-1) gave 'th'\nin test_ordinal, ordinal(-1) gave 'th'"
    memory = AgentMemory(system_prompt="")
    memory.steps.extend([read, step])
    shown = next(
        part["text"]
        for message in step.to_messages()
        for part in message.content
        if "Now let's retry" in part.get("text", "")
    )
    retold = shown[shown.index("Error:") :]
    assert _echoes_an_error(retold, memory)
    assert not _echoes_an_error(said, memory)  # control: its own answer again
    assert not _echoes_an_error("Error: ordinal(-1) gave 'th' in test_ordinal", memory)
