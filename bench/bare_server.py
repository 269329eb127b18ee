"""The baseline for the daemon's start-up: a pygls server that does nothing."""

from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "0")

if __name__ == "__main__":
    server.start_io()
