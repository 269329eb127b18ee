"""The tables the analysis reads: how commands take their arguments, and which are special.

Rules (what is allowed, asked or denied) live in `default_rules.toml`; these tables describe
how programs behave, so the analysis can find what a command really runs, reads and writes:
which programs run another command (`sudo`, `env`, `timeout`), which options take a value,
which options name a file written or a command run, which environment variables change
what runs. Names are written as space-separated strings to keep the tables readable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def names(text: str) -> frozenset[str]:
    """A set of names written as one space-separated string."""
    return frozenset(text.split())


@dataclass(frozen=True)
class Wrapper:
    """A program that runs another: its options, then N leading operands, then the command.

    `chdir` options move the directory the command runs in (`env -C /`); `assignments`
    means `NAME=value` words before the command set its environment (`env X=1 cmd`).
    """

    value_options: frozenset[str] = frozenset()
    operands: int = 0
    assignments: bool = False
    chdir: frozenset[str] = frozenset()


def wrapper(
    options: str = "", operands: int = 0, assignments: bool = False, chdir: str = ""
) -> Wrapper:
    return Wrapper(names(options), operands, assignments, names(chdir))


WRAPPERS: dict[str, Wrapper] = {
    "sudo": wrapper(
        "-u -g -C -D -h -p -r -t -U -T --user --group --chdir --host --prompt --role --type "
        "--other-user --close-from --command-timeout",
        chdir="-D --chdir",
    ),
    "doas": wrapper("-u -C"),
    "env": wrapper(
        "-u --unset -C --chdir -P --split-string -S", assignments=True, chdir="-C --chdir"
    ),
    "runuser": wrapper(
        "-u -g -G -s -w --user --group --supp-group --shell --whitelist-environment"
    ),
    "pkexec": wrapper("--user"),
    "setpriv": wrapper("--reuid --regid --groups --inh-caps --ambient-caps --bounding-set"),
    "gosu": wrapper(operands=1),
    "su-exec": wrapper(operands=1),
    "chroot": wrapper("--userspec --groups", operands=1),
    "systemd-run": wrapper(
        "-u --unit -p --property --slice -E --setenv -M --machine --uid --gid -d --working-directory"
    ),
    "toybox": wrapper(),
    "coproc": wrapper(),
    "fakeroot": wrapper("-l --lib --faked -s -i"),
    "eatmydata": wrapper(),
    "nocache": wrapper(),
    "tini": wrapper("-s -p -e"),
    "dumb-init": wrapper(),
    "setarch": wrapper(operands=1),
    "linux32": wrapper(),
    "linux64": wrapper(),
    "prlimit": wrapper("-p --pid"),
    "numactl": wrapper(
        "-C --physcpubind -m --membind -N --cpunodebind -i --interleave -p --preferred"
    ),
    "ssh-agent": wrapper("-a -E -P -t"),
    "dbus-run-session": wrapper("--config-file --dbus-daemon"),
    "unshare": wrapper(
        "--propagation --setgroups --map-user --map-group -S -G -R -w --root --wd",
        chdir="-w --wd",
    ),
    "nsenter": wrapper("-t --target -S -G -r -w --root --wd --setuid --setgid", chdir="-w --wd"),
    "nice": wrapper("-n --adjustment"),
    "nohup": wrapper(),
    "timeout": wrapper("-s --signal -k --kill-after", operands=1),
    "gtimeout": wrapper("-s --signal -k --kill-after", operands=1),
    "time": wrapper("-f --format -o --output"),
    "command": wrapper(),
    "exec": wrapper("-a"),
    "builtin": wrapper(),
    "stdbuf": wrapper("-i -o -e --input --output --error"),
    "ionice": wrapper("-c -n -p -P -u --class --classdata"),
    "chrt": wrapper(operands=1),
    "taskset": wrapper(operands=1),
    "setsid": wrapper(),
    "unbuffer": wrapper(),
    "caffeinate": wrapper("-t -w"),
    "flock": wrapper("-w -E --timeout --conflict-exit-code", operands=1),
    "strace": wrapper("-o -e -p -s -E -u -P -a -b -I -O -S -X"),
    "ltrace": wrapper("-o -e -p -s -E -u -a -n"),
    "busybox": wrapper(),
    "catchsegv": wrapper(),
    "valgrind": wrapper(),
    "faketime": wrapper(operands=1),
    "proxychains": wrapper("-f"),
    "proxychains4": wrapper("-f"),
    "torsocks": wrapper(),
    "firejail": wrapper(),
    "dbus-launch": wrapper(),
    "xvfb-run": wrapper("-a -n -s -e -f -p -w --server-args --server-num --error-file --auth-file"),
}

# `uv run X`, `poetry run X`...: the named subcommand runs the rest as a command.
RUNNERS: dict[str, tuple[str, frozenset[str]]] = {
    "uv": (
        "run",
        names(
            "--with --with-requirements --with-editable --python -p --package --extra --group --env-file --directory --project --index --index-url --extra-index-url --isolated --script --module -m"
        ),
    ),
    "poetry": ("run", names("-C --directory -P --project")),
    "pipenv": ("run", frozenset()),
    "pdm": ("run", names("-p --project")),
    "hatch": ("run", names("-e --env")),
    "rye": ("run", frozenset()),
    "pixi": ("run", names("-e --environment --manifest-path")),
    "bundle": ("exec", names("--gemfile")),
    "bundler": ("exec", names("--gemfile")),
    "conda": ("run", names("-n --name -p --prefix --cwd")),
    "mamba": ("run", names("-n --name -p --prefix --cwd")),
    "micromamba": ("run", names("-n --name -p --prefix --cwd")),
    "npx": ("", names("-p --package -c --call")),
    "pnpx": ("", names("-p --package")),
    "bunx": ("", names("-p --package")),
    "uvx": ("", names("--with --from --python -p --index --index-url")),
    "npm": ("exec", names("-p --package -c --call -w --workspace")),
    "pipx": ("run", names("--spec --python --pip-args")),
}


# Options taking a value *before* the subcommand (`git -C dir status`, `make -C dir test`).
GLOBAL_OPTIONS: dict[str, frozenset[str]] = {
    "git": names("-C -c --git-dir --work-tree --namespace --super-prefix --config-env --exec-path"),
    "make": names(
        "-C -f --file --makefile --directory -I --include-dir -o -W --old-file --what-if -l"
    ),
    "npm": names("--prefix -w --workspace -C"),
    "pnpm": names("-C --dir --filter -F -w --workspace"),
    "yarn": names("--cwd"),
    "cargo": names("--manifest-path --config -Z -C --color"),
    "docker": names("-H --host -c --context --config -l --log-level"),
    "uv": names("--directory --project --python -p --cache-dir --config-file"),
    "poetry": names("-C --directory -P --project"),
    "go": names("-C"),
    "conda": names("-n --name -p --prefix"),
    "kubectl": names("-n --namespace --context --kubeconfig"),
}
GLOBAL_OPTIONS["gmake"] = GLOBAL_OPTIONS["make"]


VALUE_OPTIONS: dict[str, frozenset[str]] = {
    name: frozenset(options.split())
    for name, options in {
        "cut": "-d -f -c -b --delimiter --fields --characters --bytes",
        "head": "-n -c --lines --bytes",
        "tail": "-n -c --lines --bytes -s --sleep-interval --pid",
        "grep": "-e -f -A -B -C -m -d -D --regexp --file --after-context --before-context --context --max-count --include --exclude --exclude-dir --label --color --colour",
        "egrep": "-e -f -A -B -C -m",
        "fgrep": "-e -f -A -B -C -m",
        "rg": "-e -f -g -t -T -A -B -C -m -j -M -E --regexp --file --glob --iglob --type --type-not --max-count --threads --max-columns --encoding --sort --sortr --max-depth --maxdepth --color --colors --type-add --pre --pre-glob --replace -r --field-match-separator --path-separator",
        "ag": "-A -B -C -G -m --ignore --file-search-regex --depth",
        "sort": "-k -t -S -T -o --key --field-separator --buffer-size --temporary-directory --output --parallel",
        "uniq": "-f -s -w --skip-fields --skip-chars --check-chars",
        "awk": "-F -v -f --field-separator --assign --file",
        "gawk": "-F -v -f --field-separator --assign --file",
        "mawk": "-F -v -f",
        "nawk": "-F -v -f",
        "sed": "-e -f -l --expression --file --line-length",
        "jq": "--arg --argjson --slurpfile --rawfile --indent -L --from-file -f",
        "yq": "--arg -o -p --output-format --input-format -I --indent",
        "ls": "-I -w -T --ignore --hide --width --tabsize --color --format --sort --time --time-style --block-size --quoting-style --indicator-style",
        "du": "-d -B -t --max-depth --block-size --threshold --exclude --time-style",
        "tree": "-L -I -P -H -T -o --filelimit --charset --sort",
        "diff": "-U -C -L -x -X -F -I --label --exclude --exclude-from --ignore-matching-lines --unified --context --width -W --to-file --from-file",
        "wc": "--files0-from",
        "xxd": "-s -l -c -g -o -n --seek --len --cols --groupsize",
        "od": "-j -N -t -w -A --skip-bytes --read-bytes --format --width --address-radix",
        "hexdump": "-s -n -e -f",
        "fd": "-e -E -t -d -x -X -j -S -c --extension --exclude --type --max-depth --min-depth --exec --exec-batch --threads --size --changed-within --changed-before --owner --color --base-directory",
        "stat": "-c -f --format --printf",
        "date": "-d -r -f --date --reference --file",
        "column": "-s -o -c -t -N -R -W -H -O --separator --output-separator",
        "tr": "",
        "paste": "-d --delimiters",
        "join": "-t -j -1 -2 -o -e",
        "split": "-l -b -n -a -C -t",
        "fold": "-w --width",
        "nl": "-b -d -f -h -i -l -n -s -v -w",
        "base64": "-w --wrap",
        "git": "-C -c --git-dir --work-tree -n -m -F -S -G -L -U --author --committer --grep --since --until --after --before --format --pretty --date --output -O",
    }.items()
}

# grep PATTERN [FILE...]: the first operand is a program or pattern, not a path.
PATTERN_FIRST = {
    "grep": "-e -f --regexp --file",
    "egrep": "-e -f --regexp --file",
    "fgrep": "-e -f --regexp --file",
    "rg": "-e -f --regexp --file --files --type-list",
    "ag": "",
    "ack": "",
    "sed": "-e -f --expression --file",
    "awk": "-f --file",
    "gawk": "-f --file",
    "mawk": "-f",
    "nawk": "-f",
    "jq": "-f --from-file -n --null-input",
    "yq": "",
}
# Their arguments are text, not files to read; they are exempt from the path checks.
NO_PATH_ARGS = names(
    "echo printf test [ true false : which whereis type basename dirname realpath readlink "
    "command hash sleep seq date expr let export declare typeset local readonly unset set "
    "shopt alias unalias read mapfile readarray wait exit return shift getopts cd pushd popd "
    "dirs umask ulimit jobs kill pgrep ps uname whoami id groups hostname pwd env printenv "
    "history help trap break continue complete compgen caller times fg bg disown numfmt "
    "getconf logname users tty arch nproc locale uptime free cal"
)
# Their operands are mostly names (revisions, targets, packages); only path-like ones are read.
NAME_OPERANDS = names("git npm yarn pnpm cargo go make ruff uv pip poetry")
# Commands whose handler checks their own paths; the generic read check skips them.
OWN_PATHS = names(
    "rm rmdir unlink shred srm wipe trash trash-put rimraf cp mv install ln link rsync scp tee touch "
    "mkdir mktemp truncate dd chmod chown chgrp chattr setfacl chflags find xargs tar sed "
    "curl wget git source . ssh sftp"
)
SHELLS = names("sh bash zsh dash ksh mksh ash yash tcsh csh fish rbash")
# name -> (language, short flags that take inline code, long options that take inline code)
INTERPRETERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "python": ("python", "c", ()),
    "perl": ("perl", "eE", ()),
    "ruby": ("ruby", "e", ()),
    "node": ("JavaScript", "ep", ("--eval", "--print")),
    "deno": ("JavaScript", "", ()),
    "bun": ("JavaScript", "e", ("--eval", "--print")),
    "php": ("PHP", "rR", ()),
    "lua": ("Lua", "e", ()),
    "luajit": ("Lua", "e", ()),
    "Rscript": ("R", "e", ()),
    "R": ("R", "e", ()),
    "osascript": ("AppleScript", "e", ()),
    "tclsh": ("Tcl", "", ()),
    "julia": ("Julia", "e", ("--eval",)),
    "awk-script": ("awk", "", ()),
}

DECODERS = names(
    "base64 base32 basenc xxd uudecode openssl gpg gunzip zcat gzcat bzcat xzcat zstdcat unxz "
    "bunzip2 gzip bzip2 xz zstd unzstd rev tr"
)
# Environment variables that change which programs, libraries or settings run.
RISKY_ENV = names(
    "PATH BASH_ENV ENV PROMPT_COMMAND SHELLOPTS BASHOPTS PS4 CDPATH HOME XDG_CONFIG_HOME "
    "PAGER EDITOR VISUAL SSH_ASKPASS SUDO_ASKPASS MANPAGER BROWSER LESSOPEN LESSCLOSE HISTFILE "
    "PYTHONSTARTUP PYTHONHOME PYTEST_ADDOPTS PYTEST_PLUGINS PERL5OPT PERL5DB RUBYOPT "
    "NODE_OPTIONS LUA_INIT JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS MAVEN_OPTS GRADLE_OPTS "
    "DOTNET_STARTUP_HOOKS MAKEFLAGS MAKEFILES GOFLAGS RUSTFLAGS RUSTC RUSTC_WRAPPER "
    "RUSTC_WORKSPACE_WRAPPER RUSTDOC CC CXX CPP LD AR FC PIP_INDEX_URL PIP_EXTRA_INDEX_URL "
    "BASH_CMDS BASH_ALIASES BASH_LOADABLES_PATH"
)
# Of those, the ones whose value is a command line (judged like one); BASH_ALIASES holds aliases.
COMMAND_ENV = names(
    "PAGER EDITOR VISUAL MANPAGER BROWSER PROMPT_COMMAND SSH_ASKPASS SUDO_ASKPASS BASH_ALIASES "
    "GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_ASKPASS"
)
# Whole families: git's settings, npm's and cargo's configuration, the dynamic loader's.
RISKY_ENV_PREFIXES = ("GIT_", "NPM_CONFIG_", "CARGO_", "LD_", "DYLD_")
# Search paths for code: a program loads modules from them, so they are judged by where
# they point (`PYTHONPATH=src` is the project's own code; `PYTHONPATH=/tmp/x` is not).
CODE_PATH_ENV = names("PYTHONPATH NODE_PATH PERL5LIB PERLLIB RUBYLIB CLASSPATH")
BIN_DIRS = names(
    "/bin /usr/bin /sbin /usr/sbin /usr/local/bin /usr/local/sbin /opt/homebrew/bin /opt/local/bin "
    "/snap/bin /usr/libexec /run/current-system/sw/bin"
)
# Tool directories inside a repository whose programs are the project's own tools.
REPO_BIN_DIRS = re.compile(
    r"(^|/)(\.?venv|env|\.tox/[^/]+|node_modules/\.bin|\.nox/[^/]+)(/bin|/Scripts)?$"
)


# Options whose value is a file the tool writes (`sort -o FILE`, `tree -o FILE`).
WRITE_OPTIONS: dict[str, frozenset[str]] = {
    "go": names(
        "-o -coverprofile -cpuprofile -memprofile -blockprofile -mutexprofile -trace -outputdir"
    ),
    "cargo": names("--target-dir --artifact-dir --out-dir"),
    "coverage": names("-o -d --directory --data-file"),
    "flake8": names("--output-file"),
    "pylint": names("--output"),
    "tsc": names("--outDir --outFile --declarationDir --tsBuildInfoFile"),
    "tox": names("--result-json --workdir"),
    "nox": names("--report --envdir"),
    "mvn": names("-l --log-file"),
    "dotnet": names("-o --output --results-directory --diag"),
    "deno": names("--coverage"),
    "sort": names("-o --output"),
    "tree": names("-o"),
    "iconv": names("-o --output"),
    "base64": names("-o --output"),
    "xmllint": names("--output -o"),
    "cloc": names("--out --report-file"),
    "ruff": names("-o --output-file --cache-dir"),
    "eslint": names("-o --output-file --cache-location"),
    "jest": names("--outputFile --coverageDirectory --cacheDirectory"),
    "vitest": names("--outputFile"),
    "mypy": names(
        "--junit-xml --cache-dir --html-report --txt-report --xml-report --linecount-report "
        "--linecoverage-report --lineprecision-report --any-exprs-report --cobertura-xml-report"
    ),
    "pytest": names("--junitxml --junit-xml --resultlog --report-log --log-file --cov-report"),
    "strace": names("-o"),
    "valgrind": names("--log-file --xml-file"),
    "ltrace": names("-o"),
    "time": names("-o --output"),
}
# Options whose value is a directory the tool empties first (pytest deletes its --basetemp).
DELETE_OPTIONS: dict[str, frozenset[str]] = {"pytest": names("--basetemp")}
# The operand a tool writes its output to (`uniq IN OUT`, `xxd -r IN OUT`).
OUTPUT_OPERAND: dict[str, int] = {"uniq": 1, "xxd": 1, "json.tool": 1}

# Options whose value is a command the tool runs (checked like `sh -c`).
COMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "runuser": names("-c --command"),
    "sg": names("-c"),
    "script": names("-c --command"),
    "nix-shell": names("--run --command"),
    "zip": names("-TT --unzip-command"),
    "sort": names("--compress-program"),
    "ag": names("--pager"),
    "ssh": names("-o"),
    "scp": names("-o -S"),
    "sftp": names("-o"),
    "rsync": names("-e --rsh --rsync-path"),
    "tar": names(
        "--rsh-command --to-command --use-compress-program -I --info-script --new-volume-script -F --checkpoint-action"
    ),
    "rg": names("--pre --hostname-bin"),
    "flock": names("-c --command"),
    "compgen": names("-C"),
    "complete": names("-C"),
}

DOWNLOAD_OPTIONS = {
    "curl": names(
        "-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --stderr --libcurl -K --config "
        "-T --upload-file -d --data --data-binary --data-urlencode --data-raw -F --form -H --header -X "
        "--request -u --user -A --user-agent -e --referer -x --proxy -w --write-out --output-dir -m "
        "--max-time --connect-timeout --retry -r --range --cacert --cert --key -b --cookie -E -Y -y -z --url"
    ),
    "wget": names(
        "-O --output-document -P --directory-prefix -o --output-file -a --append-output --post-file "
        "--body-file --post-data -i --input-file -T --timeout -t --tries -U --user-agent --header --user "
        "--password -e --execute -w --wait -Q --quota -l --level -A -R --accept --reject -D --domains"
    ),
}


# Options that make a test runner or build tool load code or run a program named on the
# command line. "program": a command line it runs (judged like one); "python": Python code;
# "make": make syntax whose recipes run; "module": a module it loads (asked unless it is in
# the repository or named as a package); "code": a configuration or file of code (asked).
TOOL_HOOKS: dict[str, dict[str, str]] = {
    "go": {
        "-exec": "program",
        "-vettool": "program",
        "-toolexec": "program",
        "-overlay": "code",
        "-modfile": "code",
    },
    "gradle": {"-I": "code", "--init-script": "code"},
    "phpunit": {"--bootstrap": "code", "-c": "code", "--configuration": "code"},
    "rspec": {"-r": "module", "--require": "module"},
    "mocha": {"-r": "module", "--require": "module", "--file": "module", "--config": "code"},
    "bun": {"--preload": "module", "-r": "module", "--require": "module"},
    "cargo": {"--config": "code"},
    "pylint": {"--init-hook": "python"},
    "pytest": {"-o": "code", "--override-ini": "code"},
    "mypy": {"--python-executable": "program"},
    "pyright": {"--pythonpath": "program"},
    "basedpyright": {"--pythonpath": "program"},
    "eslint": {"--rulesdir": "code", "--resolve-plugins-relative-to": "code"},
    "npm": {"--script-shell": "program", "--node-options": "code"},
    "pnpm": {"--script-shell": "program", "--node-options": "code"},
    "yarn": {"--script-shell": "program"},
    "node": {
        "-r": "module",
        "--require": "module",
        "--import": "module",
        "--loader": "module",
        "--experimental-loader": "module",
    },
    "jest": {
        option: "code"
        for option in [
            "-c",
            "--config",
            "--setupFiles",
            "--setupFilesAfterEnv",
            "--globalSetup",
            "--globalTeardown",
            "--testRunner",
            "--transform",
            "--resolver",
            "--testEnvironment",
            "--reporters",
            "--snapshotResolver",
            "--runner",
            "--testSequencer",
            "--watchPlugins",
            "--preset",
            "--roots",
            "--rootDir",
        ]
    },
    "vitest": {
        option: "code"
        for option in [
            "-c",
            "--config",
            "--globalSetup",
            "--setupFiles",
            "--workspace",
            "--root",
            "--dir",
        ]
    },
    "make": {"--eval": "make", "-E": "make"},
}
# Tools whose options are written `-name value` or `-name=value` (one dash, long names).
SINGLE_DASH_LONG = names("go")
# Options that make a tool work in another directory (it builds or tests the code there).
CHDIR_OPTIONS: dict[str, frozenset[str]] = {
    "go": names("-C"),
    "make": names("-C --directory"),
    "npm": names("--prefix -C"),
    "pnpm": names("-C --dir"),
    "yarn": names("--cwd"),
    "cargo": names("-C --manifest-path"),
    "uv": names("--directory --project"),
    "poetry": names("-C --directory -P --project"),
    "tox": names("-c --conf --workdir"),
    "nox": names("-f --noxfile"),
    "pytest": names("--rootdir -c --config-file --confcutdir"),
    "gradle": names("-p --project-dir -b --build-file -c --settings-file"),
    "tsc": names("-p --project"),
}
