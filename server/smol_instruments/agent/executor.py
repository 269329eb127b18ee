"""Where generated code runs: smolagents' local interpreter, handed plain functions, not tools.

smolagents gives the interpreter the Tool objects themselves, and a tool object leads, through
plain attributes, to everything behind it: its context, the command policy, the path jail, the
approval store, the patch store, the sandbox, the repository's `Path`. Model code (a prompt
injection in any file the model read is enough to write it) could rebind the policy or move the
jail. Here each tool reaches the interpreter as a function closed over the tool's call: the
interpreter refuses dunder attributes (`__closure__`, `__self__`, `__globals__` ...), so from a
function there is nowhere further to go. What a call returns is copied into plain data (dicts,
lists, strings, numbers), so no object of ours comes back out either.

One door stays open in the interpreter itself: `str.format` resolves `{0.attr}` and `{0[key]}`
in its template with Python's own getattr, dunders included, so
`"{0.__globals__}".format(read_file)` would print module state (the environment, with its API
keys, is two steps away). Calls to `format` / `format_map` are therefore rewritten to go
through `_checked_format`, which refuses any replacement field that reaches into an object;
plain `{}`, `{0}`, `{name}` and format specs still work.

Generators, coroutines and their frames are a second door: `gen.gi_frame.f_locals` is no
dunder, and it holds the interpreter's own variables (its list of allowed imports among them).
Attributes of frames, code objects and tracebacks are refused (`FRAME_ATTRIBUTES`), in code and
through getattr, and the allowed imports are a tuple nobody can append to.

A reply that calls tools and `final_answer` in the same block would give the answer before the
model saw the tools' results (smolagents runs the whole block): there `final_answer` is held
back, the tools run, and the observation says why no answer was taken.

What a block is (code to run, a change, an answer written in it) is decided before it gets
here, by the agent's `route` (agent/loop.py); this module only runs code.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from smolagents.local_python_executor import (
    CodeOutput,
    InterpreterError,
    LocalPythonExecutor,
    nodunder_getattr,
)

from ..base.pyast import parsed, retried
from .edits import called_names

FORMAT_METHODS = frozenset({"format", "format_map"})
#: Attributes that lead from a generator, coroutine or exception to frames and their variables.
FRAME_ATTRIBUTES = frozenset(
    {
        "gi_frame", "gi_code", "gi_yieldfrom", "gi_suspended",
        "cr_frame", "cr_code", "cr_await", "cr_origin",
        "ag_frame", "ag_code", "ag_await",
        "f_locals", "f_globals", "f_builtins", "f_back", "f_code", "f_trace",
        "tb_frame", "tb_next", "func_globals", "func_closure",
    }
)  # fmt: skip
CHECKED_FORMAT = "_checked_format"
HELD_BACK = "_final_answer_held_back"
HELD_BACK_NOTE = (
    "[final_answer was not taken: it came in the same block as other tool calls, so it would "
    "have answered before you saw their results. The results are above; read them, then call "
    "final_answer in a reply of its own.]"
)

_PLAIN = (str, int, float, bool, type(None))


def plain(value: Any) -> Any:
    """`value` as plain data: containers copied, anything else turned into its text."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(item) for item in value]
    return str(value)


class Result(dict):
    """A tool's answer: a plain dict that prints as readable text, not as one escaped line.

    Small models misread `{'content': 'def add(a, b):\\n    return a - b\\n'}`; printed, a
    result shows each key on its own line and multi-line text as the lines themselves.
    """

    def __str__(self) -> str:
        return "\n".join(_render(self, 0))

    __repr__ = __str__


def _render(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        label = f"{pad}{key}:" if isinstance(value, dict) else f"{pad}-"
        if isinstance(item, str) and "\n" in item.rstrip("\n"):
            lines.append(f"{label} |")
            lines.extend(f"{pad}  {line}" for line in item.rstrip("\n").split("\n"))
        elif isinstance(item, dict | list) and item and not _flat(item):
            lines.append(label)
            lines.extend(_render(item, indent + 2))
        else:
            lines.append(f"{label} {_scalar(item)}")
    return lines


def _flat(value: dict[str, Any] | list[Any]) -> bool:
    """A short list of scalars (or a small dict of them) reads best on one line."""
    members = value.values() if isinstance(value, dict) else value
    return len(value) <= 8 and all(isinstance(m, _PLAIN) and len(str(m)) < 60 for m in members)


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value.rstrip("\n") if value.strip() else repr(value)
    return repr(value)


def tool_function(
    name: str, call: Callable[..., Any], doc: str | None = None
) -> Callable[..., Any]:
    """A function that calls `call` and answers plain data; it exposes nothing else."""

    def function(*args: Any, **kwargs: Any) -> Any:
        result = plain(call(*args, **kwargs))
        return Result(result) if isinstance(result, dict) else result

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


def _reaching_fields(template: str) -> list[str]:
    """Replacement fields of `template` that read an attribute or an item (`{0.x}`, `{a[k]}`)."""
    found = []
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return []  # str.format itself will refuse the template
    for _, field, spec, _ in fields:
        if field and ("." in field or "[" in field):
            found.append(field)
        if spec and "{" in spec:
            found += _reaching_fields(spec)
    return found


def checked_format(owner: Any, method: str, *args: Any, **kwargs: Any) -> str:
    """`owner.<method>(*args, **kwargs)` for str.format / format_map, without object walks."""
    if method not in FORMAT_METHODS:
        raise InterpreterError(f"{method} is not a string formatting method")
    if owner is str:  # str.format(template, ...)
        if not args or not isinstance(args[0], str):
            raise InterpreterError("str.format needs a template string")
        template, call = args[0], getattr(str, method)
    elif isinstance(owner, str):
        template, call = owner, getattr(owner, method)
    else:
        return getattr(owner, method)(*args, **kwargs)  # not a string: an ordinary method
    reaching = _reaching_fields(template)
    if reaching:
        raise InterpreterError(
            f"format fields may not read attributes or items ({reaching[0]!r}); "
            "use an f-string or pass the value itself"
        )
    return call(*args, **kwargs)


def _refused(name: str) -> bool:
    return name in FRAME_ATTRIBUTES or name.startswith("co_")


def checked_getattr(obj: Any, name: str, *default: Any) -> Any:
    """The interpreter's getattr (no dunders), also refusing frames and unchecked str.format."""
    if isinstance(name, str) and _refused(name):
        raise InterpreterError(f"Forbidden access to attribute: {name}")
    if name in FORMAT_METHODS and (obj is str or isinstance(obj, str)):
        raise InterpreterError(f"call .{name}(...) directly instead of through getattr")
    return nodunder_getattr(obj, name, *default)


class _RouteFormatting(ast.NodeTransformer):
    """`x.format(...)` -> `_checked_format(x, "format", ...)`; a bare `x.format` is refused."""

    changed = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in FORMAT_METHODS:
            self.changed = True
            routed = ast.Call(
                func=ast.Name(id=CHECKED_FORMAT, ctx=ast.Load()),
                args=[self.visit(func.value), ast.Constant(func.attr), *map(self.visit, node.args)],
                keywords=[self.visit(keyword) for keyword in node.keywords],
            )
            return ast.copy_location(routed, node)
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if _refused(node.attr):
            raise InterpreterError(f"Forbidden access to attribute: {node.attr}")
        if node.attr in FORMAT_METHODS:
            raise InterpreterError(f"use .{node.attr}(...) as a call, not as a value")
        return self.generic_visit(node)


def route_formatting(code: str) -> str:
    """The code with every str.format call routed through the check, frame walks refused."""
    tree = parsed(code)
    if tree is None:
        return code  # the interpreter reports the syntax error in its own words
    router = _RouteFormatting()
    routed = router.visit(tree)
    # Unchanged code runs as written, so line numbers in its errors stay the model's own.
    return ast.unparse(ast.fix_missing_locations(routed)) if router.changed else code


class _HoldBack(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "final_answer":
            node.func = ast.copy_location(ast.Name(id=HELD_BACK, ctx=ast.Load()), node.func)
        return node


def hold_back_final_answer(code: str, tool_names: set[str]) -> str:
    """The code with `final_answer(...)` neutralised when the same code calls other tools."""
    if "final_answer" not in code:
        return code
    tree = parsed(code)
    if tree is None:
        return code
    called = called_names(tree)
    if "final_answer" not in called or not called & (tool_names - {"final_answer"}):
        return code
    return ast.unparse(ast.fix_missing_locations(_HoldBack().visit(tree)))


class ToolFunctionsExecutor(LocalPythonExecutor):
    """smolagents' local interpreter, given each tool as a plain function."""

    tool_names: set[str] = set()
    #: The agent's look at a block before it runs: the code to run instead, or the step's
    #: output when the block is not code to run (agent/loop.py: a change, an illustration).
    route: Callable[[str], str | CodeOutput] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        frozen: Any = tuple(self.authorized_imports)  # no append through a frame
        object.__setattr__(self, "authorized_imports", frozen)

    def send_tools(self, tools: dict[str, Any]) -> None:
        self.tool_names = set(tools)
        super().send_tools(
            {
                name: tool_function(name, tool.__call__, getattr(tool, "description", None))
                for name, tool in tools.items()
            }
        )
        self.static_tools[CHECKED_FORMAT] = checked_format
        self.static_tools["getattr"] = checked_getattr
        self.static_tools[HELD_BACK] = self._held_back

    def _held_back(self, *args: Any, **kwargs: Any) -> None:
        self.state["_print_outputs"] += HELD_BACK_NOTE + "\n"

    def __call__(self, code_action: str) -> CodeOutput:
        if self.route is not None:
            routed = self.route(code_action)
            if isinstance(routed, CodeOutput):
                return routed
            code_action = routed
        code = route_formatting(hold_back_final_answer(code_action, self.tool_names))
        run = super().__call__
        try:
            # smolagents parses the block before running any of it and wraps every error of
            # the run in an InterpreterError: a bare parse race (base/pyast.py) ran nothing.
            return retried(lambda: run(code))
        except InterpreterError as exc:
            raise InterpreterError(_with_a_way_forward(str(exc))) from None


_IMPORT_REFUSED = re.compile(r"Import (?:from )?([\w.]+) is not allowed")


def _with_a_way_forward(message: str) -> str:
    """An error a small model repeats says what to do instead.

    It imports the code it was asked about, and unpacks a tool's dict as a tuple, again and
    again: the refused import says how to read the module, the unpacking how to use a result.
    """
    if "Cannot unpack" in message:
        return (
            f"{message.rstrip('.')}. A tool returns one dict, not a tuple: "
            "result = <tool>(...); print(result), then use result['<key>']."
        )
    match = _IMPORT_REFUSED.search(message)
    if match is None:
        return message
    path = match[1].replace(".", "/") + ".py"
    return (
        f"{match[1]} cannot be imported here: this code can only call the tools. To see what "
        f"it does, read it: print(read_file(path='{path}')); to run it, use run_cmd(...). "
        f"({message.split('. ', 1)[0]})"
    )
