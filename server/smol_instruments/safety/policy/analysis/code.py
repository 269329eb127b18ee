"""Inline code in other languages (`python -c`, `perl -e`, `node -e`): what can be seen in it.

Such code cannot be parsed here, so it always needs approval; these patterns find what makes
it deny-worthy anyway: deleting `/` or `~`, running a shell command (which is then judged
like any other), reading secrets, writing system files, decoding hidden code and running it,
downloading and running code, a reverse shell, forking in a loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..places import DEVICE, ROOT, SECRET, SYSTEM, Effect, Paths, Place

_STRING_LITERAL = re.compile(r"""(['"`])((?:\\.|(?!\1).)*)\1""", re.S)
_LIST_LITERAL = re.compile(r"""\[\s*(?:(?:'[^']*'|"[^"]*")\s*,\s*)+(?:'[^']*'|"[^"]*")\s*,?\s*\]""")
_EXEC_CODE = re.compile(
    r"os\.system|os\.popen|os\.exec|subprocess|Popen|check_output|check_call|\bsystem\s*\(|\bexec\s*\(|"
    r"\bspawn|child_process|execSync|execFile|\bqx|%x|IO\.popen|Kernel\.|`|shell_exec|passthru|proc_open|"
    r"Runtime\.getRuntime|\bpty\.|\bsh\(|do shell script"
)
_TREE_DELETE = re.compile(
    r"\b(?:rmtree|rm_rf|rm_r|remove_tree|rmSync|rmdirSync|rimraf(?:\.sync)?|removedirs|delete_tree|remove_dir_all|FileUtils\.rm_rf|rm\s*-rf)\s*\(?\s*(?P<arg>[^)\n;]*)"
)
_FILE_DELETE = re.compile(
    r"\b(?:os\.remove|os\.unlink|unlinkSync|unlink|File\.delete|FileUtils\.rm|os\.rmdir)\s*\(\s*(?P<arg>[^)\n;]*)"
)
_HOME_CODE = re.compile(
    r"expanduser|Path\.home|environ\[.HOME|getenv\(.HOME|ENV\[.HOME|homedir\(|\$HOME|\bHOME\b"
)
_WRITE_CODE = re.compile(
    r"""open\([^)]*,\s*['"][wax+]|write_text|write_bytes|writeFile|File\.write|>>?\s*['"]/|truncate"""
)
# Patterns in inline code that make it deny-worthy, with the rule and the reason's fields.
_CODE_DENY: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(
            r"\.ssh\b|\.gnupg\b|\.aws[/\\]credentials|\.netrc\b|\.git-credentials|/etc/g?shadow\b|/etc/sudoers|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.kube/config|\.docker/config\.json|\.password-store"
        ),
        "deny.read-secret",
        "",
    ),
    (
        re.compile(
            r"\bfork\b[^;\n]{0,20}\b(?:while|until|for)\b|\b(?:while|loop|for)\b[^\n]{0,40}(?:\n[^\n]{0,80}){0,2}?\bfork\b|os\.fork\(\)[^\n]{0,40}os\.fork\(\)"
        ),
        "deny.fork-bomb",
        "runs {language} code that forks processes in a loop",
    ),
    (
        re.compile(
            r"(?=.*\b(?:exec|eval|system|popen|Function|spawn|execSync|child_process)\b)(?=.*(?:b64decode|base64|decodebytes|fromhex|unhexlify|\batob\b|Buffer\.from\([^)]*['\"](?:base64|hex)|unpack\(['\"][mu]|zlib\.decompress|marshal\.loads|codecs\.decode|rot13|\\x[0-9a-fA-F]{2}(?:\\x[0-9a-fA-F]{2}){7}))",
            re.S,
        ),
        "deny.obfuscated-code",
        "",
    ),
    (
        re.compile(
            r"(?=.*\b(?:exec|eval|system|popen|spawn|execSync|Function)\s*\()(?=.*(?:urlopen|urllib|requests\.(?:get|post)|http\.client|httpx|\bfetch\(|Net::HTTP|open-uri|LWP::|HTTP::Tiny|\bcurl\b|\bwget\b))",
            re.S,
        ),
        "deny.download-exec",
        "{language} code that it downloads",
    ),
    (
        re.compile(
            r"(?=.*\bsocket\b)(?=.*(?:subprocess|pty\.spawn|os\.dup2|/bin/(?:ba)?sh|\bexec\b|cmd\.exe))",
            re.S,
        ),
        "deny.reverse-shell",
        "a shell, through {language} code,",
    ),
)


@dataclass
class CodeFindings:
    """What inline code does: rules to emit, paths it touches, shell commands it runs."""

    emits: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    touches: list[tuple[Effect, Place, str]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)


def inline_code_findings(code: str, language: str, paths: Paths, cwd: str | None) -> CodeFindings:
    """What the policy can see in `code`, written in `language`."""
    found = CodeFindings()
    runs = f"runs {language} code that"
    for pattern, rule, what in _CODE_DENY:
        match = pattern.search(code)
        if match is None:
            continue
        if rule == "deny.read-secret":
            found.emits.append((rule, {"verb": f"{runs} uses", "path": match.group(0)}))
        elif rule == "deny.obfuscated-code":
            found.emits.append((rule, {"language": language}))
        else:
            found.emits.append((rule, {"what": what.format(language=language)}))
    strings = [unescape(m.group(2)) for m in _STRING_LITERAL.finditer(code)][:40]

    def place(text: str) -> Place:
        return paths.classify_text(expand_home(text, paths.home), cwd)

    for match in _TREE_DELETE.finditer(code):
        argument = match.group("arg")
        if _HOME_CODE.search(argument):
            found.emits.append(
                ("deny.recursive-delete-home", {"verb": f"{runs} recursively deletes", "path": "~"})
            )
        literal = _STRING_LITERAL.search(argument)
        if literal is not None:
            found.touches.append((Effect.RECURSIVE_DELETE, place(unescape(literal.group(2))), ""))
    for match in _FILE_DELETE.finditer(code):
        literal = _STRING_LITERAL.search(match.group("arg"))
        if literal is not None:
            found.touches.append((Effect.DELETE, place(unescape(literal.group(2))), ""))
    for text in strings:
        if not text.startswith(("/", "~")):
            continue
        where = place(text)
        if where.kind == SECRET:
            found.touches.append((Effect.READ, where, f"{runs} uses"))
        elif where.kind in (DEVICE, SYSTEM, ROOT) and _WRITE_CODE.search(code):
            found.touches.append((Effect.WRITE, where, f"{runs} writes"))
    if _EXEC_CODE.search(code):
        commands = strings + [
            " ".join(unescape(s[1:-1]) for s in re.findall(r"'[^']*'|\"[^\"]*\"", m.group(0)))
            for m in _LIST_LITERAL.finditer(code)
        ]
        found.commands = [text for text in commands[:20] if text.strip()]
    return found


def expand_home(text: str, home: str) -> str:
    return home + text[1:] if text == "~" or text.startswith("~/") else text


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)
