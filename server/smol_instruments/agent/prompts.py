"""Prompt templates for small models: what they need and nothing else.

smolagents' default CodeAgent system prompt spends thousands of tokens on examples about
images, Wikipedia and planets. A 7B model with an 8k context needs the tool signatures, the
code-block format, one short example, how to change code, and permission to answer a plain
question directly. The benchmark compares the token counts of both prompts.
"""

from __future__ import annotations

import copy
from typing import Any

SYSTEM_PROMPT = '''You are a coding assistant working inside a git repository. Solve the task by writing Python code that calls the tools below.

Reply with one short thought, then exactly one code block, like this:
```python
info = read_file(path="src/app.py", start_line=1, end_line=60)
print(info)
```
What you print comes back as the observation. Tools return dicts. An error dict has "error" and "recovery_suggestion": follow the suggestion.
To change code, call propose_patch(path=..., old_text=..., new_text=...) with old_text copied exactly from read_file; the user sees the change and accepts or rejects it.
End with final_answer("..."). A question that needs no tools (explain, what does X do) gets its answer at once:
```python
final_answer("""It adds two numbers, but returns a - b: a bug.""")
```
{%- set py = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "object": "dict", "array": "list", "any": "Any"} %}

Tools:
{%- for tool in tools.values() %}
{{ tool.name }}({% for arg, spec in tool.inputs.items() %}{{ arg }}: {{ py.get(spec.type, spec.type) }}{% if spec.get("nullable") %} = None{% endif %}{% if not loop.last %}, {% endif %}{% endfor %}): {{ tool.description }}
{%- endfor %}
{%- if custom_instructions %}

{{ custom_instructions }}
{%- endif %}
'''

FINAL_ANSWER_PRE = (
    "You are a coding assistant. The step limit was reached. Below is the work done so far."
)
FINAL_ANSWER_POST = (
    "Task: {{task}}\n\nGive your best answer from the work above, in a few sentences. "
    "Say what is done and what remains."
)


def default_prompt_templates() -> dict[str, Any]:
    """smolagents' own CodeAgent templates (also the baseline the benchmark compares with)."""
    import importlib.resources

    import yaml

    text = importlib.resources.files("smolagents.prompts").joinpath("code_agent.yaml").read_text()
    return dict(yaml.safe_load(text))


def prompt_templates() -> dict[str, Any]:
    """smolagents' CodeAgent templates with the system and final-answer prompts replaced."""
    templates = copy.deepcopy(default_prompt_templates())
    templates["system_prompt"] = SYSTEM_PROMPT
    templates["final_answer"] = {
        "pre_messages": FINAL_ANSWER_PRE,
        "post_messages": FINAL_ANSWER_POST,
    }
    return templates


SHORT_FORMAT_ERROR = (
    "Your reply had no ```python code block. Reply again with one:\n"
    '```python\n# your code, or for a plain answer:\nfinal_answer("...")\n```'
)
