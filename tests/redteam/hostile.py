"""A hostile repository: every file a repository can ship (or a clone can carry in `.git/`) that
names a program to run or a setting to loosen, each wired to leave its own marker.

`HostileRepo.build(root, spot)` makes a real git repository (the sample project, committed,
with one file modified so that status and diff have work to do) and then arms it:

- `.git/config`: `core.fsmonitor`, `filter.<x>.clean/smudge`, `diff.<x>.textconv`,
  `diff.<x>.command`, `diff.external`, `core.pager`, `gpg.program` with `log.showSignature`
  (and a signed commit at HEAD, so `git log` has a signature to check);
- `.gitattributes` sending every Python file through that filter and diff driver;
- `.env` setting `SANDBOX_CHECK_COMMAND` and `POLICY_ALLOW_REPO_LOOSENING=true`;
- `.smol-instruments/policy.toml` allowing `make setup`, a target of the repository's Makefile;
- `py_compile.py` at the top level (what `python -m py_compile` finds first in the cwd);
- `conftest.py` (what an allowed `pytest` imports);
- `.vscode/settings.json` pointing `smolInstruments.sandboxCheckCommand` and `pythonPath` at
  the marker (what an editor that takes workspace settings would use).

Every mechanism writes `ran-<mechanism>` in the spot's directory, and those whose output can
come back also print `RAN:<mechanism>` (built at run time, so the configuration's own text never
matches): containment stops the marker, not the print, so a mechanism that still runs inside
containment is caught too. `ran(output)` lists both.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from conftest import git, make_repo

from .harness import Spot

#: Mechanisms in .git/config run through the shell (their value is a command line).
SHELL_CONFIG = {
    "core.fsmonitor": "touch {d}/ran-core.fsmonitor; exit 1",
    "filter.hostile.clean": "touch {d}/ran-filter.clean; cat",
    "filter.hostile.smudge": "touch {d}/ran-filter.smudge; cat",
    "diff.hostile.textconv": "touch {d}/ran-diff.textconv; printf 'RAN:%s\\n' diff.textconv; cat",
    "diff.hostile.command": "touch {d}/ran-diff.command; true",
    "diff.external": "touch {d}/ran-diff.external; true",
    "core.pager": "touch {d}/ran-core.pager; cat",
}

FAKE_GPG = "#!/bin/sh\ntouch {d}/ran-gpg.program\nexit 1\n"

SIGNATURE = """-----BEGIN PGP SIGNATURE-----

 iQEzBAABCAAdFiEEs4bB0hVpKyFQ2Aq8KTVi8EO7z1YFAmAAAAAACgkQKTVi8EO7z1Y
 =abcd
 -----END PGP SIGNATURE-----"""

PY_COMPILE = (
    "import pathlib\n"
    "print('RAN:' + 'py_compile.py')\n"
    "pathlib.Path({marker!r}).write_text('the repository\\'s py_compile.py ran')\n"
)
CONFTEST = (
    "import pathlib\n"
    "pathlib.Path({marker!r}).write_text('the repository\\'s conftest.py ran')\n"
    "print(pathlib.Path({key!r}).read_text())\n"
)
MAKEFILE = (
    "setup:\n\tprintf 'RAN:%s\\n' repo-policy-loosened\n\ttouch {d}/ran-repo-policy-loosened\n"
)
POLICY_TOML = """\
[[rule]]
id = "allow.setup"
verdict = "allow"
command = "make"
subcommand = "setup"
reason = "runs the project's harmless setup"
"""


@dataclass(frozen=True)
class HostileRepo:
    root: Path
    spot: Spot

    @classmethod
    def build(cls, root: Path, spot: Spot) -> HostileRepo:
        make_repo(root)
        d = spot.dir
        files = {
            ".gitattributes": "*.py filter=hostile diff=hostile\n",
            "py_compile.py": PY_COMPILE.format(marker=str(d / "ran-py_compile.py")),
            "conftest.py": CONFTEST.format(marker=str(d / "ran-conftest.py"), key=str(spot.key)),
            "Makefile": MAKEFILE.format(d=d),
            ".smol-instruments/policy.toml": POLICY_TOML,
            ".hostile/gpg": FAKE_GPG.format(d=d),
            ".vscode/settings.json": json.dumps(
                {
                    "smolInstruments.sandboxCheckCommand": f"touch {d}/ran-vscode-settings",
                    "smolInstruments.pythonPath": f"{d}/ran-vscode-pythonPath",
                },
                indent=2,
            ),
        }
        calc = root / "app" / "calc.py"  # the signed commit touches it: `git log -- path` shows it
        files["app/calc.py"] = calc.read_text() + "# reviewed\n"
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (root / ".hostile" / "gpg").chmod(0o755)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "add project files")
        _sign_head(root)
        # The clone's own configuration, then the environment file (neither is committed).
        for key, value in SHELL_CONFIG.items():
            git(root, "config", key, value.format(d=d))
        git(root, "config", "gpg.program", str(root / ".hostile" / "gpg"))
        git(root, "config", "log.showSignature", "true")
        (root / ".env").write_text(
            "SANDBOX_CHECK_COMMAND=printf 'RAN:%s\\n' sandbox-check-command; "
            f"touch {d}/ran-sandbox-check-command\n"
            "POLICY_ALLOW_REPO_LOOSENING=true\n"
        )
        # A tracked file whose size is unchanged but whose time is not: git must hash its
        # content to know whether it changed (the clean filter runs), whatever the clock says.
        main = root / "app" / "main.py"
        stat = main.stat()
        os.utime(main, (stat.st_atime + 60, stat.st_mtime + 60))
        # A modified tracked file: diff has a change to show (textconv, diff drivers).
        calc.write_text(calc.read_text() + "\n# work in progress\n")
        return cls(root, spot)

    def ran(self, output: str = "") -> list[str]:
        """The mechanisms that ran: their markers exist or their print is in `output`."""
        found = {p.name.removeprefix("ran-") for p in self.spot.dir.glob("ran-*")}
        found |= set(re.findall(r"RAN:([\w.-]+)", output))
        return sorted(found)


def _sign_head(root: Path) -> None:
    """Give HEAD a `gpgsig` header (not a valid signature: git only has to try to check it)."""
    raw = git(root, "cat-file", "commit", "HEAD")
    header, _, message = raw.partition("\n\n")
    lines = header.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("committer "))
    signed = "\n".join([*lines[: at + 1], "gpgsig " + SIGNATURE, *lines[at + 1 :]])
    sha = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=root,
        input=f"{signed}\n\n{message}",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(root, "update-ref", "HEAD", sha)
