"""The program `evaluate` (tools/evaluate.py) hands the interpreter in its contained process.

It runs there, not here: the payload (the model's code, what to import, where the repository
is) comes on stdin, and the result goes back as one JSON line after `RESULT_MARK`. Kept apart
from the tool because it is a different program with a different reader: nothing in it may
import the project (the contained interpreter has only the repository and the standard
library), and what it does is judged by what the tool's tests see it report.
"""

#: Where the runner's result starts in its output (the code may print anything before it).
RESULT_MARK = "\x1e-evaluate-result-\x1e"

#: The program the interpreter runs; the payload (code, imports, paths) comes on stdin.
RUNNER = r"""
import ast, contextlib, difflib, inspect, io, json, linecache, os, re, sys, traceback
payload = json.loads(sys.stdin.read())
sys.path[:0] = payload["paths"]
space = {"__name__": "__evaluate__"}
class Terminal(io.StringIO):  # what it prints is captured, but the code sees a terminal (below)
    def isatty(self): return True
printed = Terminal()
result = {"imported": []}


# What a user would look up next, from the objects that raised: a KeyError's mapping, with its
# keys and the closest to the missing one (a subscript of a name or attribute on the line that
# raised, in the deepest frame that has one); a call that does not fit its function (TypeError),
# the parameters it takes and the closest to a keyword it does not; an AttributeError's closest
# names, as Python 3.12 suggests them.
def hint(exc):
    if isinstance(exc, AttributeError) and getattr(exc, "obj", None) is not None and exc.name:
        close = difflib.get_close_matches(exc.name, [n for n in dir(exc.obj) if n[:2] != "__"])
        return f"did you mean: {', '.join(close)}?" if close else None
    tbs, tb = [], exc.__traceback__
    while tb is not None:
        tbs.append(tb)
        tb = tb.tb_next
    called = re.match(r"([\w.]+)\(\) (?:got an unexpected keyword argument '(\w+)'|missing|takes)", str(exc))
    if isinstance(exc, TypeError) and called:  # a call that does not fit: what it takes
        for tb in reversed(tbs):
            parts, frame = called[1].split("."), tb.tb_frame
            target = frame.f_locals.get(parts[0], frame.f_globals.get(parts[0]))
            for part in parts[1:]:
                target = target if part == "__init__" else getattr(target, part, None)
            try:
                parameters = inspect.signature(target)
            except Exception:
                continue
            close = difflib.get_close_matches(called[2] or "", list(parameters.parameters))
            return f"{called[1]} takes {parameters}" + f"; the closest to {called[2]!r}: {', '.join(close)}" * bool(close)
        return None
    if not isinstance(exc, KeyError) or not exc.args:
        return None
    key = exc.args[0]
    for tb in reversed(tbs):
        frame, source = tb.tb_frame, linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
        for text in (source, source + " pass", source.removeprefix("el") + " pass"):
            try:
                nodes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Subscript)]
                break
            except SyntaxError:
                nodes = []
        for node in nodes:
            if not all(isinstance(n, (ast.Name, ast.Attribute, ast.Load)) for n in ast.walk(node.value)):
                continue
            try:
                keys = list(eval(compile(ast.Expression(node.value), "<hint>", "eval"), frame.f_globals, frame.f_locals).keys())
            except Exception:
                continue
            if key in keys:
                continue
            names = [repr(k) for k in keys]
            by = {str(k): k for k in keys}
            close = [repr(by[k]) for k in difflib.get_close_matches(str(key), list(by))]
            said = f"{ast.unparse(node.value)} has no key {key!r}" + f"; the closest: {', '.join(close)}" * bool(close)
            return said + f"; its keys: {', '.join(names[:30])}" + ", ..." * (len(names) > 30)
    return None


# whether the code ran any of the repository's code or opened any of its files: code that
# did neither says nothing about the repository (tools/evaluate.py)
repository = os.path.join(payload["paths"][-1], "")
result["touched"] = False
def opened(event, args):
    if event == "open" and not result["touched"] and isinstance(args[0], (str, bytes, os.PathLike)):
        result["touched"] = os.path.abspath(os.fsdecode(args[0])).startswith(repository)
def called(frame, event, arg):
    if frame.f_code.co_filename.startswith(repository):
        result["touched"] = True
        sys.setprofile(None)
sys.addaudithook(opened)
sys.setprofile(called)


if payload.get("tracer"):  # evaluate_code(trace=N): TRACER below
    exec(payload["tracer"], {"payload": payload, "result": result, "sys": sys, "ast": ast})
try:
    with contextlib.redirect_stdout(printed):
        for module, name in payload["imports"]:
            try:
                said = f"from {module} import {name}" if name else f"import {module}"
                space[name or module] = getattr(__import__(module, fromlist=[name]), name) if name else __import__(module)
                result["imported"].append(said)
            except Exception as exc:
                result.setdefault("import_errors", []).append(f"{said}: {type(exc).__name__}: {exc}")
        tree = ast.parse(payload["code"], "<evaluate>", "exec")
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        start = getattr(sys, "_smol_trace", None)  # traced: the last expression, else all
        if start is not None and last is None:
            start()
        exec(compile(tree, "<evaluate>", "exec"), space)
        if start is not None and last is not None:
            # `f(a) == f(b)`, `parse(a).bump()`: the operands, the receiver, are worked out first,
            # untraced, and said with their values; what is traced is the operator or the last
            # call, which decides the answer (how `==` compares, what `bump` does)
            node = last.value
            if isinstance(node, ast.Compare) and len(node.ops) == 1:
                parts = [node.left, node.comparators[0]]
            elif isinstance(node, ast.BinOp):
                parts = [node.left, node.right]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                parts = [node.func.value]
            else:
                parts = []
            if any(isinstance(part, ast.Call) for n in parts for part in ast.walk(n)):
                try:  # an operand that raises: the whole is traced, to where it raises
                    values = [eval(compile(ast.Expression(p), "<evaluate>", "eval"), space) for p in parts]
                except Exception:
                    values = None
                if values is not None:
                    result["operands"] = [f"{ast.unparse(p)} = {repr(v)[:200]}" for p, v in zip(parts, values)]
                    names = [ast.Name(f"_operand{i}", ast.Load()) for i in range(len(values))]
                    space.update({name.id: value for name, value in zip(names, values)})
                    if isinstance(node, ast.Compare):
                        node = ast.Compare(names[0], node.ops, [names[1]])
                    elif isinstance(node, ast.BinOp):
                        node = ast.BinOp(names[0], node.op, names[1])
                    else:
                        node = ast.Call(ast.Attribute(names[0], node.func.attr, ast.Load()), node.args, node.keywords)
                    last.value = ast.fix_missing_locations(ast.copy_location(node, last.value))
            start()
        if last is not None:
            value = eval(compile(ast.Expression(last.value), "<evaluate>", "eval"), space)
        sys.settrace(None)
        if last is not None:
            result["value"] = repr(value)
            try:  # as it prints: "1.3.0" for a Version; a __str__ that raises takes nothing away
                result["text"] = str(value)[:200]
            except Exception:
                pass
            result["type"] = type(value).__name__
            if type(value).__repr__ is object.__repr__ and hasattr(value, "__dict__"):
                # "<parse.Match object at 0x7f..>" says nothing it holds: its attributes do
                held = [(k, v) for k, v in vars(value).items() if not k.startswith("_")][:8]
                try:
                    result["attributes"] = {k: repr(v)[:80] for k, v in held}
                except Exception:  # a repr that raises takes nothing away
                    pass
except BaseException as exc:
    sys.settrace(None)
    result["exception"] = f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    result["raised_at"] = [f"{f.filename}:{f.lineno} in {f.name}: {f.line}" for f in frames
                           if not f.filename.startswith("<")][-3:]
    try:
        said = hint(exc)
    except Exception:
        said = None
    if said:
        result["hint"] = said[:600]
result["printed"] = printed.getvalue()
sys.__stdout__.write("\n" + MARK + json.dumps(result) + "\n")
""".replace("MARK", repr(RESULT_MARK))

#: What the runner adds for `trace`: each statement of the repository's code that ran (up to
#: `trace` of them), with the values of its operator expressions ("number % 10 = 9"), and
#: what each function returned; and the functions that ran ("ordinal (inflection.py)"). Only
#: expressions of names, constants, attributes and operators are evaluated, and calls of
#: builtins that change nothing (`len`; `sum` of a container, never of a generator it would
#: use up); no subscript (a defaultdict's adds a key).
TRACER = r"""
import os
root = os.path.join(payload["root"], "")
limit, trees, counts, steps, functions = payload["trace"], {}, {}, [], []
# a getter (`return self._major`) says nothing its caller's line does not: neither its line
# nor its return is a step; a statement that assigns names is said with what they were given
# once it ran (on the frame's next line or return): `v1 = self.to_tuple()[:3]  # v1 = (1, 0, 0)`
getters, quiet, assigned = set(), set(), {}
last = [None]  # the (file, line, frame) recorded last
result["trace"], result["functions"] = steps, functions
SAFE = (ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp,
        ast.Tuple, ast.List, ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)
SHOWN = (ast.BinOp, ast.Compare, ast.BoolOp, ast.UnaryOp)
import builtins
# builtins that read their arguments and change nothing; those that iterate, only over a
# container (never a generator or an iterator, which they would use up)
PURE = {"len", "abs", "round", "int", "float", "str", "bool", "isinstance", "ord", "chr"}
ITERATING = {"sum", "min", "max", "sorted", "any", "all"}
CONTAINERS = (list, tuple, str, bytes, dict, set, frozenset, range)

def safe(part, space):
    for n in ast.walk(part):
        if isinstance(n, ast.Call):
            name = n.func.id if isinstance(n.func, ast.Name) else None
            if name not in PURE | ITERATING or space.get(name, getattr(builtins, name)) is not getattr(builtins, name):
                return False
            if n.keywords or not all(isinstance(a, (ast.Name, ast.Constant, ast.Attribute)) for a in n.args):
                return False
            if name in ITERATING:
                try:
                    given = [eval(compile(ast.Expression(a), "<trace>", "eval"), space) for a in n.args]
                except Exception:
                    return False
                if not all(isinstance(g, CONTAINERS) for g in given):
                    return False
        elif not isinstance(n, SAFE):
            return False
    return True

def statements(filename):
    if filename not in trees:
        trees[filename] = {}
        try:
            with open(filename, encoding="utf-8") as f:
                tree = ast.parse(f.read())
        except Exception:
            return trees[filename]
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt):
                trees[filename].setdefault(node.lineno, node)
            body = getattr(node, "body", None) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # its docstring
            if body and len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                if all(isinstance(n, (ast.Name, ast.Attribute, ast.Load)) for n in ast.walk(body[0].value)):
                    getters.add((filename, body[0].lineno))
    return trees[filename]

def shown(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

def values(node, frame):
    expr = getattr(node, "test", None) or getattr(node, "iter", None) or getattr(node, "value", None)
    if not isinstance(expr, ast.expr):
        return []
    said, space = [], {**frame.f_globals, **frame.f_locals}
    for part in ast.walk(expr):
        if len(said) >= 3:
            break
        if not isinstance(part, SHOWN) or not safe(part, space):
            continue
        try:
            value = eval(compile(ast.Expression(part), "<trace>", "eval"), space)
        except Exception:
            continue
        said.append(f"{ast.unparse(part)} = {shown(value)}")
    return said

def record(frame, event, arg):
    where = os.path.relpath(frame.f_code.co_filename, root)
    name = frame.f_code.co_name
    if f"{name} ({where})" not in functions and len(functions) < 12:
        functions.append(f"{name} ({where})")
    if len(steps) >= limit:
        return
    if event == "return":
        if id(frame) in quiet:
            quiet.discard(id(frame))
            return
        raised = raising.pop(id(frame), None)
        if raised is not None:
            steps.append(f"{where}: {name} raised {raised}")
        elif frame.f_code.co_flags & 0x20:  # a generator: each yield is a "return"
            steps.append(f"{where}: {name} yielded {shown(arg)}")
        else:
            steps.append(f"{where}: {name} returned {shown(arg)}")
        return
    node = statements(frame.f_code.co_filename).get(frame.f_lineno)
    if node is None:
        return
    if (frame.f_code.co_filename, frame.f_lineno) in getters:
        quiet.add(id(frame))
        return
    key = (frame.f_code.co_filename, frame.f_lineno)
    if last[0] == (key, id(frame)):
        return  # back on the line of a statement spread over several
    last[0] = (key, id(frame))
    counts[key] = counts.get(key, 0) + 1
    if counts[key] > 2:
        return
    line = ast.unparse(node).splitlines()[0][:100]
    said = values(node, frame)
    steps.append(f"{where}:{frame.f_lineno} ({name}) {line}" + (f"  # {'; '.join(said)}" if said else ""))
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    names = [n.id for t in targets for n in getattr(t, "elts", [t]) if isinstance(n, ast.Name) and n.id != "_"]
    if names and isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        assigned[id(frame)] = (len(steps) - 1, names[:3])

def given(frame):
    index, names = assigned.pop(id(frame))
    said = [f"{n} = {shown(frame.f_locals[n])}" for n in names if n in frame.f_locals]
    if said:
        steps[index] += ("; " if "  # " in steps[index] else "  # ") + "; ".join(said)

raising = {}

def local(frame, event, arg):
    if event == "exception":
        raising[id(frame)] = arg[0].__name__
        assigned.pop(id(frame), None)  # the statement did not finish: nothing was given
    elif event == "line":
        raising.pop(id(frame), None)  # caught in this frame: it goes on
    if event in ("line", "return") and id(frame) in assigned:
        given(frame)
    if event in ("line", "return"):
        record(frame, event, arg)
    return local

def tracer(frame, event, arg):
    filename = frame.f_code.co_filename
    if not filename.startswith(root) or "site-packages" in filename:
        return None
    return local

sys._smol_trace = lambda: sys.settrace(tracer)
"""
