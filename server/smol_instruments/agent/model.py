"""The model: smolagents' LiteLLMModel, built from the settings, with two additions.

1. Output normalisation. Local 7B-14B models do not always write a ```python block: they
   use XML `<code>` tags, a fence with no language, or a bare JSON tool call
   (`{"name": ..., "arguments": {...}}`). When a reply has no ```python block but clearly means
   code, a ```python block with that code is appended to the reply, so CodeAgent's own parser
   finds it and the model sees the right format in its history.
2. Cancellation. A streaming call checks the run's cancel event between deltas and closes the
   stream, so a cancel does not wait for the model to finish talking.
3. One block per reply. Small models keep writing after their code block: an invented
   "Observation:", a second block that runs before the first one's result is seen. The stream
   is cut at the end of the first fenced block that acts (calls a tool, defines, changes a
   file) and closed, which stops the server generating; a block that only quotes a line of
   code inside a written answer is read past.
   No stop sequence is sent for a bare fence (smolagents asks for one; it is taken out): a
   server cannot tell a closing fence from an opening one without a language (models write
   "```\nread_file(...)"), so a stop there would cut the reply before its code. The stops
   sent are what only follows a closed block (`AFTER_BLOCK_STOPS`). A block left unclosed (a
   stop, or the token limit) gets its fence back.
4. No runaway repetition. At a low temperature a small model can write the same sentence until
   its token limit (minutes on a CPU): a reply is cut where a long line or sentence comes back
   (agent/repeats.py).
5. Prompt progress. A server that reports how far it has read the prompt (llama.cpp's
   `prompt_progress`, asked for with `return_progress`) has each report passed to
   `on_prompt_progress(read, total)` as the raw stream goes by: LiteLLM drops those chunks.

LiteLLM is imported lazily (about 3 s), with its bundled cost map (never the internet's) and
without the `.env` it would load at import: `base/environment.py` sees to both.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

from smolagents import ChatMessage, ChatMessageStreamDelta, LiteLLMModel

from ..base.config import Settings
from ..base.pyast import parsed
from ..tools.edit import has_edit_blocks
from ..tools.rewrite import DATA_FENCE, fenced_blocks, unclosed_block
from .edits import called_names, is_change_block
from .repeats import before_repetition, safe_to_pass_on

#: The code of a reply that is SEARCH/REPLACE blocks: nothing to run; the loop reads the reply.
EDIT_BLOCKS_CODE = "# the SEARCH/REPLACE blocks above"
#: The code of a reply whose block is lines of a data or prose file: nothing to run.
TEXT_BLOCK_CODE = "# the lines of text above"

log = logging.getLogger(__name__)


#: The temperature of the one reply after the model repeated itself.
SHAKEN_TEMPERATURE = 0.8


class RunCancelled(Exception):
    """Raised inside a run when the user cancelled it."""


_PY_BLOCK = re.compile(r"```(?:python|py)\b", re.IGNORECASE)
_XML_CODE = re.compile(r"<code>(.*?)(?:</code>|$)", re.DOTALL)
_BARE_FENCE = re.compile(r"```[ \t]*(?:[a-z_0-9]*)?[ \t]*\n(.*?)(?:\n```|$)", re.DOTALL)


def _json_objects(text: str) -> list[Any]:
    """Every top-level JSON object in `text` (models wrap tool calls in prose)."""
    decoder = json.JSONDecoder()
    found, index = [], 0
    while (start := text.find("{", index)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            index = start + 1
            continue
        found.append(value)
        index = end
    return found


def json_tool_calls(text: str, tool_names: set[str]) -> str | None:
    """Python for bare JSON tool calls such as {"name": "read_file", "arguments": {...}}."""
    lines = []
    for value in _json_objects(text):
        if not isinstance(value, dict):
            continue
        name = value.get("name") or value.get("tool") or value.get("function")
        if isinstance(name, dict):  # {"function": {"name": ..., "arguments": ...}}
            value, name = name, name.get("name")
        arguments = value.get("arguments", value.get("parameters", value.get("args", {})))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                continue
        if not isinstance(name, str) or name not in tool_names or not isinstance(arguments, dict):
            continue
        if not all(isinstance(key, str) and key.isidentifier() for key in arguments):
            continue
        call = f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
        lines.append(call if name == "final_answer" else f"print({call})")
    return "\n".join(lines) or None


def normalise_reply(text: str, tool_names: set[str]) -> str | None:
    """The code a reply without a ```python block clearly means, or None."""
    if not text or _PY_BLOCK.search(text):
        return None
    if has_edit_blocks(text):  # SEARCH/REPLACE blocks: a change (agent/loop.py proposes it)
        return EDIT_BLOCKS_CODE
    if DATA_FENCE.search(text):  # lines of a file, perhaps changed (agent/loop.py decides)
        return json_tool_calls(text, tool_names | {"final_answer"}) or TEXT_BLOCK_CODE
    for pattern in (_XML_CODE, _BARE_FENCE):
        blocks = [b.strip() for b in pattern.findall(text) if b.strip()]
        code = "\n\n".join(b for b in blocks if not b.lstrip().startswith("{"))
        if code and parsed(code) is not None:
            return code
    unfenced = text.strip().removesuffix("```").strip()
    if calls_a_tool(unfenced, tool_names | {"final_answer"}) or is_change_block(unfenced):
        return unfenced  # code written without its fence ("# Read it.\nprint(read_file(...))")
    head = text.strip().split("\n```", 1)[0].strip()
    if head != unfenced and calls_a_tool(head, tool_names | {"final_answer"}):
        return head  # the same, then the output it imagined after the closing fence
    return json_tool_calls(text, tool_names | {"final_answer"})


def code_before_an_empty_block(text: str, tool_names: set[str]) -> str | None:
    """The calls written before a ```python block that has no code (seen on the 1.5B model:
    the call unfenced, then a fence and the same call again, cut where it began to repeat)."""
    opened = _PY_BLOCK.search(text)
    if opened is None:
        return None
    blocks = re.findall(r"```(?:python|py)[^\n]*\n(.*?)(?:\n```|$)", text, re.DOTALL | re.I)
    if any(_statements(block) for block in blocks):
        return None
    before = text[: opened.start()].strip()
    return before if calls_a_tool(before, tool_names | {"final_answer"}) else None


def _statements(code: str) -> bool:
    """`code` is more than comments (broken code counts: the model is told about it)."""
    tree = parsed(code)
    return tree is None or bool(tree.body)


def calls_a_tool(code: str, names: set[str]) -> bool:
    """`code` is Python that calls one of `names` (prose never parses as such)."""
    tree = parsed(code)
    return tree is not None and bool(called_names(tree) & names)


#: What follows a closed block when a model goes on writing, never an opening fence. A server
#: that stops there ends the reply itself and still reports its token usage (a stream the
#: client cuts does not).
AFTER_BLOCK_STOPS = ("\n```\n\n", "\n```\n```", "\n```\nObservation", "\n```\nOutput")


def _block_stops(kwargs: dict[str, Any], held: bool = False) -> dict[str, Any]:
    """The call's stops: none at a bare fence (smolagents asks for "\\n```"), the ones after a
    closed block instead; none of those for a reply held to a grammar, which says where it
    ends (a README's new lines have fences: the 1.5B model's held SEARCH/REPLACE reply was
    stopped at the first, its REPLACE part lost)."""
    stops = [s for s in kwargs.get("stop_sequences") or [] if s.strip() != "```"]
    stops += [s for s in AFTER_BLOCK_STOPS if s not in stops and not held]
    return {**kwargs, "stop_sequences": stops}


def first_block_only(text: str, tool_names: set[str] | frozenset[str] = frozenset()) -> str:
    """`text` up to the end of its first fenced block that acts (all of it when none has
    closed). A block that only quotes code (`quotes_code`) is part of a written answer ("the
    wrong line is ```...``` because ..."): the reply goes on past it."""
    for _, end, code in fenced_blocks(text):
        if not quotes_code(code.removesuffix("\n"), tool_names):
            return text[:end]
    return text


def quotes_code(code: str, tool_names: set[str] | frozenset[str]) -> bool:
    """Code that can do nothing when run: it parses, names no tool, prints nothing, defines
    nothing and heads no file (an empty block, or one that does not parse, is no quote)."""
    tree = parsed(code)
    if tree is None or not tree.body or is_change_block(code):
        return False
    names = set(tool_names) | {"final_answer", "print"}
    return not any(
        (isinstance(node, ast.Name) and node.id in names)
        or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for node in ast.walk(tree)
    )


#: (prompt tokens read, prompt tokens in all) of the model call under way.
PromptProgress = Callable[[int, int], None]


class _ProgressTap:
    """The raw chunk stream under LiteLLM's wrapper: hands each `prompt_progress` report on."""

    def __init__(self, inner: Any, report: PromptProgress) -> None:
        self._inner = inner
        self._report = report

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __iter__(self) -> _ProgressTap:
        return self

    def __next__(self) -> Any:
        chunk = next(self._inner)
        extra = getattr(chunk, "model_extra", None)
        progress = extra.get("prompt_progress") if isinstance(extra, dict) else None
        if isinstance(progress, dict):
            try:
                total = int(progress.get("total") or 0)
                cached = int(progress.get("cache") or 0)
                read = int(progress.get("processed") or 0)
                if total > cached:
                    self._report(max(0, read - cached), total - cached)
            except Exception:  # a display must never break the stream
                log.exception("reporting prompt progress failed")
        return chunk


class _StreamTracker:
    """The LiteLLM client, recording each stream it opens so a cancel can close it at once."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self.current: Any = None
        self.on_prompt_progress: PromptProgress | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def completion(self, *args: Any, **kwargs: Any) -> Any:
        result = self._module.completion(*args, **kwargs)
        if kwargs.get("stream"):
            self.current = result
            raw = getattr(result, "completion_stream", None)
            if self.on_prompt_progress is not None and raw is not None:
                result.completion_stream = _ProgressTap(raw, self.on_prompt_progress)
        return result

    def close_current(self) -> None:
        """Close the HTTP response of the stream in flight (closing the generator does not)."""
        stream, self.current = self.current, None
        for target in (getattr(stream, "completion_stream", None), stream):
            closer = getattr(target, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:
                    pass


class EmptyReply(RuntimeError):
    """The server answered 200 but sent no completion text."""


class AgentModel(LiteLLMModel):
    """LiteLLMModel with output normalisation for small models and a cancellable stream."""

    def __init__(
        self,
        *args: Any,
        cancel: threading.Event | None = None,
        max_reply_chars: int = 16_000,
        reply_timeout_s: float = 300.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.cancel = cancel or threading.Event()
        self.tool_names: set[str] = set()
        # A server that never stops streaming must not hold a run forever.
        self.max_reply_chars = max_reply_chars
        self.reply_timeout_s = reply_timeout_s
        self._hot_once = False
        self._grammar_once = ""
        #: This run's change is a file written whole (agent/session.py): no stop after a
        #: closed block, where a README's own example closes, its lines after it lost.
        self.writes_whole = False

    def report_progress(self, report: PromptProgress) -> None:
        """Ask the server to stream how far it has read each prompt (llama.cpp's
        `return_progress`) and pass each report to `report`."""
        if isinstance(self.client, _StreamTracker):
            self.client.on_prompt_progress = report
        self.kwargs["extra_body"] = {**self.kwargs.get("extra_body", {}), "return_progress": True}

    def shake_next_reply(self) -> None:
        """Sample the next reply at `SHAKEN_TEMPERATURE` (a model stuck repeating itself)."""
        self._hot_once = True

    def hold_next_reply(self, grammar: str) -> None:
        """Hold the next reply to a GBNF `grammar` (llama.cpp's server only: the caller knows
        the server is one)."""
        self._grammar_once = grammar

    def _kwargs_for_this_reply(self) -> Any:
        """The model's kwargs with this reply's temperature and grammar; the caller restores
        them."""
        saved = dict(self.kwargs)
        if self._hot_once:
            self._hot_once = False
            current = float(self.kwargs.get("temperature") or 0.0)
            self.kwargs["temperature"] = max(current, SHAKEN_TEMPERATURE)
        if self._grammar_once:
            grammar, self._grammar_once = self._grammar_once, ""
            self.kwargs["extra_body"] = {**self.kwargs.get("extra_body", {}), "grammar": grammar}
        return saved

    def _held(self) -> bool:
        return "grammar" in self.kwargs.get("extra_body", {})

    def create_client(self) -> Any:
        # Imported here, not at start-up (about 3 s); the package's __init__ already set what
        # keeps it offline and from loading a .env (base/environment.py).
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        return _StreamTracker(litellm)

    def abort(self) -> None:
        """Called from another thread on cancel: close the stream being read."""
        self.cancel.set()
        client = getattr(self, "client", None)
        if isinstance(client, _StreamTracker):
            client.close_current()

    def generate(self, messages: list[ChatMessage | dict], **kwargs: Any) -> ChatMessage:
        self._check_cancel()
        saved = self._kwargs_for_this_reply()
        held = self._held()
        try:
            message = super().generate(messages, **_block_stops(kwargs, held or self.writes_whole))
        finally:
            self.kwargs = saved
        if isinstance(message.content, str):
            message.content = before_repetition(message.content)
            if not held:  # the grammar says where a held reply ends, not its first block
                message.content = first_block_only(message.content, self.tool_names)
                if unclosed_block(message.content):
                    message.content += "\n```"
        code = normalise_reply(
            message.content if isinstance(message.content, str) else "", self.tool_names
        )
        if code is not None and isinstance(message.content, str):
            message.content += f"\n```python\n{code}\n```"
        return message

    def generate_stream(
        self, messages: list[ChatMessage | dict], **kwargs: Any
    ) -> Generator[ChatMessageStreamDelta]:
        self._check_cancel()
        saved = self._kwargs_for_this_reply()
        held = self._held()  # the grammar says where it ends, not a fence
        stops = _block_stops(kwargs, held or self.writes_whole)
        stream = super().generate_stream(messages, **stops)
        text = ""  # what was passed on (never the start of a line that may be a repeat)
        pending = ""  # held back: the start of a line that may turn out to be a repeat
        size = 0
        deadline = time.monotonic() + self.reply_timeout_s
        try:
            for delta in stream:
                if self.cancel.is_set():
                    raise RunCancelled("cancelled while the model was answering")
                if not delta.content:
                    yield delta
                    continue
                candidate = text + pending + delta.content
                unrepeated = before_repetition(candidate)
                whole = unrepeated if held else first_block_only(unrepeated, self.tool_names)
                ended = len(whole) < len(candidate)  # the first block closed, or a line came back
                upto = len(whole) if ended else safe_to_pass_on(candidate)
                emit = candidate[len(text) : max(upto, len(text))]
                pending = "" if ended else candidate[len(text) + len(emit) :]
                size += len(delta.content)
                if emit:
                    text += emit
                    yield dataclasses.replace(delta, content=emit)
                if ended:
                    if len(unrepeated) < len(candidate):
                        log.info("model reply cut where it began to repeat itself")
                    break
                if size > self.max_reply_chars:
                    log.warning("model reply cut at %d characters (it did not stop)", size)
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"the model kept streaming for more than {self.reply_timeout_s:g} s"
                    )
            if self.cancel.is_set():  # a closed stream may end quietly instead of raising
                raise RunCancelled("cancelled while the model was answering")
            if pending:  # the reply ended (or hit its size limit) inside a held-back line
                text += pending
                yield ChatMessageStreamDelta(content=pending)
        except Exception:
            if self.cancel.is_set():
                raise RunCancelled("cancelled while the model was answering") from None
            raise
        finally:
            self.kwargs = saved
            stream.close()
            if isinstance(self.client, _StreamTracker):
                self.client.close_current()
        if not size:
            raise EmptyReply(
                "the model server sent no completion text (an empty or malformed response)"
            )
        # cut inside a block: closed, so that the code said for it is not inside it (a
        # README's block cut where it began to repeat held the marker of a text block)
        closing = "\n```" if unclosed_block(text) else ""
        code = code_before_an_empty_block(text + closing, self.tool_names)
        if code is None:
            code = normalise_reply(text + closing, self.tool_names)
        if code is not None:
            closing += f"\n```python\n{code}\n```"
        if closing:
            yield ChatMessageStreamDelta(content=closing)

    def _check_cancel(self) -> None:
        if self.cancel.is_set():
            raise RunCancelled("cancelled before the model was called")

    def constrained(
        self, messages: list[ChatMessage], schema: dict[str, Any], max_tokens: int = 160
    ) -> str | None:
        """A reply the server holds to the JSON `schema` (llama.cpp's `json_schema`, Ollama's
        `format`, both from `response_format` through LiteLLM), at temperature 0; None when the
        server refuses the request or the call fails (the caller falls back)."""
        self._check_cancel()
        try:
            with for_one_call(self, temperature=0.0, max_tokens=max_tokens):
                message = LiteLLMModel.generate(
                    self,
                    messages,
                    response_format={
                        "type": "json_schema",
                        "json_schema": {"name": "reply", "schema": schema, "strict": True},
                    },
                )
        except Exception as exc:  # any failure: the caller decides without the model
            if self.cancel.is_set():
                raise RunCancelled("cancelled while the model was answering") from None
            log.info(
                "constrained reply failed: %s", str(exc).splitlines()[0][:200] if str(exc) else exc
            )
            return None
        return message.content if isinstance(message.content, str) else None


@contextmanager
def for_one_call(model: Any, **settings: Any) -> Iterator[None]:
    """`model`'s call settings (`temperature`, `max_tokens`, `seed`) changed for what runs
    inside, and restored after it, whatever happens."""
    saved = dict(model.kwargs)
    model.kwargs.update(settings)
    try:
        yield
    finally:
        model.kwargs = saved


def build_model(settings: Settings, cancel: threading.Event | None = None) -> AgentModel:
    """The LiteLLM model from the settings (temperature, max tokens, num_ctx for Ollama)."""
    kwargs: dict[str, Any] = {
        "temperature": settings.model_temperature,
        "max_tokens": settings.model_max_tokens,
        "timeout": settings.model_timeout_s,
    }
    if settings.model_id.startswith(("ollama/", "ollama_chat/")):
        kwargs["num_ctx"] = settings.model_num_ctx
    return AgentModel(
        model_id=settings.model_id,
        api_base=settings.model_api_base,
        api_key=settings.model_api_key or "not-needed",
        cancel=cancel,
        max_reply_chars=max(4000, settings.model_max_tokens * 8),
        reply_timeout_s=settings.model_timeout_s,
        **kwargs,
    )


def enforces_schemas(settings: Settings, timeout: float = 3.0) -> bool:
    """Whether the model's server holds a reply to a JSON schema: Ollama does (`format`),
    llama.cpp's server does (it answers `GET /props`); anything else is not assumed to."""
    import urllib.request

    if settings.model_id.startswith(("ollama/", "ollama_chat/")):
        return True
    base = (settings.model_api_base or "").rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    headers = (
        {"Authorization": f"Bearer {settings.model_api_key}"} if settings.model_api_key else {}
    )
    try:
        request = urllib.request.Request(f"{root}/props", headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            props = json.load(response)
    except (OSError, ValueError, TypeError):
        return False
    return isinstance(props, dict) and "default_generation_settings" in props


def context_window(settings: Settings, timeout: float = 3.0) -> int:
    """How many tokens the model server holds, as it reports it; the setting when it cannot.

    llama.cpp's server answers `GET /props` with its `n_ctx`; Ollama answers `POST /api/show`
    with the model's `context_length` (and uses MODEL_NUM_CTX, which we send, as its window).
    """
    import urllib.request

    base = (settings.model_api_base or "").rstrip("/")
    fallback = settings.model_num_ctx
    headers = {"Content-Type": "application/json"}
    if settings.model_api_key:
        headers["Authorization"] = f"Bearer {settings.model_api_key}"
    try:
        if settings.model_id.startswith(("ollama/", "ollama_chat/")):
            name = settings.model_id.split("/", 1)[1]
            request = urllib.request.Request(
                f"{base}/api/show",
                data=json.dumps({"model": name}).encode(),
                headers=headers,
            )
            with urllib.request.urlopen(request, timeout=timeout) as response:
                info = json.load(response).get("model_info") or {}
            lengths = [v for k, v in info.items() if k.endswith(".context_length")]
            return min([fallback, *[int(v) for v in lengths if isinstance(v, int)]])
        root = base[: -len("/v1")] if base.endswith("/v1") else base
        request = urllib.request.Request(f"{root}/props", headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            props = json.load(response)
        n_ctx = props.get("n_ctx") or (props.get("default_generation_settings") or {}).get("n_ctx")
        return int(n_ctx) if isinstance(n_ctx, int) and n_ctx > 0 else fallback
    except (OSError, ValueError, TypeError, AttributeError):
        return fallback
