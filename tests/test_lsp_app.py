"""The daemon's assembly: features built in order, each given its dependencies by type."""

from __future__ import annotations

import pytest

from smol_instruments.base.config import Settings
from smol_instruments.lsp.app import FEATURES, create_server
from smol_instruments.lsp.features.approvals import Approvals
from smol_instruments.lsp.features.chat import Chat
from smol_instruments.lsp.features.code_actions import CodeActions
from smol_instruments.lsp.features.patches import Patches


def test_each_feature_gets_the_instances_its_constructor_names() -> None:
    server = create_server(Settings(_env_file=None))  # type: ignore[call-arg]
    approvals = server.get_feature(Approvals)
    patches = server.get_feature(Patches)
    chat = server.get_feature(Chat)
    code_actions = server.get_feature(CodeActions)
    assert [type(f) for f in server] == list(FEATURES)
    assert patches is not None and patches.approvals is approvals and patches.server is server
    assert chat is not None and chat.approvals is approvals
    assert code_actions is not None and code_actions.patches is patches


def test_a_feature_listed_before_what_it_needs_fails_at_start_naming_it() -> None:
    with pytest.raises(TypeError, match="Patches needs Approvals: list it before Patches"):
        create_server(Settings(_env_file=None), (Patches, Approvals))  # type: ignore[call-arg]


def test_every_handler_is_bound_once() -> None:
    server = create_server(Settings(_env_file=None))  # type: ignore[call-arg]
    assert set(server.protocol.fm.commands) == {
        "smol.acceptPatch",
        "smol.rejectPatch",
        "smol.askAboutSelection",
    }
    assert {"smol/chat", "smol/patches", "textDocument/codeAction"} <= set(
        server.protocol.fm.features
    )
