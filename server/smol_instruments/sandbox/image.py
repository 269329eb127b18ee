"""Building the sandbox image: from `sandbox/Dockerfile` with a registry, from Debian without.

With a registry the Dockerfile is built as usual. Without one (the machines CI runs on), the
same image is made from Debian packages: `debootstrap` into a root file system, a `smol` user
(uid 1000) added, then `docker import`. The root file system is cached as a tarball, so a
rebuild only re-imports it (seconds instead of a minute).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.process import child_env
from ..patches.validation import SandboxUnavailable

log = logging.getLogger(__name__)

SUITE = "bookworm"
BASE_IMAGE = "debian:bookworm-slim"
PACKAGES = ("git", "python3", "python3-pytest")
SANDBOX_UID = 1000
DEFAULT_MIRROR = "http://deb.debian.org/debian"
# Bump when the offline recipe changes: it names the cached root file system.
RECIPE_VERSION = "1"

IMAGE_LABELS = {
    "org.opencontainers.image.title": "smol-instruments sandbox",
    "org.opencontainers.image.description": "Validates proposed patches: git apply, then the checks",
    "smol-instruments.sandbox.image": "1",
}
IMAGE_CONFIG = [
    "ENV LANG=C.UTF-8 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1",
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "USER smol",
    "WORKDIR /home/smol",
    'CMD ["sleep", "infinity"]',
]

Progress = Callable[[str], None]
DEBOOTSTRAP_MILESTONES = (
    "I: Retrieving InRelease",
    "I: Unpacking the base",
    "I: Configuring the base",
    "I: Base system",
)

DOCKERFILE = r"""# The patch-validation sandbox: git, python3 and pytest, run as the non-root user `smol`.
#
#   smol-instruments sandbox build        (uses this file when a registry answers, else builds
#                                          the same image offline from Debian packages)
#   docker build -t smol-instruments-sandbox:latest sandbox/
#
# Add what your checks need (a compiler, node, ...) below the apt-get line and set
# SANDBOX_IMAGE to your tag. The sandbox runs the container with no network, so tools must be
# in the image.
FROM debian:bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends git python3 python3-pytest \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* \
 && useradd --create-home --uid 1000 --user-group --shell /bin/sh smol

LABEL org.opencontainers.image.title="smol-instruments sandbox" \
      org.opencontainers.image.description="Validates proposed patches: git apply, then the checks" \
      smol-instruments.sandbox.image="1" \
      smol-instruments.sandbox.built-by="dockerfile"

ENV LANG=C.UTF-8 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
USER smol
WORKDIR /home/smol
CMD ["sleep", "infinity"]
"""


class BuildError(RuntimeError):
    """The image could not be built; the message is one line that says how to fix it."""


@dataclass
class BuildResult:
    image: str
    method: str  # "dockerfile" or "debootstrap"
    image_id: str
    duration_s: float
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "method": self.method,
            "image_id": self.image_id,
            "duration_s": round(self.duration_s, 1),
            "notes": self.notes,
        }


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "smol-instruments" / "sandbox"


def dockerfile() -> str:
    """The Dockerfile of the image: `sandbox/Dockerfile` (a test keeps the two identical)."""
    return DOCKERFILE


def apt_mirror(sources: list[Path] | None = None, suite: str = SUITE) -> str:
    """The Debian mirror this machine's apt uses for `suite` (deb.debian.org when none does)."""
    if sources is None:
        etc = Path("/etc/apt")
        sources = [etc / "sources.list"]
        listing = etc / "sources.list.d"
        if listing.is_dir():
            sources += sorted(listing.glob("*.list")) + sorted(listing.glob("*.sources"))
    for path in sources:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        found = _mirror_in(text, suite, deb822=path.suffix == ".sources")
        if found:
            return found
    return DEFAULT_MIRROR


def _mirror_in(text: str, suite: str, *, deb822: bool) -> str | None:
    if deb822:
        for stanza in re.split(r"\n\s*\n", text):
            fields: dict[str, str] = {}
            for line in stanza.splitlines():
                if line.strip().startswith("#") or ":" not in line:
                    continue
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
            if fields.get("enabled", "yes").lower() == "no":
                continue
            if (
                "deb" in fields.get("types", "").split()
                and suite in fields.get("suites", "").split()
            ):
                uris = fields.get("uris", "").split()
                if uris:
                    return uris[0].rstrip("/")
        return None
    for line in text.splitlines():
        words = re.sub(r"\[[^\]]*\]", "", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb" and words[2] == suite:
            return words[1].rstrip("/")
    return None


def _say(progress: Progress | None, message: str) -> None:
    if progress is not None:
        progress(message)


def build_image(
    client: Any,
    image: str,
    *,
    offline: bool | None = None,
    mirror: str | None = None,
    force: bool = False,
    progress: Progress | None = None,
) -> BuildResult:
    """Build `image`: the Dockerfile when a registry answers, else offline from Debian."""
    started = time.monotonic()
    notes: list[str] = []
    if offline is None:
        offline = not _registry_answers(client, progress)
        if offline:
            notes.append("no registry answers: built offline from Debian packages")
    previous = _image_id(client, image)
    if not offline:
        try:
            image_id = _build_dockerfile(client, image, progress)
            _remove_replaced(client, previous, image_id)
            return BuildResult(image, "dockerfile", image_id, time.monotonic() - started, notes)
        except BuildError as exc:
            notes.append(f"the Dockerfile build failed ({exc}); built offline instead")
            _say(progress, notes[-1])
    image_id = _build_offline(client, image, mirror=mirror, force=force, progress=progress)
    _remove_replaced(client, previous, image_id)
    return BuildResult(image, "debootstrap", image_id, time.monotonic() - started, notes)


def _image_id(client: Any, image: str) -> str | None:
    try:
        return str(client.images.get(image).id)
    except Exception:
        return None


def _remove_replaced(client: Any, previous: str | None, current: str) -> None:
    """Drop the image a rebuild replaced (now untagged); kept while a container uses it."""
    if previous and previous != current:
        try:
            client.images.remove(previous)
        except Exception:
            pass


def _registry_answers(client: Any, progress: Progress | None) -> bool:
    """Whether the Dockerfile's base image is here or can be pulled (a few seconds at most)."""
    import docker

    try:
        client.images.get(BASE_IMAGE)
        return True
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.DockerException:
        return False
    _say(progress, f"pulling {BASE_IMAGE}")
    timeout, client.api.timeout = client.api.timeout, 15
    try:
        repository, tag = BASE_IMAGE.split(":")
        client.api.pull(repository, tag=tag)
        client.images.get(BASE_IMAGE)
        return True
    except Exception as exc:
        # Expected without a registry; the raw error ("500 Server Error ...") would read as a
        # failure in a set-up log, and nothing failed.
        log.debug("pulling %s: %s", BASE_IMAGE, exc)
        _say(progress, f"{BASE_IMAGE} cannot be pulled here (no registry answers)")
        return False
    finally:
        client.api.timeout = timeout


def _build_dockerfile(client: Any, image: str, progress: Progress | None) -> str:
    import docker

    _say(progress, f"building {image} from sandbox/Dockerfile")
    try:
        built, _logs = client.images.build(
            fileobj=io.BytesIO(dockerfile().encode()),
            tag=image,
            labels={**IMAGE_LABELS, "smol-instruments.sandbox.built-by": "dockerfile"},
            rm=True,
            pull=False,
        )
    except docker.errors.BuildError as exc:
        raise BuildError(str(exc.msg).strip().splitlines()[-1][:200]) from None
    except docker.errors.APIError as exc:
        raise BuildError(str(exc.explanation or exc)[:200]) from None
    return str(built.id)


def rootfs_tarball() -> Path:
    recipe = "|".join([RECIPE_VERSION, SUITE, ",".join(PACKAGES), str(SANDBOX_UID)])
    digest = hashlib.sha256(recipe.encode()).hexdigest()[:12]
    return cache_dir() / f"rootfs-{SUITE}-{digest}.tar"


def _build_offline(
    client: Any, image: str, *, mirror: str | None, force: bool, progress: Progress | None
) -> str:
    tarball = rootfs_tarball()
    if force or not tarball.is_file():
        _make_rootfs_tarball(tarball, mirror or apt_mirror(), progress)
    else:
        _say(progress, f"reusing the cached root file system {tarball}")
    return _import(client, image, tarball, progress)


def _make_rootfs_tarball(tarball: Path, mirror: str, progress: Progress | None) -> None:
    if os.geteuid() != 0:
        raise BuildError(
            "building the image without a registry runs debootstrap, which needs root: "
            "run `sudo smol-instruments sandbox build` (or build sandbox/Dockerfile with a registry)"
        )
    if shutil.which("debootstrap") is None:
        raise BuildError(
            "debootstrap is not installed: `apt-get install debootstrap`, then build again"
        )
    tarball.parent.mkdir(parents=True, exist_ok=True)
    root = tarball.parent / "rootfs-build"
    shutil.rmtree(root, ignore_errors=True)
    argv = [
        "debootstrap",
        "--variant=minbase",
        "--include=" + ",".join(PACKAGES),
        SUITE,
        str(root),
        mirror,
    ]
    _say(progress, f"debootstrap {SUITE} from {mirror} (about a minute)")
    try:
        _run(argv, "debootstrap", progress)
        _customize_rootfs(root)
        partial = tarball.with_suffix(".partial")
        _say(progress, f"packing the root file system into {tarball}")
        _run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."], "tar", None)
        partial.replace(tarball)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _run(argv: list[str], name: str, progress: Progress | None) -> None:
    proc = subprocess.Popen(
        argv,
        env=child_env("network"),  # debootstrap fetches packages: proxies, certificates
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
    )
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        tail = [*tail[-19:], line.rstrip()]
        if progress is not None and line.startswith(DEBOOTSTRAP_MILESTONES):
            progress(line.strip())
    if proc.wait() != 0:
        last = next((line for line in reversed(tail) if line.strip()), "no output")
        raise BuildError(f"{name} failed (exit {proc.returncode}): {last[:200]}")


def _customize_rootfs(root: Path) -> None:
    """Add the `smol` user and drop what checks never need (package caches, docs)."""
    uid = SANDBOX_UID
    with open(root / "etc/passwd", "a") as passwd:
        passwd.write(f"smol:x:{uid}:{uid}:smol-instruments sandbox:/home/smol:/bin/sh\n")
    with open(root / "etc/group", "a") as group:
        group.write(f"smol:x:{uid}:\n")
    with open(root / "etc/shadow", "a") as shadow:
        shadow.write("smol:!:19000:0:99999:7:::\n")
    home = root / "home/smol"
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, uid, uid)
    for pattern in (
        "var/cache/apt/archives/*.deb",
        "var/cache/apt/*.bin",
        "var/lib/apt/lists/*",
        "usr/share/doc/*",
        "usr/share/man/*",
        "usr/share/info/*",
    ):
        for path in root.glob(pattern):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
    (root / "tmp").chmod(0o1777)


def _import(client: Any, image: str, tarball: Path, progress: Progress | None) -> str:
    import docker

    repository, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "")
    labels = {**IMAGE_LABELS, "smol-instruments.sandbox.built-by": "debootstrap"}
    changes = [*IMAGE_CONFIG, *(f'LABEL {key}="{value}"' for key, value in labels.items())]
    _say(progress, f"importing {tarball.name} as {image}")
    try:
        client.api.import_image_from_file(
            str(tarball), repository=repository, tag=tag or "latest", changes=changes
        )
        return str(client.images.get(image).id)
    except docker.errors.DockerException as exc:
        raise BuildError(f"docker import failed: {str(exc)[:200]}") from None


def image_info(client: Any, image: str) -> dict[str, Any]:
    """Whether `image` is present, and what it is (for `sandbox status` and `doctor`)."""
    import docker

    try:
        found = client.images.get(image)
    except docker.errors.ImageNotFound:
        return {"name": image, "present": False}
    labels = found.labels or {}
    return {
        "name": image,
        "present": True,
        "id": found.short_id,
        "created": found.attrs.get("Created"),
        "size_mb": round(found.attrs.get("Size", 0) / 1e6),
        "built_by": labels.get("smol-instruments.sandbox.built-by"),
    }


def ensure_available(client: Any, image: str) -> None:
    """Raise SandboxUnavailable with the fix when `image` is missing."""
    if not image_info(client, image)["present"]:
        raise SandboxUnavailable(
            f"the sandbox image {image} is missing",
            "run `smol-instruments sandbox build` (works offline)",
        )
