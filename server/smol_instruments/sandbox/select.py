"""Which sandbox backend runs: SANDBOX_BACKEND, and for `auto` what this machine offers.

`auto` picks docker when an engine answers and the image is there, else local (a throwaway
copy on the host). An explicit `docker` that cannot run is an error that says how to fix it,
never a silent fallback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..base.config import Settings
from ..patches.validation import NoneSandbox, Sandbox, SandboxUnavailable

PROBE_TIMEOUT_S = 3.0
BUILD_FIX = "run `smol-instruments sandbox build` (works offline)"


def _docker_ready(settings: Settings) -> tuple[Any, SandboxUnavailable | None]:
    """(a client, None) when docker can validate, else (client or None, the reason)."""
    from .docker import docker_client
    from .image import ensure_available

    try:
        client = docker_client(timeout=PROBE_TIMEOUT_S)
    except SandboxUnavailable as exc:
        return None, exc
    try:
        ensure_available(client, settings.sandbox_image)
    except SandboxUnavailable as exc:
        return client, exc
    return client, None


def open_sandbox(settings: Settings, repo_root: Path) -> Sandbox:
    """The sandbox for one session on `repo_root`; SandboxUnavailable for an explicit docker."""
    backend = settings.sandbox_backend
    if backend == "none":
        return NoneSandbox()
    if backend == "local":
        from .local import LocalSandbox

        return LocalSandbox(settings, repo_root)
    client, problem = _docker_ready(settings)
    if problem is None:
        from .docker import DockerSandbox

        return DockerSandbox(settings, repo_root, client=client)
    if client is not None:
        client.close()
    if backend == "docker":
        raise SandboxUnavailable(f"SANDBOX_BACKEND=docker but {problem.reason}", problem.fix)
    from .local import LocalSandbox

    return LocalSandbox(settings, repo_root)


def describe_backend(settings: Settings) -> dict[str, Any]:
    """What `open_sandbox` would pick and why, for `doctor` and `sandbox status`.

    Keys: backend, requested, reason, and when they apply engine {host, version}, image
    {name, present, ...}, problem (why validation is degraded or impossible) and fix.
    """
    requested = settings.sandbox_backend
    info: dict[str, Any] = {"requested": requested}
    if requested == "none":
        return info | {
            "backend": "none",
            "reason": "SANDBOX_BACKEND=none: patches are not validated",
            "problem": "patches are not validated",
            "fix": "set SANDBOX_BACKEND=auto",
        }
    if requested == "local":
        return info | {
            "backend": "local",
            "reason": "SANDBOX_BACKEND=local: patches are validated in a throwaway copy on the host",
        }

    from .docker import docker_host
    from .image import image_info

    client, problem = _docker_ready(settings)
    info["engine"] = {"host": docker_host(), "answers": client is not None}
    if client is not None:
        try:
            info["engine"]["version"] = client.version().get("Version")
            info["image"] = image_info(client, settings.sandbox_image)
        finally:
            client.close()
    else:
        info["image"] = {"name": settings.sandbox_image, "present": None}
    if problem is None:
        image = info["image"]
        return info | {
            "backend": "docker",
            "reason": (
                f"Docker {info['engine'].get('version')} at {docker_host()}, "
                f"image {settings.sandbox_image} ({image.get('id')}, built by "
                f"{image.get('built_by') or 'unknown'})"
            ),
        }
    if requested == "docker":
        return info | {
            "backend": "docker",
            "reason": f"SANDBOX_BACKEND=docker but {problem.reason}",
            "problem": problem.reason,
            "fix": problem.fix,
        }
    return info | {
        "backend": "local",
        "reason": f"{problem.reason}: patches are validated on the host, without isolation",
        "problem": problem.reason,
        "fix": problem.fix,
    }
