"""What a feature of the daemon is: one concern, its LSP handlers, and lifecycle hooks.

A feature names what it needs in its constructor, by type: the server
(`SmolLanguageServer`) and other features (`approvals: Approvals`). `app.py` builds the
features in the order of its list and hands each what it asks for, so no feature looks
another up by name and the server never imports one. A feature marks its handlers with
`@handles(method)` and `@command(name)`; `register` binds them. The notifications several
features care about (initialize, initialized, didSave) are dispatched by `app.py` to the hooks
below, in the features' order.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

H = TypeVar("H", bound=Callable[..., Any])

_MARK = "_smol_handles"


def handles(method: str, options: Any = None) -> Callable[[H], H]:
    """Marks a feature's method as the handler of an LSP request or notification."""

    def mark(fn: H) -> H:
        setattr(fn, _MARK, ("feature", method, options))
        return fn

    return mark


def command(name: str) -> Callable[[H], H]:
    """Marks a feature's method as the handler of a `workspace/executeCommand` command."""

    def mark(fn: H) -> H:
        setattr(fn, _MARK, ("command", name, None))
        return fn

    return mark


def _plain(method: Callable[..., Any]) -> Callable[..., Any]:
    """pygls tags its handlers with attributes, which a bound method cannot carry."""
    if inspect.iscoroutinefunction(method):

        @functools.wraps(method)
        async def call_async(*args: Any) -> Any:
            return await method(*args)

        return call_async

    @functools.wraps(method)
    def call(*args: Any) -> Any:
        return method(*args)

    return call


class Feature:
    """Base of the daemon's features; every hook does nothing unless overridden."""

    def register(self, server: LanguageServer) -> None:
        """Bind the methods marked with `@handles` and `@command` to `server`."""
        for name, member in inspect.getmembers(type(self), inspect.isfunction):
            mark = getattr(member, _MARK, None)
            if mark is None:
                continue
            kind, method, options = mark
            handler = _plain(getattr(self, name))
            if kind == "command":
                server.command(method)(handler)
            else:
                server.feature(method, options)(handler)

    def initialize(self, params: types.InitializeParams) -> None:
        """The workspace is open and the client's options are known."""

    def initialized(self, params: types.InitializedParams) -> None:
        """The client is ready for requests and notifications from the server."""

    def document_saved(self, params: types.DidSaveTextDocumentParams) -> None:
        """The user saved a file."""

    def close(self) -> None:
        """The client is gone: stop what runs."""
