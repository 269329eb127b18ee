"""The protocol's JSON Schema: generated from the Python types, committed for the extension,
and true of what the daemon really sends.

extension/src/protocol.schema.json is what the extension checks protocol.ts against; it must be
what `smol_instruments.lsp.schema` generates now. Then real messages (patches as the store
writes them, and every message of a real daemon run) must fit it, so the types describe the
wire rather than an intention.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.support.lsp import Recorder, _plain, daemon_env, start_daemon
from tests.support.scripted_model import ScriptedModel

from smol_instruments.base.config import Settings
from smol_instruments.lsp.schema import schema_text
from smol_instruments.patches.store import FileChange, Patch, PatchStore
from smol_instruments.patches.validation import NoneSandbox
from smol_instruments.sandbox.local import LocalSandbox

SCHEMA_FILE = Path(__file__).resolve().parents[1] / "extension" / "src" / "protocol.schema.json"
REGENERATE = "python -m smol_instruments.lsp.schema extension/src/protocol.schema.json"


def fits(definition: str, value: Any) -> None:
    """Fail with every way `value` breaks `#/$defs/<definition>`."""
    committed = json.loads(SCHEMA_FILE.read_text())
    schema = {"$ref": f"#/$defs/{definition}", "$defs": committed["$defs"]}
    errors = [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
        for e in Draft202012Validator(schema).iter_errors(value)
    ]
    assert not errors, f"{definition} does not fit the schema:\n" + "\n".join(errors)


def test_the_committed_schema_is_what_the_types_generate() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), f"the schema is out of date: run {REGENERATE}"


def test_the_schema_catches_a_field_the_types_do_not_declare() -> None:
    event = {"sessionId": "s", "seq": 1, "kind": "step", "step": 1, "maxSteps": 5}
    fits("StepEvent", event)
    with pytest.raises(AssertionError, match="Additional properties"):
        fits("StepEvent", event | {"stepCount": 1})
    with pytest.raises(AssertionError, match="'maxSteps' is a required property"):
        fits("StepEvent", {k: v for k, v in event.items() if k != "maxSteps"})


def test_patches_as_the_store_writes_them_fit(repo: Path, settings: Settings) -> None:
    store = PatchStore(repo, None)
    calc = (repo / "app/calc.py").read_text()
    changes = [
        FileChange("app/calc.py", calc, calc.replace("a - b", "a + b")),
        FileChange("app/new.py", None, "x = 1\n"),
        FileChange("README.md", (repo / "README.md").read_text(), None),
    ]
    checked = LocalSandbox(settings, repo)
    for number, change in enumerate(changes):
        patch = Patch(id=store.new_id(), summary=f"change {number}", files=[change])
        sandbox = checked if number == 0 else NoneSandbox()
        patch.validation = sandbox.validate(patch.diff, ["true"] if number == 0 else None).to_dict()
        store.add(patch)
    first = store.all()[0]
    store.set_status(first.id, "stale", "changed since the patch was proposed: app/calc.py")
    for patch in store.all():
        fits("Patch", patch.to_protocol(repo))
    checks = store.all()[0].to_protocol(repo)["validation"]["checks"]
    assert [c["command"] for c in checks][-1] == "true"  # a real check ran and is described


async def test_what_the_daemon_sends_fits(repo: Path, tmp_path: Path) -> None:
    turns = [
        '```python\nprint(read_file(path="app/calculator.py"))\n```',
        '```python\nprint(run_cmd(command="pip install nosuchpkg-xyz", timeout=5))\n```',
        '```python\nprint(propose_patch(path="app/calc.py", old_text="a - b", new_text="a + b"))\n```',
        '```python\nfinal_answer("proposed")\n```',
    ]
    recorder = Recorder(approval_answer="Deny")
    with ScriptedModel(turns) as model:
        env = daemon_env(model.env(), tmp_path) | {
            "SANDBOX_BACKEND": "local",
            "SANDBOX_CHECK_COMMAND": "true",
        }
        client = await start_daemon(repo, recorder, env=env, options={"smolApproval": True})
        try:
            result = _plain(
                await client.protocol.send_request_async("smol/chat", {"message": "fix add()"})
            )
            fits("ChatResult", result)
            patches = _plain(await client.protocol.send_request_async("smol/patches", {}))
            fits("PatchesResult", patches)
            answer = _plain(
                await client.workspace_execute_command_async(
                    _execute("smol.acceptPatch", [patches["patches"][0]["id"]])
                )
            )
            fits("PatchCommandResult", answer)
        finally:
            await client.shutdown_session()
    kinds = {event["kind"] for event in recorder.events}
    assert kinds >= {"step", "text", "code", "tool", "observation", "patch", "approval", "final"}
    assert any(e.get("error") for e in recorder.of("tool"))  # the error schema is in there too
    for event in recorder.events:
        fits(f"{event['kind'].capitalize()}Event", event)
    [asked] = recorder.approvals
    fits("CommandApproval", asked)


def _execute(command: str, arguments: list[Any]) -> Any:
    from lsprotocol import types

    return types.ExecuteCommandParams(command=command, arguments=arguments)
