"""One Settings object for the whole project; nothing else reads the environment.

Settings come from, highest first: what the editor sends, the environment, the user's own
settings file (`$XDG_CONFIG_HOME/smol-instruments/settings.env`, by default
`~/.config/smol-instruments/settings.env`), and a `.env` file in the current directory.

That `.env` usually belongs to the repository, so it is the repository's word: it may set
harmless settings (temperature, steps, truncation), but a setting marked `user_only` —
one that decides what runs, what is allowed, or where code and prompts are sent (the check
command, policy loosening, the model endpoint, id and key, the tracing endpoint, the log
file, containment, the sandbox image) — is ignored there, with one warning line.

The editor sends the same settings in camelCase (`modelId`, `modelApiBase`, ...) and they are
validated by the same model, so a bad value is reported the same way everywhere: one line
naming the setting and what it accepts.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from .userdirs import user_settings_file

log = logging.getLogger(__name__)

LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
SandboxBackendName = Literal["auto", "docker", "local", "none"]
ModelBackendName = Literal["auto", "server", "embedded"]
ContainmentMode = Literal["auto", "required", "off"]


class SettingsError(ValueError):
    """A setting has a value it cannot take; the message is one line meant for the user."""


def _allowed(text: str, *, user_only: bool = False) -> Any:
    return {"allowed": text, "user_only": user_only}


def _user_only(text: str) -> Any:
    """A setting that decides what runs or where data goes: never from the repository."""
    return _allowed(text, user_only=True)


class Settings(BaseSettings):
    """Every setting of smol-instruments, with its default. `.env.example` documents each."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        protected_namespaces=(),
        validate_default=True,
    )

    # The model.
    model_id: str = Field(
        "ollama_chat/qwen2.5-coder:7b",
        min_length=1,
        json_schema_extra=_user_only("a LiteLLM model id such as ollama_chat/qwen2.5-coder:7b"),
    )
    model_api_base: str = Field(
        "http://localhost:11434",
        json_schema_extra=_user_only("an http:// or https:// URL"),
    )
    model_api_key: str | None = Field(None, json_schema_extra=_user_only("any string"))
    model_temperature: float = Field(
        0.1, ge=0.0, le=2.0, json_schema_extra=_allowed("a number from 0 to 2")
    )
    model_max_tokens: int = Field(
        1024, ge=16, le=131072, json_schema_extra=_allowed("a whole number from 16 to 131072")
    )
    model_num_ctx: int = Field(
        8192, ge=512, le=1048576, json_schema_extra=_allowed("a whole number from 512 to 1048576")
    )
    model_timeout_s: float = Field(
        120.0, gt=0, le=3600, json_schema_extra=_allowed("seconds, more than 0 and at most 3600")
    )

    # Where the model runs: a server (Ollama, any OpenAI-compatible one) or the embedded one.
    model_backend: ModelBackendName = Field(
        "auto", json_schema_extra=_allowed("auto, server or embedded")
    )
    model_file: str = Field(
        "qwen2.5-coder-1.5b",
        min_length=1,
        json_schema_extra=_user_only(
            "a model name from `smol-instruments model list`, or a .gguf path"
        ),
    )
    model_threads: int = Field(
        0, ge=0, le=256, json_schema_extra=_allowed("0 (automatic) or a whole number up to 256")
    )
    model_embedded_port: int = Field(
        0, ge=0, le=65535, json_schema_extra=_allowed("0 (any free port) or a port up to 65535")
    )
    model_start_timeout_s: float = Field(
        180.0, gt=0, le=3600, json_schema_extra=_allowed("seconds, more than 0 and at most 3600")
    )
    model_warm_up: bool = Field(True, json_schema_extra=_allowed("true or false"))
    model_auto_pull: bool = Field(True, json_schema_extra=_user_only("true or false"))
    model_cache_dir: str | None = Field(None, json_schema_extra=_user_only("a directory path"))
    model_catalog: str | None = Field(
        None, json_schema_extra=_user_only("the path of a TOML file of pinned models")
    )

    # The agent.
    agent_max_steps: int = Field(
        25, ge=1, le=200, json_schema_extra=_allowed("a whole number from 1 to 200")
    )

    # Tracing.
    phoenix_enabled: bool = Field(True, json_schema_extra=_allowed("true or false"))
    phoenix_endpoint: str = Field(
        "http://localhost:6006/v1/traces",
        json_schema_extra=_user_only("an http:// or https:// OTLP/HTTP traces URL"),
    )
    phoenix_project: str = Field(
        "smol-instruments", min_length=1, json_schema_extra=_allowed("a Phoenix project name")
    )
    otel_exporter_otlp_endpoint: str | None = Field(
        None, json_schema_extra=_user_only("an http:// or https:// URL")
    )

    # Validation of tool arguments.
    validation_max_chars: int = Field(
        5000, ge=100, le=1_000_000, json_schema_extra=_allowed("a whole number from 100 to 1000000")
    )
    validation_max_lines: int = Field(
        200, ge=1, le=100_000, json_schema_extra=_allowed("a whole number from 1 to 100000")
    )
    validation_max_line_range: int = Field(
        1000, ge=1, le=100_000, json_schema_extra=_allowed("a whole number from 1 to 100000")
    )

    # Truncation of tool output.
    truncation_max_chars: int = Field(
        3000, ge=200, le=1_000_000, json_schema_extra=_allowed("a whole number from 200 to 1000000")
    )
    truncation_max_lines: int = Field(
        150, ge=5, le=100_000, json_schema_extra=_allowed("a whole number from 5 to 100000")
    )
    truncation_max_list_items: int = Field(
        100, ge=1, le=100_000, json_schema_extra=_allowed("a whole number from 1 to 100000")
    )

    # Logging.
    log_level: LogLevel = Field(
        "INFO", json_schema_extra=_allowed("DEBUG, INFO, WARNING, ERROR or CRITICAL")
    )
    log_file: str | None = Field(None, json_schema_extra=_user_only("a file path"))
    suppress_warnings: bool = Field(True, json_schema_extra=_allowed("true or false"))

    # Commands and approvals.
    command_timeout_s: float = Field(
        120.0, gt=0, le=3600, json_schema_extra=_allowed("seconds, more than 0 and at most 3600")
    )
    approval_timeout_s: float = Field(
        120.0, gt=0, le=86400, json_schema_extra=_allowed("seconds, more than 0 and at most 86400")
    )
    policy_allow_repo_loosening: bool = Field(False, json_schema_extra=_user_only("true or false"))
    command_containment: ContainmentMode = Field(
        "auto", json_schema_extra=_user_only("auto, required or off")
    )
    command_read_paths: str | None = Field(
        None, json_schema_extra=_user_only("absolute paths separated by ':', or empty")
    )

    # The patch sandbox.
    sandbox_backend: SandboxBackendName = Field(
        "auto", json_schema_extra=_allowed("auto, docker, local or none")
    )
    sandbox_image: str = Field(
        "smol-instruments-sandbox:latest",
        min_length=1,
        json_schema_extra=_user_only("a Docker image name"),
    )
    sandbox_check_command: str | None = Field(
        None, json_schema_extra=_user_only("a shell command run on the patched copy, or empty")
    )
    sandbox_check_tests: bool = Field(True, json_schema_extra=_allowed("true or false"))
    sandbox_timeout_s: float = Field(
        60.0, gt=0, le=3600, json_schema_extra=_allowed("seconds, more than 0 and at most 3600")
    )
    sandbox_memory: str = Field(
        "1g", pattern=r"^[0-9]+[kmgKMG]?$", json_schema_extra=_allowed("a size such as 512m or 1g")
    )
    sandbox_pids_limit: int = Field(
        256, ge=16, le=100_000, json_schema_extra=_allowed("a whole number from 16 to 100000")
    )
    sandbox_cpus: float = Field(
        1.0, gt=0, le=64, json_schema_extra=_allowed("a number of CPUs such as 1 or 0.5")
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        project = getattr(dotenv_settings, "env_file", None)
        return (
            init_settings,
            env_settings,
            DotEnvSettingsSource(settings_cls, env_file=user_settings_file()),
            ProjectEnvFile(settings_cls, env_file=project),
        )

    @field_validator("model_api_base", "phoenix_endpoint", "otel_exporter_otlp_endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return value or None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/") if not value.endswith("/v1/traces") else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator(
        "model_api_key",
        "model_cache_dir",
        "model_catalog",
        "sandbox_check_command",
        "command_read_paths",
        "log_file",
        mode="before",
    )
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("command_read_paths")
    @classmethod
    def _absolute_paths(cls, value: str | None) -> str | None:
        if value is None:
            return None
        relative = [p for p in value.split(os.pathsep) if p and not os.path.isabs(p)]
        if relative:
            raise ValueError(f"every path must be absolute, not {relative[0]!r}")
        return value

    @property
    def traces_endpoint(self) -> str:
        """Where spans go: the standard OTLP variable wins over PHOENIX_ENDPOINT."""
        if self.otel_exporter_otlp_endpoint:
            base = self.otel_exporter_otlp_endpoint
            return base if base.endswith("/v1/traces") else base + "/v1/traces"
        return self.phoenix_endpoint


#: Settings a `.env` in the current directory (the repository's) may not set.
USER_ONLY = frozenset(
    name
    for name, info in Settings.model_fields.items()
    if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("user_only")
)


class ProjectEnvFile(DotEnvSettingsSource):
    """The `.env` of the current directory, without the settings only the user may set."""

    def __call__(self) -> dict[str, Any]:
        data = super().__call__()
        ignored = sorted(name for name in data if name in USER_ONLY)
        if ignored:
            log.warning(
                "ignored %s in %s: settings that decide what runs or where your code goes "
                "are read only from the environment or %s",
                ", ".join(env_name(name) for name in ignored),
                Path(str(self.env_file)).resolve(),
                user_settings_file(),
            )
        return {name: value for name, value in data.items() if name not in USER_ONLY}


def env_name(field: str) -> str:
    return field.upper()


def camel_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


_CAMEL_TO_FIELD = {camel_name(name): name for name in Settings.model_fields}


def _describe(error: dict[str, Any], *, camel: bool) -> str:
    field = str(error["loc"][0]) if error.get("loc") else "?"
    info = Settings.model_fields.get(field)
    extra = info.json_schema_extra if info is not None else None
    allowed = extra.get("allowed") if isinstance(extra, dict) else None
    name = camel_name(field) if camel else env_name(field)
    value = error.get("input")
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    shown = repr(value) if not isinstance(value, dict) else "<missing>"
    line = f"invalid setting {name}={shown}: {message}"
    if allowed:
        line += f" (allowed: {allowed})"
    return line


def _raise_settings_error(exc: ValidationError, *, camel: bool = False) -> None:
    errors = exc.errors()
    first = _describe(dict(errors[0]), camel=camel)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    raise SettingsError(first + more) from None


def load_settings(env_file: str | Path | None = ".env", **overrides: Any) -> Settings:
    """Read the settings; a bad value raises SettingsError with one readable line."""
    try:
        return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg]
    except ValidationError as exc:
        _raise_settings_error(exc)
        raise  # unreachable: keeps type checkers satisfied


def settings_from_client(options: dict[str, Any] | None, base: Settings) -> Settings:
    """Apply an editor's camelCase settings on top of `base`, validated like the environment."""
    updates: dict[str, Any] = {}
    unknown: list[str] = []
    for key, value in (options or {}).items():
        field = _CAMEL_TO_FIELD.get(key) or (key if key in Settings.model_fields else None)
        if field is None:
            unknown.append(key)
            continue
        if value is None or value == "":
            continue
        updates[field] = value
    if unknown:
        raise SettingsError(
            f"unknown setting {unknown[0]!r} (known: {', '.join(sorted(_CAMEL_TO_FIELD))})"
        )
    merged = base.model_dump() | updates
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        _raise_settings_error(exc, camel=True)
        raise


def settings_environ(settings: Settings) -> dict[str, str]:
    """The settings as environment variables, for child processes (the daemon, the sandbox)."""
    env: dict[str, str] = {}
    for name, value in settings.model_dump().items():
        if value is None:
            continue
        env[env_name(name)] = str(value).lower() if isinstance(value, bool) else str(value)
    return env
