"""A diff told line by line (patches/describe.py), on git's own diffs of real commits."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import git, make_repo
from smol_instruments.patches.describe import describe_diff

BEFORE = {
    "app/store.py": (
        "import json\n\n\ndef path():\n    return 'tasks.json'\n\n\n"
        "class Store:\n    def load(self):\n        return json.loads(open(path()).read())\n"
    ),
    "README.md": "# store\n",
    "old.txt": "gone soon\n",
    "logo.png": "",
}


def _commit(repo: Path, changes: dict[str, str | None], binary: bytes | None = None) -> str:
    for name, text in changes.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
    if binary is not None:
        (repo / "logo.png").write_bytes(binary)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "change")
    shown = subprocess.run(
        ["git", "show", "--no-color", "--format=", "--patch", "HEAD"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return shown.stdout


def test_each_change_is_a_line_in_the_function_it_touches(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", BEFORE)
    new = BEFORE["app/store.py"].replace("import json\n", "import json\nimport os\n")
    new = new.replace("return 'tasks.json'", "return os.environ.get('TASKS', 'tasks.json')")
    new = new.replace(
        "        return json.loads(open(path()).read())\n",
        "        with open(path()) as f:\n            return json.load(f)\n",
    )
    diff = _commit(repo, {"app/store.py": new, "old.txt": None, "notes/new.md": "a\nb\n"})
    told = describe_diff(diff, lambda p: (repo / p).read_text())
    assert told is not None
    assert told.splitlines() == [
        "app/store.py:",
        "- added the line `import os`",
        "- in `path()`, the line `return 'tasks.json'` became "
        "`return os.environ.get('TASKS', 'tasks.json')`",
        "- in `load()`, the line `return json.loads(open(path()).read())` became "
        "`with open(path()) as f:` / `return json.load(f)`",
        "notes/new.md: a new file of 2 lines",
        "old.txt: deleted (1 lines)",
    ]


def test_removed_lines_and_a_class_are_named(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", BEFORE)
    new = BEFORE["app/store.py"].replace("class Store:\n", "class Store:\n    cache = None\n")
    new = new.replace("import json\n\n\n", "\n\n")
    diff = _commit(repo, {"app/store.py": new})
    told = describe_diff(diff, lambda p: (repo / p).read_text())
    assert told is not None
    assert "- removed the line `import json`" in told
    assert "- in `class Store`, added the line `cache = None`" in told


def test_a_binary_file_and_a_long_diff_are_said_briefly(tmp_path: Path) -> None:
    before = "".join(f"line {i}\n" for i in range(200))
    repo = make_repo(tmp_path / "repo", {**BEFORE, "README.md": before})
    # every tenth line changed: twenty changes, far apart
    after = "".join(f"line {i}{' changed' if i % 10 == 0 else ''}\n" for i in range(200))
    diff = _commit(repo, {"README.md": after}, binary=b"\x89PNG\x00\x01")
    told = describe_diff(diff, lambda p: None, limit=300)
    assert told is not None
    assert told.startswith("README.md:\n- the line `line 0` became `line 0 changed`")
    assert len(told) < 300 + 40 and told.endswith("more changes")
    whole = describe_diff(diff, lambda p: None)
    assert whole is not None and "logo.png: a binary file changed" in whole


def test_text_that_is_no_diff_is_none() -> None:
    assert describe_diff("not a diff at all\n", lambda p: None) is None
    assert describe_diff("", lambda p: None) is None
