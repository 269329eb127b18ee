"""Code actions: Accept / Reject a pending patch or one of its hunks, and "Ask agent about selection"."""

from __future__ import annotations

from lsprotocol import types

from .protocol import CMD_ACCEPT_PATCH, CMD_ASK_ABOUT_SELECTION, CMD_REJECT_PATCH
from .server import SmolLanguageServer


def code_actions(
    server: SmolLanguageServer, params: types.CodeActionParams
) -> list[types.CodeAction]:
    actions: list[types.CodeAction] = []
    uri, span = params.text_document.uri, params.range
    if server.patch_store is not None:
        for patch, hunk_id in server.features["patches"].pending_at(uri, span):
            diagnostics = [d for d in params.context.diagnostics if str(d.code) == patch.id] or None
            choices = [("Accept agent patch", CMD_ACCEPT_PATCH, [patch.id])]
            choices.append(("Reject agent patch", CMD_REJECT_PATCH, [patch.id]))
            if sum(h.pending for h in patch.hunks) > 1:
                choices.append(
                    ("Accept this hunk", CMD_ACCEPT_PATCH, [patch.id, {"hunks": [hunk_id]}])
                )
                choices.append(
                    ("Reject this hunk", CMD_REJECT_PATCH, [patch.id, {"hunks": [hunk_id]}])
                )
            for title, command, arguments in choices:
                if any(
                    a.title == title and a.command and a.command.arguments == arguments
                    for a in actions
                ):
                    continue
                actions.append(
                    types.CodeAction(
                        title=title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=diagnostics,
                        is_preferred=title == "Accept agent patch" or None,
                        command=types.Command(title=title, command=command, arguments=arguments),
                    )
                )
    if span.start != span.end:
        argument = {
            "uri": uri,
            "range": {
                "start": {"line": span.start.line, "character": span.start.character},
                "end": {"line": span.end.line, "character": span.end.character},
            },
        }
        actions.append(
            types.CodeAction(
                title="Ask agent about selection",
                kind=types.CodeActionKind.RefactorRewrite,
                command=types.Command(
                    title="Ask agent about selection",
                    command=CMD_ASK_ABOUT_SELECTION,
                    arguments=[argument],
                ),
            )
        )
    only = params.context.only
    if only:
        actions = [
            a for a in actions if a.kind and any(str(a.kind).startswith(str(k)) for k in only)
        ]
    return actions


def register(server: SmolLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite]
        ),
    )
    def code_action(
        ls: SmolLanguageServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        """Accept/Reject on patch hunks; Ask agent about any non-empty selection."""
        return code_actions(ls, params)
