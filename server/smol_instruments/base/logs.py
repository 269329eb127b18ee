"""Which libraries' logs are noise to a user, in one place for every host.

HTTP clients log every request at INFO (huggingface_hub 2.x goes through `httpx2`, LiteLLM
through `httpx`), so a model pull or a model call would print a line per request on the
terminal, or send one per request to the editor as a log message. Hosts call
`quiet_libraries()` after setting up their handlers: those loggers then speak from WARNING up.
"""

from __future__ import annotations

import logging

NOISY_LOGGERS = (
    "LiteLLM",
    "litellm",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "huggingface_hub",
    "opentelemetry",
    "docker",
    "urllib3",
    "pygls",
)


def quiet_libraries() -> None:
    """Third-party loggers log from WARNING up (or higher, when the root logger is higher)."""
    level = max(logging.WARNING, logging.getLogger().level)
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(level)
