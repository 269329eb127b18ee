"""Where the model runs: MODEL_BACKEND=auto|server|embedded, against a real HTTP server on
127.0.0.1 (the scripted model) or nothing; and the pinned catalog's own consistency."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.scripted_model import ScriptedModel

from smol_instruments.base.config import Settings
from smol_instruments.llm.catalog import (
    DEFAULT_MODEL,
    SMALL_MODEL,
    ModelSetupError,
    builtin_catalog,
    is_path,
)
from smol_instruments.llm.embedded import default_threads
from smol_instruments.llm.resolve import ModelRuntime, embedded_model


def configured(settings: Settings, **update: object) -> Settings:
    return settings.model_copy(update=update)


def test_auto_uses_the_configured_server_when_it_answers(settings: Settings) -> None:
    with ScriptedModel([]) as model:
        chosen = configured(
            settings, model_backend="auto", model_id=model.model_id, model_api_base=model.base_url
        )
        endpoint = ModelRuntime().endpoint(chosen)
    assert endpoint.backend == "server"
    assert (endpoint.model_id, endpoint.api_base) == (model.model_id, model.base_url)


def test_auto_falls_back_to_the_embedded_server_when_nothing_answers(
    settings: Settings, tmp_path: Path
) -> None:
    chosen = configured(
        settings,
        model_backend="auto",
        model_api_base="http://127.0.0.1:9",
        model_file=str(tmp_path / "absent.gguf"),
    )
    runtime = ModelRuntime()
    with pytest.raises(ModelSetupError, match=r"absent\.gguf not found"):
        runtime.endpoint(chosen)
    assert runtime.server is None


def test_server_backend_never_starts_one(settings: Settings, tmp_path: Path) -> None:
    chosen = configured(
        settings,
        model_backend="server",
        model_api_base="http://127.0.0.1:9",
        model_file=str(tmp_path / "absent.gguf"),
    )
    runtime = ModelRuntime()
    endpoint = runtime.endpoint(chosen)
    assert endpoint.backend == "server" and endpoint.api_base == "http://127.0.0.1:9"
    assert runtime.server is None


def test_model_file_is_a_catalog_name_or_a_path(settings: Settings, tmp_path: Path) -> None:
    by_name = embedded_model(
        configured(settings, model_file=SMALL_MODEL, model_cache_dir=str(tmp_path))
    )
    assert by_name.spec is not None and by_name.path == tmp_path / by_name.spec.file
    assert by_name.alias == SMALL_MODEL
    own = tmp_path / "mine.gguf"
    by_path = embedded_model(configured(settings, model_file=str(own)))
    assert by_path.spec is None and by_path.path == own and by_path.alias == "mine"
    with pytest.raises(ModelSetupError, match=r"no model named 'nope'"):
        embedded_model(configured(settings, model_file="nope"))
    assert is_path("~/m.gguf") and is_path("./m") and not is_path(DEFAULT_MODEL)


def test_the_pinned_catalog_is_consistent() -> None:
    catalog = builtin_catalog()
    assert {DEFAULT_MODEL, SMALL_MODEL} <= set(catalog)
    for spec in catalog.values():
        assert spec.sources == ["hub", "pypi"]
        assert sum(chunk.size for chunk in spec.chunks) == spec.size  # also checked on load
        assert len({chunk.sha256 for chunk in spec.chunks}) == len(spec.chunks)


def test_default_threads_leave_room_on_small_machines() -> None:
    assert default_threads() >= 1
