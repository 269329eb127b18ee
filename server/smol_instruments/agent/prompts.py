"""Prompt templates for small models: what they need and nothing else, and nothing to copy.

smolagents' default CodeAgent system prompt spends thousands of tokens on examples about
images, Wikipedia and planets. A small model with an 8k context needs the tool signatures,
the code-block format, how to change code, and the repository's own file list.

Small models take examples as facts: an example path gets read, an example answer gets given,
a `final_answer("...")` gets copied word for word. So the examples here name no file, function
or answer that could be mistaken for this repository's: calls use `<angle-bracket>` slots,
and `PLACEHOLDERS` lists the texts that are never accepted as an answer. Questions about the
code are answered from the code: nothing invites answering before reading.
"""

from __future__ import annotations

import copy
import re
from typing import Any

SYSTEM_PROMPT = """You are a coding agent working in a git repository. You act by writing Python code that calls the tools below; the system runs it and shows you what it printed.

To act, reply with exactly one ```python code block and nothing else: a # comment saying what you do next, then the code. Then stop and wait for its output. For example:
```python
# <one line: what this step does>
result = read_file(path="<a file from the list below>")
print(result)
```
To answer, reply in plain sentences with no code block, once you have read what the answer needs. Be specific: name the files, functions, values and defaults the answer rests on.
Rules:
- Answer questions about this repository from its code, never from a file's name. Code the task names is given with the task; read anything else with read_file or rg_search.
- Tools return dicts. An error dict has "error" and "recovery_suggestion": do what the suggestion says.
- To change code: call propose_patch(path=..., old_text=..., new_text=...) with old_text copied exactly from the file as you were shown it. The user reviews every change. Then answer: what you changed, in a sentence.
- Never call a tool again with the same arguments: its result is already above.
{%- set py = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "dict", "array": "list", "any": "Any"} %}

Tools:
{%- for tool in tools.values() %}
{{ tool.name }}({% for arg, spec in tool.inputs.items() %}{{ arg }}: {{ py.get(spec.type, spec.type) }}{% if spec.get("nullable") %} = None{% endif %}{% if not loop.last %}, {% endif %}{% endfor %}): {{ tool.description }}
{%- endfor %}
{%- if custom_instructions %}

{{ custom_instructions }}
{%- endif %}
"""

#: The step-limit summary, sent as the LAST user message after the whole history (the system
#: prompt stays the same, so the model server reuses its cached prefix).
STEP_LIMIT_INSTRUCTION = (
    "The step limit is reached: no more tool calls. Task: {{task}}\n"
    "Reply with prose only, no code: in a few sentences, what you found and did, and what "
    "remains undone. Do not claim anything you did not see in the tool results above."
)

#: After every observation: small models read a result and then repeat the call that made it.
AFTER_OBSERVATION = (
    "If you can answer now, reply with the answer in plain sentences, no code; otherwise make "
    "the next call."
)

#: After a call refused as a repeat: the model has what it needs and keeps asking for it.
ANSWER_NOW = (
    "You already have that result above. Do not call it again. Answer the task now, in plain "
    "sentences with no code: {task}"
)
CHANGE_NOW = (
    "You already have that result above. Do not call it again. Make the change now: "
    "propose_patch(path=..., old_text=..., new_text=...) with old_text copied from the file above."
)

SHORT_FORMAT_ERROR = (
    "Your reply had no ```python code block. Reply with exactly one block that starts with a "
    '# comment, e.g.:\n```python\n# Read the file.\nprint(read_file(path="<a file from the list>"))\n```'
)

READ_FIRST = (
    "This question is about the repository's code, and nothing has been read yet. Read the "
    "code first, in exactly one block that starts with a # comment, for example:\n"
    "```python\n# Read the code first.\nprint({call})\n```"
)

#: What the model copies from our instructions instead of answering.
PLACEHOLDERS = frozenset(
    {
        "",
        "...",
        "…",
        "answer",
        "your answer",
        "your final answer",
        "your final answer here",
        "final answer",
    }
)


DO_IT_NOW = (
    "You said what you will do, but did not do it. Do it now, in exactly one block that starts "
    "with a # comment, for example:\n```python\n# Read the code first.\nprint({call})\n```"
)

#: A reply that announces what it will do instead of answering ("I will read the file.").
_PLAN = re.compile(
    r"^(?:sure[,.!]?\s*)?(?:i\s+will|i'll|i\s+am\s+going\s+to|i'm\s+going\s+to|i\s+need\s+to"
    r"|let\s+me|let's|first,?\s+i|to\s+(?:answer|find|see|check|do|fix)\b[^.]*,\s*i)\b",
    re.IGNORECASE,
)


#: A line of a plan: "# Find the function with the bug", "1. Read the test".
_STEP = re.compile(
    r"^(?:[#*\-\s]|\d+[.)])*\s*(?:then\s+|next,?\s+|first,?\s+)?(?:read|find|analy[sz]e|examine|"
    r"identify|run|check|look|search|open|fix|call|list|locate|inspect|review|determine|"
    r"understand|verify|test|write|propose|use|get|see|go|start)\b",
    re.IGNORECASE,
)


def is_plan(reply: str) -> bool:
    """True when a prose reply only says what it is about to do (or ends on a colon), or is a
    list of steps to take ("# Find the function", "# Examine the test")."""
    text = reply.strip().removesuffix("```").strip()
    lines = [line for line in text.splitlines() if line.strip(" #*-")]
    steps = bool(lines) and all(_STEP.match(line) for line in lines)
    return bool(_PLAN.match(text.lstrip("# "))) or text.endswith(":") or steps


def is_placeholder(answer: str) -> bool:
    """True when `answer` is empty, an ellipsis, or an instruction's slot such as `<...>`."""
    text = answer.strip().strip("\"'`").strip().lower()
    return text in PLACEHOLDERS or bool(re.fullmatch(r"<[^<>]{0,80}>", text))


def default_prompt_templates() -> dict[str, Any]:
    """smolagents' own CodeAgent templates (also the baseline the benchmark compares with)."""
    import importlib.resources

    import yaml

    text = importlib.resources.files("smolagents.prompts").joinpath("code_agent.yaml").read_text()
    return dict(yaml.safe_load(text))


def prompt_templates(repo_files: list[str] | None = None, limit: int = 80) -> dict[str, Any]:
    """smolagents' CodeAgent templates with the system and step-limit prompts replaced.

    The repository's files (the first `limit`) go at the end of the system prompt, so the
    model knows the real paths before its first call and needs no list_files to start.
    """
    templates = copy.deepcopy(default_prompt_templates())
    system = SYSTEM_PROMPT
    if repo_files:
        shown = repo_files[:limit]
        more = len(repo_files) - len(shown)
        listing = "\n".join(shown) + (
            f"\n... and {more} more (list_files shows them)" if more else ""
        )
        # raw: a file name with braces must not be read as a template
        system += f"\nFiles in this repository:\n{{% raw %}}{listing}{{% endraw %}}\n"
    templates["system_prompt"] = system
    templates["final_answer"] = {"pre_messages": "", "post_messages": STEP_LIMIT_INSTRUCTION}
    return templates
