"""Settings: defaults from TOOLS.md, environment and .env, one-line errors, editor settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from smol_instruments.base.config import (
    Settings,
    SettingsError,
    camel_name,
    load_settings,
    settings_environ,
    settings_from_client,
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No setting in the environment, and a cwd without a stray .env."""
    for name in list(os.environ):
        if name.lower() in Settings.model_fields:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_defaults_match_tools_md(clean_env: pytest.MonkeyPatch) -> None:
    s = load_settings(None)
    assert s.model_id == "ollama_chat/qwen2.5-coder:7b"
    assert s.model_api_base == "http://localhost:11434"
    assert s.model_api_key is None
    assert s.model_temperature == 0.1
    assert s.model_max_tokens == 1024
    assert s.model_num_ctx == 8192
    assert s.agent_max_steps == 25
    assert s.phoenix_enabled is True
    assert s.phoenix_endpoint == "http://localhost:6006/v1/traces"
    assert s.validation_max_chars == 5000
    assert s.validation_max_lines == 200
    assert s.validation_max_line_range == 1000
    assert s.truncation_max_chars == 3000
    assert s.truncation_max_lines == 150
    assert s.truncation_max_list_items == 100
    assert s.log_level == "INFO"
    assert s.suppress_warnings is True
    assert s.sandbox_backend == "auto"
    assert s.sandbox_image
    assert s.approval_timeout_s > 0
    assert s.otel_exporter_otlp_endpoint is None
    assert s.traces_endpoint == "http://localhost:6006/v1/traces"


def test_every_tools_md_setting_exists() -> None:
    names = {
        "MODEL_ID",
        "MODEL_API_BASE",
        "MODEL_API_KEY",
        "MODEL_TEMPERATURE",
        "MODEL_MAX_TOKENS",
        "MODEL_NUM_CTX",
        "AGENT_MAX_STEPS",
        "PHOENIX_ENABLED",
        "PHOENIX_ENDPOINT",
        "VALIDATION_MAX_CHARS",
        "VALIDATION_MAX_LINES",
        "VALIDATION_MAX_LINE_RANGE",
        "TRUNCATION_MAX_CHARS",
        "TRUNCATION_MAX_LINES",
        "TRUNCATION_MAX_LIST_ITEMS",
        "LOG_LEVEL",
        "SUPPRESS_WARNINGS",
        "SANDBOX_BACKEND",
        "SANDBOX_IMAGE",
        "APPROVAL_TIMEOUT_S",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    }
    assert {n.lower() for n in names} <= set(Settings.model_fields)


def test_environment_is_read(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("MODEL_ID", "openai/gpt-x")
    clean_env.setenv("MODEL_TEMPERATURE", "0.7")
    clean_env.setenv("PHOENIX_ENABLED", "false")
    clean_env.setenv("log_level", "debug")  # case-insensitive name, value upper-cased
    clean_env.setenv("SANDBOX_BACKEND", "local")
    s = load_settings(None)
    assert s.model_id == "openai/gpt-x"
    assert s.model_temperature == 0.7
    assert s.phoenix_enabled is False
    assert s.log_level == "DEBUG"
    assert s.sandbox_backend == "local"


def test_dotenv_is_read_and_environment_wins(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = tmp_path / "custom.env"
    env_file.write_text(
        "MODEL_ID=from-dotenv/model\nMODEL_MAX_TOKENS=2048\nAGENT_MAX_STEPS=7\nUNRELATED=1\n"
    )
    s = load_settings(env_file)
    assert (s.model_id, s.model_max_tokens, s.agent_max_steps) == ("from-dotenv/model", 2048, 7)
    clean_env.setenv("MODEL_MAX_TOKENS", "512")
    s = load_settings(env_file)
    assert s.model_max_tokens == 512  # the environment beats .env
    assert s.model_id == "from-dotenv/model"


def test_dotenv_in_cwd_is_the_default(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("AGENT_MAX_STEPS=9\n")
    assert load_settings().agent_max_steps == 9
    assert load_settings(None).agent_max_steps == 25  # None: no .env at all


def test_empty_optional_strings_become_none(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("MODEL_API_KEY", "   ")
    clean_env.setenv("SANDBOX_CHECK_COMMAND", "")
    s = load_settings(None)
    assert s.model_api_key is None
    assert s.sandbox_check_command is None


def test_otel_endpoint_is_honoured(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    assert load_settings(None).traces_endpoint == "http://collector:4318/v1/traces"
    clean_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/v1/traces")
    assert load_settings(None).traces_endpoint == "http://collector:4318/v1/traces"


INVALID = [
    ("MODEL_ID", "", "LiteLLM model id"),
    ("MODEL_API_BASE", "localhost:11434", "http:// or https://"),
    ("MODEL_TEMPERATURE", "hot", "from 0 to 2"),
    ("MODEL_TEMPERATURE", "2.5", "from 0 to 2"),
    ("MODEL_TEMPERATURE", "-0.1", "from 0 to 2"),
    ("MODEL_MAX_TOKENS", "lots", "16 to 131072"),
    ("MODEL_MAX_TOKENS", "8", "16 to 131072"),
    ("MODEL_MAX_TOKENS", "1.5", "16 to 131072"),
    ("MODEL_NUM_CTX", "100", "512 to 1048576"),
    ("MODEL_TIMEOUT_S", "0", "more than 0"),
    ("AGENT_MAX_STEPS", "0", "1 to 200"),
    ("AGENT_MAX_STEPS", "1000", "1 to 200"),
    ("PHOENIX_ENABLED", "maybe", "true or false"),
    ("PHOENIX_ENDPOINT", "localhost:6006", "http:// or https://"),
    ("PHOENIX_PROJECT", "", "Phoenix project name"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "grpc://x:4317", "http:// or https://"),
    ("VALIDATION_MAX_CHARS", "10", "100 to 1000000"),
    ("VALIDATION_MAX_LINES", "0", "1 to 100000"),
    ("VALIDATION_MAX_LINE_RANGE", "-5", "1 to 100000"),
    ("TRUNCATION_MAX_CHARS", "1", "200 to 1000000"),
    ("TRUNCATION_MAX_LINES", "2", "5 to 100000"),
    ("TRUNCATION_MAX_LIST_ITEMS", "zero", "1 to 100000"),
    ("LOG_LEVEL", "LOUD", "DEBUG, INFO, WARNING, ERROR or CRITICAL"),
    ("SUPPRESS_WARNINGS", "perhaps", "true or false"),
    ("COMMAND_TIMEOUT_S", "-1", "more than 0"),
    ("APPROVAL_TIMEOUT_S", "0", "more than 0"),
    ("APPROVAL_TIMEOUT_S", "soon", "more than 0"),
    ("POLICY_ALLOW_REPO_LOOSENING", "sometimes", "true or false"),
    ("SANDBOX_BACKEND", "podman", "auto, docker, local or none"),
    ("SANDBOX_IMAGE", "", "Docker image name"),
    ("SANDBOX_TIMEOUT_S", "0", "more than 0"),
    ("SANDBOX_MEMORY", "lots", "512m or 1g"),
    ("SANDBOX_PIDS_LIMIT", "1", "16 to 100000"),
    ("SANDBOX_CPUS", "0", "number of CPUs"),
]


@pytest.mark.parametrize(("name", "value", "allowed"), INVALID)
def test_invalid_setting_is_one_line_naming_it(
    clean_env: pytest.MonkeyPatch, name: str, value: str, allowed: str
) -> None:
    clean_env.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings(None)
    message = str(info.value)
    assert "\n" not in message
    assert name in message
    assert "(allowed: " in message
    assert allowed in message.split("(allowed: ", 1)[1]
    assert "Traceback" not in message
    assert info.value.__cause__ is None  # `from None`: no chained pydantic traceback


def test_invalid_setting_in_dotenv(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = tmp_path / "bad.env"
    env_file.write_text("SANDBOX_BACKEND=podman\n")
    with pytest.raises(SettingsError, match=r"SANDBOX_BACKEND='podman'.*auto, docker, local"):
        load_settings(env_file)


def test_several_invalid_settings_still_one_line(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("MODEL_TEMPERATURE", "hot")
    clean_env.setenv("AGENT_MAX_STEPS", "0")
    with pytest.raises(SettingsError) as info:
        load_settings(None)
    assert "\n" not in str(info.value)
    assert "(and 1 more)" in str(info.value)


def test_overrides_are_validated_too(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(SettingsError, match="SANDBOX_BACKEND"):
        load_settings(None, sandbox_backend="podman")


# --- editor settings (camelCase) --------------------------------------------------------------


def test_camel_names() -> None:
    assert camel_name("model_api_base") == "modelApiBase"
    assert camel_name("approval_timeout_s") == "approvalTimeoutS"
    assert camel_name("otel_exporter_otlp_endpoint") == "otelExporterOtlpEndpoint"


def test_settings_from_client_maps_camel_case(clean_env: pytest.MonkeyPatch) -> None:
    base = load_settings(None)
    s = settings_from_client(
        {
            "modelId": "ollama_chat/llama3",
            "modelApiBase": "http://gpu-box:11434",
            "modelTemperature": 0.3,
            "agentMaxSteps": 12,
            "sandboxBackend": "none",
            "phoenixEnabled": False,
            "truncationMaxListItems": 20,
            "modelApiKey": "",  # empty: keep the base value
            "log_level": "warning",  # the snake_case name is accepted as well
        },
        base,
    )
    assert s.model_id == "ollama_chat/llama3"
    assert s.model_api_base == "http://gpu-box:11434"
    assert s.model_temperature == 0.3
    assert s.agent_max_steps == 12
    assert s.sandbox_backend == "none"
    assert s.phoenix_enabled is False
    assert s.truncation_max_list_items == 20
    assert s.model_api_key is None
    assert s.log_level == "WARNING"
    # Untouched settings keep the base's values.
    assert s.model_max_tokens == base.model_max_tokens
    assert settings_from_client(None, base) == base
    assert settings_from_client({}, base) == base


def test_settings_from_client_invalid_value_names_the_camel_setting(
    clean_env: pytest.MonkeyPatch,
) -> None:
    base = load_settings(None)
    with pytest.raises(SettingsError) as info:
        settings_from_client({"modelTemperature": 9}, base)
    message = str(info.value)
    assert "modelTemperature" in message
    assert "from 0 to 2" in message
    assert "\n" not in message
    with pytest.raises(
        SettingsError, match=r"sandboxBackend='podman'.*auto, docker, local or none"
    ):
        settings_from_client({"sandboxBackend": "podman"}, base)


def test_settings_from_client_unknown_key(clean_env: pytest.MonkeyPatch) -> None:
    base = load_settings(None)
    with pytest.raises(SettingsError) as info:
        settings_from_client({"modelTemprature": 0.2}, base)
    message = str(info.value)
    assert "'modelTemprature'" in message
    assert "modelTemperature" in message  # the known names are listed
    assert "\n" not in message


def test_settings_environ_round_trip(clean_env: pytest.MonkeyPatch) -> None:
    base = load_settings(None, agent_max_steps=3, phoenix_enabled=False)
    env = settings_environ(base)
    assert env["AGENT_MAX_STEPS"] == "3"
    assert env["PHOENIX_ENABLED"] == "false"
    assert "MODEL_API_KEY" not in env  # None values are not exported
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert load_settings(None) == base


def test_env_example_documents_every_setting_with_its_default(settings: Settings) -> None:
    """.env.example names every setting, and loading it gives exactly the defaults."""
    import re
    from pathlib import Path

    example = Path(__file__).resolve().parent.parent / ".env.example"
    names = set(re.findall(r"^([A-Z0-9_]+)=", example.read_text(), re.M))
    assert names == {field.upper() for field in Settings.model_fields}
    assert load_settings(example) == load_settings(None)
