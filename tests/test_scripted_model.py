"""The scripted model server, through the real LiteLLM client and a real smolagents CodeAgent."""

from __future__ import annotations

import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.support import transcripts
from tests.support.scripted_model import (
    RecordedRequest,
    ScriptedModel,
    Turn,
    cut_at_stop,
    estimate_tokens,
)

from smol_instruments.base.config import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
SMOLAGENTS_STOP = ["Observation:", "Calling tools:"]
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before the import
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def complete(litellm: ModuleType, model: ScriptedModel, **kwargs: Any) -> Any:
    kwargs.setdefault("messages", HI)
    return litellm.completion(model=model.model_id, api_base=model.base_url, api_key="x", **kwargs)


def get(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


# --- the raw protocol, through LiteLLM -------------------------------------------------------


def test_non_streaming_reply_with_usage_and_stop_cut(litellm: ModuleType) -> None:
    reply = "Thought: done.\n```python\nfinal_answer('hi')\n```\nObservation: invented"
    with ScriptedModel([reply]) as model:
        response = complete(litellm, model, stop=SMOLAGENTS_STOP)

    sent = "Thought: done.\n```python\nfinal_answer('hi')\n```\n"
    assert response.choices[0].message.content == sent
    assert response.choices[0].finish_reason == "stop"
    assert response.usage.prompt_tokens == estimate_tokens("hi")
    assert response.usage.completion_tokens == estimate_tokens(sent)
    request = model.requests[-1]
    assert request.body["model"] == "scripted"  # LiteLLM strips the "openai/" provider
    assert request.stop == SMOLAGENTS_STOP
    assert not request.stream
    assert request.reply == sent
    assert request.headers["authorization"] == "Bearer x"
    assert model.last_user_text() == "hi"


def test_streaming_sends_small_deltas_then_usage(litellm: ModuleType) -> None:
    reply = "Let me look.\n```python\nprint(repo_info())\n```\nCalling tools: invented"
    with ScriptedModel([Turn(reply, chunk_chars=5)]) as model:
        chunks = list(
            complete(
                litellm,
                model,
                stop=SMOLAGENTS_STOP,
                stream=True,
                stream_options={"include_usage": True},
            )
        )

    sent = cut_at_stop(reply, SMOLAGENTS_STOP)
    deltas = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert "".join(deltas) == sent
    assert len(deltas) == -(-len(sent) // 5)
    assert any(c.choices and c.choices[0].finish_reason == "stop" for c in chunks)
    usage = [c.usage for c in chunks if getattr(c, "usage", None)]
    assert usage and usage[-1].completion_tokens == estimate_tokens(sent)
    assert usage[-1].prompt_tokens == estimate_tokens("hi")
    request = model.requests[-1]
    assert request.stream and request.include_usage
    assert request.body["stream_options"] == {"include_usage": True}


def test_stream_has_no_usage_chunk_unless_asked(litellm: ModuleType) -> None:
    with ScriptedModel(["plain"]) as model:
        raw = _raw_post(model, {"model": "scripted", "messages": HI, "stream": True})
    events = [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    payloads = [json.loads(e) for e in events[:-1]]
    assert all("usage" not in p for p in payloads)
    assert payloads[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert payloads[-1]["choices"][0]["finish_reason"] == "stop"


def test_error_status_is_one_failed_call(litellm: ModuleType) -> None:
    with ScriptedModel([Turn(status=500, error="model crashed"), "fine"]) as model:
        with pytest.raises(litellm.InternalServerError, match="model crashed"):
            complete(litellm, model)
        assert [r.status for r in model.requests] == [500]  # x-should-retry: false obeyed
        assert complete(litellm, model).choices[0].message.content == "fine"


def test_retryable_error_is_retried_into_the_next_turn(litellm: ModuleType) -> None:
    with ScriptedModel([Turn(status=503, retryable=True), "after the retry"]) as model:
        response = complete(litellm, model)
    assert response.choices[0].message.content == "after the retry"
    assert [(r.status, r.retry_count) for r in model.requests] == [(503, 0), (200, 1)]


def test_garbage_body_fails_the_call(litellm: ModuleType) -> None:
    with (
        ScriptedModel([Turn(body="<html>bad gateway</html>")]) as model,
        pytest.raises(litellm.InternalServerError, match="Expecting value"),
    ):
        complete(litellm, model)
    assert model.requests[-1].status == 200


def test_exhausted_script_answers_500_and_fails_the_block(litellm: ModuleType) -> None:
    # The failure recorded by the second call is raised when the block ends.
    with pytest.raises(AssertionError, match="script exhausted"), ScriptedModel(["one"]) as model:
        complete(litellm, model)
        with pytest.raises(litellm.InternalServerError, match="script exhausted"):
            complete(litellm, model)
    assert len(model.requests) == 2


def test_fallback_answers_after_the_script(litellm: ModuleType) -> None:
    with ScriptedModel(["first"], fallback="again") as model:
        texts = [complete(litellm, model).choices[0].message.content for _ in range(3)]
        model.extend(["extended"])
        texts.append(complete(litellm, model).choices[0].message.content)
    assert texts == ["first", "again", "again", "extended"]
    assert [r.turn for r in model.requests] == [0, None, None, 1]


def test_expectations_are_checked_and_recorded(litellm: ModuleType) -> None:
    def asks_for_stop(request: RecordedRequest) -> bool:
        return request.stop == SMOLAGENTS_STOP

    turns = [
        Turn("a", expect_user_contains="hi"),
        Turn("b", expect_user_contains="FILE_NOT_FOUND"),
        Turn("c", expect=asks_for_stop),
    ]
    with ScriptedModel(turns, strict=False) as model:
        for _ in turns:
            complete(litellm, model)
    assert len(model.failures) == 2
    assert "lacks 'FILE_NOT_FOUND'" in model.failures[0]
    assert "asks_for_stop is False" in model.failures[1]
    with pytest.raises(AssertionError, match="FILE_NOT_FOUND"):
        model.assert_ok()


def test_delay_longer_than_the_client_timeout(litellm: ModuleType) -> None:
    with ScriptedModel([Turn("late", delay_s=8)]) as model:
        started = time.monotonic()
        with pytest.raises(litellm.Timeout):
            complete(litellm, model, timeout=0.5, max_retries=0)  # retries take further turns
        assert time.monotonic() - started < 7  # the client gave up before the reply came
        request = model.requests[-1]
        assert request.done.wait(20)
        assert request.disconnected


def test_streaming_stops_when_the_client_closes_the_stream(litellm: ModuleType) -> None:
    with ScriptedModel(transcripts.streams_forever()) as model:
        stream = complete(litellm, model, stream=True)
        received = ""
        for chunk in stream:
            received += chunk.choices[0].delta.content or ""
            if len(received) > 50:
                break
        stream.completion_stream.close()  # the OpenAI SDK stream under LiteLLM's wrapper
        request = model.requests[-1]
        assert request.done.wait(5), "the server kept streaming after the client hung up"
        assert request.disconnected
        sent = request.chars_sent
        time.sleep(0.2)
        assert request.chars_sent == sent


def test_streaming_stops_when_the_socket_closes() -> None:
    with ScriptedModel([Turn("tick ", forever=True)]) as model:
        body = json.dumps({"model": "scripted", "messages": HI, "stream": True}).encode()
        sock = socket.create_connection((model.host, model.port))
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        assert b"tick" in _read_until(sock, b"tick")
        sock.close()
        request = model.wait_for_requests(1)[0]
        assert request.done.wait(5)
        assert request.disconnected and request.chars_sent > 0


def test_close_ends_a_live_stream() -> None:
    model = ScriptedModel([Turn("tick ", forever=True)])
    sock = socket.create_connection((model.host, model.port))
    body = json.dumps({"model": "scripted", "messages": HI, "stream": True}).encode()
    sock.sendall(
        b"POST /chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
        % (len(body), body)
    )
    _read_until(sock, b"tick")
    started = time.monotonic()
    model.close()
    assert model.requests[0].done.wait(30)
    assert time.monotonic() - started < 30  # close ended the endless stream
    sock.close()


def test_health_endpoints_answer(settings: Settings) -> None:
    from smol_instruments.base.config import load_settings
    from smol_instruments.cli.doctor import check_model

    with ScriptedModel() as model:
        assert get(model.url + "/")[0] == 200
        models = json.loads(get(model.base_url + "/models")[1])
        assert models["data"][0]["id"] == "scripted"
        assert json.loads(get(model.url + "/api/tags")[1])["models"][0]["name"] == "scripted"
        openai_style = load_settings(
            None, model_id=model.model_id, model_api_base=model.base_url, phoenix_enabled=False
        )
        ollama_style = load_settings(
            None, model_id="ollama_chat/scripted", model_api_base=model.url, phoenix_enabled=False
        )
        assert check_model(openai_style).status == "ok"
        assert check_model(ollama_style).status == "ok"
        assert model.requests == []  # health checks are not chat requests
        assert len(model.other_requests) >= 5


def test_runs_as_a_process_until_sigterm(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["first reply", {"reply": "second", "chunk_chars": 3}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.scripted_model", "--script", str(script)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert select.select([process.stdout], [], [], 20)[0], "no ready line"
        ready = json.loads(process.stdout.readline())
        assert ready["base_url"] == f"http://127.0.0.1:{ready['port']}/v1"
        assert ready["model_id"] == "openai/scripted"
        answer = json.loads(_post(ready["base_url"] + "/chat/completions", {"messages": HI}))
        assert answer["choices"][0]["message"]["content"] == "first reply"
        _post(ready["url"] + "/_scripted/turns", ["third"])
        recorded = json.loads(get(ready["url"] + "/_scripted/requests")[1])
        assert recorded[0]["body"]["messages"] == HI
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=10)
    assert process.returncode == 0, err


# --- the whole path: smolagents CodeAgent over LiteLLMModel ----------------------------------


def quiet_logger() -> Any:
    from rich.console import Console
    from smolagents.monitoring import AgentLogger, LogLevel

    # The Live display of stream_outputs writes to its console even at level OFF.
    return AgentLogger(level=LogLevel.OFF, console=Console(file=io.StringIO()))


def code_agent(model: ScriptedModel, stream: bool, tools: list[Any] | None = None) -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from smolagents import CodeAgent, LiteLLMModel

    llm = LiteLLMModel(model_id=model.model_id, api_base=model.base_url, api_key="x")
    return CodeAgent(
        tools=tools or [],
        model=llm,
        code_block_tags="markdown",
        stream_outputs=stream,
        logger=quiet_logger(),
        max_steps=8,
    )


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "non-streaming"])
def test_code_agent_runs_a_script_end_to_end(litellm: ModuleType, stream: bool) -> None:
    turns: list[Turn | str] = [
        "Thought: compute it.\n```python\nx = 6 * 7\nprint(x)\n```\nObservation: 41 (invented)",
        Turn("```python\nfinal_answer(f'the answer is {x}')\n```", expect_user_contains="42"),
    ]
    with ScriptedModel(turns) as model:
        agent = code_agent(model, stream)
        result = agent.run("What is 6 * 7?", return_full_result=True)

    assert result.output == "the answer is 42"
    first, second = model.requests
    for request in (first, second):
        assert request.stop == SMOLAGENTS_STOP
        assert request.stream is stream and request.include_usage is stream
        assert all(isinstance(m["content"], list) for m in request.messages)
    assert [m["role"] for m in first.messages] == ["system", "user"]
    assert [m["role"] for m in second.messages] == ["system", "user", "assistant", "user"]
    assert "invented" not in second.texts("assistant")[0]  # cut at the stop sequence
    assert second.last_user_text().startswith("Observation:")

    expected_in = sum(estimate_tokens(r.prompt_text()) for r in model.requests)
    expected_out = sum(estimate_tokens(r.reply or "") for r in model.requests)
    usage = agent.monitor.get_total_token_counts()
    assert (usage.input_tokens, usage.output_tokens) == (expected_in, expected_out)
    assert result.token_usage.input_tokens == expected_in


@pytest.mark.parametrize(
    "transcript",
    [
        transcripts.five_step_fix,
        transcripts.wrong_argument_name,
        transcripts.tool_error_then_recovery,
        transcripts.bare_json_call,
    ],
)
def test_transcripts_fit_the_real_tools(
    litellm: ModuleType, tools: dict[str, Any], transcript: Any
) -> None:
    """The transcripts' own checks (observations they expect) hold against the real tools.

    A plain CodeAgent has no bare-JSON support: that transcript only needs its second turn's
    check to hold after the project's normalisation, so it runs unchecked here.
    """
    turns = transcript(check=transcript is not transcripts.bare_json_call)
    with ScriptedModel(turns, fallback=transcripts.final_answer_only()[0]) as model:
        agent = code_agent(model, stream=True, tools=list(tools.values()))
        agent.run("Fix the bug in add()")
    assert model.remaining == 0


def test_transcripts_are_well_formed() -> None:
    for make in (
        transcripts.final_answer_only,
        transcripts.five_step_fix,
        transcripts.wrong_argument_name,
        transcripts.unclosed_block,
        transcripts.xml_code_block,
        transcripts.bare_json_call,
        transcripts.repeated_call,
        transcripts.tool_error_then_recovery,
        transcripts.conversational_prose,
        transcripts.conversational_final_answer,
        transcripts.risky_commands,
        transcripts.endless_steps,
        transcripts.streams_forever,
    ):
        turns = make()
        assert turns and all(isinstance(t, Turn) and t.reply for t in turns), make.__name__
        assert make.__doc__, make.__name__
    assert len(transcripts.five_step_fix()) == 5
    assert "```" not in transcripts.conversational_prose()[0].reply
    assert transcripts.unclosed_block()[0].reply.count("```") == 1


# --- helpers ---------------------------------------------------------------------------------


def _post(url: str, payload: Any) -> bytes:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return bytes(response.read())


def _raw_post(model: ScriptedModel, payload: Any) -> bytes:
    """The decoded body of a chat request (urllib undoes the chunked encoding)."""
    return _post(model.base_url + "/chat/completions", payload)


def _read_until(sock: socket.socket, marker: bytes, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while marker not in data:
        part = sock.recv(4096)
        if not part:
            break
        data += part
    return data


def test_a_client_that_resets_its_connection_prints_no_traceback(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A kept-alive connection the client drops (RST) mid-read is no error: the benchmark's
    output showed socketserver's traceback for it. A later client is still served."""
    import struct

    with ScriptedModel(["hello"]) as model:
        host, port = "127.0.0.1", model.port
        sock = socket.create_connection((host, port))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # half a request
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # linger 0: the close is a reset
        time.sleep(0.3)
        with urllib.request.urlopen(f"http://{host}:{port}/v1/models", timeout=10) as reply:
            assert reply.status == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err, err
