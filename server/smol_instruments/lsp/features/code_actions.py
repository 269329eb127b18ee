"""Code actions: Accept / Reject on a pending patch's hunks, and "Ask agent about selection"."""

from __future__ import annotations

from lsprotocol import types

from ..feature import Feature, handles
from ..protocol import CMD_ACCEPT_PATCH, CMD_ASK_ABOUT_SELECTION, CMD_REJECT_PATCH
from .patches import Patches

KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite]


def _action(
    title: str,
    kind: types.CodeActionKind,
    command: str,
    argument: object,
    diagnostics: list[types.Diagnostic] | None = None,
    preferred: bool | None = None,
) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=kind,
        diagnostics=diagnostics,
        is_preferred=preferred,
        command=types.Command(title=title, command=command, arguments=[argument]),
    )


class CodeActions(Feature):
    """Offers the patch decisions where a patch's hunks are, and a question on any selection."""

    def __init__(self, patches: Patches) -> None:
        self.patches = patches

    @handles(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS))
    def code_action(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """Accept/Reject on patch hunks; Ask agent about any non-empty selection."""
        actions = self.patch_actions(params) + self.selection_actions(params)
        only = params.context.only
        if only:
            actions = [
                a for a in actions if a.kind and any(str(a.kind).startswith(str(k)) for k in only)
            ]
        return actions

    def patch_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        actions = []
        quickfix = types.CodeActionKind.QuickFix
        for patch in self.patches.pending_at(params.text_document.uri, params.range):
            ours = [d for d in params.context.diagnostics if str(d.code) == patch.id] or None
            actions.append(
                _action("Accept agent patch", quickfix, CMD_ACCEPT_PATCH, patch.id, ours, True)
            )
            actions.append(
                _action("Reject agent patch", quickfix, CMD_REJECT_PATCH, patch.id, ours)
            )
        return actions

    def selection_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        span = params.range
        if span.start == span.end:
            return []
        argument = {
            "uri": params.text_document.uri,
            "range": {
                "start": {"line": span.start.line, "character": span.start.character},
                "end": {"line": span.end.line, "character": span.end.character},
            },
        }
        kind = types.CodeActionKind.RefactorRewrite
        return [_action("Ask agent about selection", kind, CMD_ASK_ABOUT_SELECTION, argument)]
