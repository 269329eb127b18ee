"""The Agent Client Protocol host: `smol-instruments acp`, for Zed, JetBrains IDEs, Neovim, Emacs.

A peer of `lsp/` and `cli/`: it hands the same AgentSession an approver (permission requests
put to the editor) and an event sink (session updates), and never teaches the agent that it
exists. docs/acp.md says what is mapped to what.
"""
