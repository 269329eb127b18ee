"""The rules: one TOML schema, validated by pydantic, for the defaults and a repository's file.

`default_rules.toml` (shipped with the package) and a repository's
`.smol-instruments/policy.toml` are read by the same loader into the same `Rule` model:

- a rule with `command` is a table row, matched against every program the analysis finds
  (by name, subcommand, arguments and flags);
- a built-in rule without `command` is one the analysis applies where it finds the effect
  (a write outside the repository, a download run as code); its `reason` is a template
  whose `{fields}` the analysis fills in. A repository's rules must each name a command.

A malformed file is a PolicyConfigError whose message is one line naming the file, the rule
number, the key and what it accepts.
"""

from __future__ import annotations

import fnmatch
import string
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)

from ...base.beneath import Beneath, Refused
from .arguments import canonical, has_arg, has_flag, operands
from .verdicts import RANK, Finding, Verdict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

POLICY_FILE = Path(".smol-instruments") / "policy.toml"
DEFAULT_RULES_FILE = "default_rules.toml"


class PolicyConfigError(ValueError):
    """A rules file that cannot be used; the message is one line."""


def _one_or_many(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _strip_all(value: Any) -> Any:
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return [v.strip() for v in value]
    return value


Text = Annotated[StrictStr, Field(min_length=1, pattern=r"\S")]
Texts = Annotated[tuple[Text, ...], BeforeValidator(_strip_all)]
OneOrMore = Annotated[tuple[Text, ...], BeforeValidator(_strip_all), BeforeValidator(_one_or_many)]


class Rule(BaseModel):
    """One `[[rule]]` row."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Text = Field(description='a string such as "deny.terraform-destroy"')
    verdict: Verdict = Field(description='"allow", "require_approval" or "deny"')
    command: OneOrMore | None = Field(
        None, description="a program name or a list of names (globs allowed)"
    )
    subcommand: OneOrMore = Field((), description="a string or a list of strings")
    args_any: Texts = Field((), description="a list of strings")
    args_all: Texts = Field((), description="a list of strings")
    args_none: Texts = Field((), description="a list of strings")
    flags_any: Texts = Field((), description="a list of strings")
    max_operands: StrictInt | None = Field(None, ge=0, description="a whole number of 0 or more")
    fallback: StrictBool = Field(
        False, description="true or false (true: applies only when no other rule matches)"
    )
    reason: Text | None = Field(None, description="a string")

    def matches(self, name: str, texts: list[str]) -> bool:
        """Whether this row covers the program `name` called with the arguments `texts`."""
        if not self.command or not any(_name_matches(p, name) for p in self.command):
            return False
        rest = operands(name, texts)
        if self.subcommand:
            for alternative in self.subcommand:
                words = alternative.split()
                if len(rest) >= len(words) and all(
                    fnmatch.fnmatchcase(op, w) for op, w in zip(rest, words, strict=False)
                ):
                    rest = rest[len(words) :]
                    break
            else:
                return False
        if self.args_any and not any(has_arg(texts, a) for a in self.args_any):
            return False
        if self.args_all and not all(has_arg(texts, a) for a in self.args_all):
            return False
        if self.args_none and any(has_arg(texts, a) for a in self.args_none):
            return False
        if self.flags_any and not any(has_flag(texts, f) for f in self.flags_any):
            return False
        return self.max_operands is None or len(rest) <= self.max_operands


class RuleFile(BaseModel):
    """A whole rules file: `version` (optional) and `[[rule]]` tables."""

    model_config = ConfigDict(extra="forbid")

    version: Annotated[StrictInt, Field(ge=1, le=1)] = Field(1, description="the number 1")
    rule: list[Rule] = Field([], description="[[rule]] tables")


def _name_matches(pattern: str, name: str) -> bool:
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return pattern == name


def load_rules(path: Path, text: str | None = None, *, repository: bool = True) -> tuple[Rule, ...]:
    """The rules of one file; PolicyConfigError (one line) when it is malformed.

    A repository's file must give every rule a command and a unique id; the built-in file
    may repeat an id over several rows and has rules the analysis applies by id.
    """
    try:
        raw = text if text is not None else path.read_text(encoding="utf-8")
        data = tomllib.loads(raw)
    except OSError as exc:
        raise PolicyConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise PolicyConfigError(f"{path}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyConfigError(
            f"{path}: is not valid TOML ({' '.join(str(exc).split())})"
        ) from None
    try:
        rules = RuleFile.model_validate(data).rule
    except ValidationError as exc:
        raise PolicyConfigError(f"{path}: {_explain(exc, data)}") from None
    seen: set[str] = set()
    for number, rule in enumerate(rules, start=1):
        where = f"{path}: [[rule]] #{number}"
        if repository and rule.command is None:
            raise PolicyConfigError(
                f"{where} key 'command' is missing; allowed: {_described('command')}"
            )
        if repository and rule.id in seen:
            raise PolicyConfigError(
                f"{where} key 'id': {rule.id!r} is used by an earlier rule; allowed: a unique id"
            )
        seen.add(rule.id)
    return tuple(_normalised(rule, repository) for rule in rules)


def _normalised(rule: Rule, repository: bool) -> Rule:
    """Program names as the analysis sees them (`/usr/bin/python3.12` is `python`)."""
    updates: dict[str, Any] = {"flags_any": tuple(f.lstrip("-") for f in rule.flags_any)}
    if rule.command is not None:
        updates["command"] = tuple(canonical(c.rsplit("/", 1)[-1]) for c in rule.command)
    if rule.reason is None:
        updates["reason"] = f"is covered by the repository's policy rule {rule.id}"
    return rule.model_copy(update=updates)


def _described(key: str) -> str:
    model = Rule if key in Rule.model_fields else RuleFile
    return model.model_fields[key].description or ""


def _explain(exc: ValidationError, data: dict[str, Any]) -> str:
    """The first validation error as `[[rule]] #N key 'k' is X; allowed: ...`."""
    error = exc.errors()[0]
    location = error["loc"]
    if location[:1] == ("rule",) and len(location) >= 3 and isinstance(location[1], int):
        number, key = location[1] + 1, str(location[2])
        where = f"[[rule]] #{number}"
        if error["type"] == "extra_forbidden":
            return f"{where} has unknown key '{key}'; allowed keys: {', '.join(Rule.model_fields)}"
        if error["type"] == "missing":
            return f"{where} key '{key}' is missing; allowed: {_described(key)}"
        return f"{where} key '{key}' is {error['input']!r}; allowed: {_described(key)}"
    key = str(location[0]) if location else "rule"
    if error["type"] == "extra_forbidden":
        allowed = ", ".join(f"'{k}' ({_described(k)})" for k in RuleFile.model_fields)
        return f"unknown top-level key '{key}'; allowed: {allowed}"
    return f"key '{key}' is {data.get(key)!r}; allowed: {_described(key)}"


@cache
def default_rules() -> tuple[Rule, ...]:
    """The built-in rules, read once from the package's `default_rules.toml`."""
    source = resources.files(__package__).joinpath(DEFAULT_RULES_FILE)
    return load_rules(Path(str(source)), source.read_text(encoding="utf-8"), repository=False)


@dataclass
class PolicyRules:
    """The rules one policy decides with: the built-in file plus a repository's additions."""

    defaults: tuple[Rule, ...] = field(default_factory=default_rules)
    repo: tuple[Rule, ...] = ()
    allow_repo_loosening: bool = False
    source: Path | None = None

    def __post_init__(self) -> None:
        self.table = tuple(r for r in self.defaults if r.command is not None)
        self.by_id = {r.id: r for r in self.defaults if r.command is None}
        self._defaults_index = _RowIndex(self.table)
        self._repo_index = _RowIndex(self.repo)

    @classmethod
    def load(cls, repo_root: Path, *, allow_repo_loosening: bool = False) -> PolicyRules:
        path = Path(repo_root) / POLICY_FILE
        try:  # the repository's file, read without following a link it may have planted
            with Beneath(repo_root) as tree:
                data = tree.read_bytes(POLICY_FILE.as_posix())
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return cls(allow_repo_loosening=allow_repo_loosening)
        except Refused as exc:
            raise PolicyConfigError(f"{path}: {exc.message}") from None
        except OSError as exc:
            raise PolicyConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise PolicyConfigError(f"{path}: is not UTF-8 text") from None
        repo = load_rules(path, text)
        return cls(repo=repo, allow_repo_loosening=allow_repo_loosening, source=path)

    def finding(self, rule_id: str, display: str | None, **fields: str) -> Finding:
        """The finding of a rule the analysis applies by id, its reason filled in."""
        rule = self.by_id[rule_id]
        reason = (rule.reason or "").format_map(fields)
        return Finding(rule.verdict, rule.id, f"`{display}` {reason}" if display else reason)

    def knows(self, name: str) -> bool:
        """Whether any table row names the program (globs included)."""
        return bool(self._defaults_index.rows_for(name))

    def table_finding(self, name: str, texts: list[str], display: str) -> Finding | None:
        """The strictest built-in table row for the program, fallback rows only if none."""
        return _strictest_row(self._defaults_index.rows_for(name), name, texts, display)

    def repo_finding(
        self, name: str, texts: list[str], display: str
    ) -> tuple[Rule, Finding] | None:
        """The strictest repository rule for the program, with its finding."""
        matched = [r for r in self._repo_index.rows_for(name) if r.matches(name, texts)]
        if not matched:
            return None
        rule = max(matched, key=lambda r: RANK[r.verdict])
        return rule, Finding(rule.verdict, rule.id, f"`{display}` {rule.reason}")


class _RowIndex:
    """Rows by the program names they list, in file order; rows with globs are tried on all."""

    def __init__(self, rows: Iterable[Rule]) -> None:
        self.by_name: dict[str, list[tuple[int, Rule]]] = {}
        self.globbed: list[tuple[int, Rule]] = []
        for order, row in enumerate(rows):
            for pattern in row.command or ():
                if any(c in pattern for c in "*?["):
                    self.globbed.append((order, row))
                else:
                    self.by_name.setdefault(pattern, []).append((order, row))
        self.cache: dict[str, list[Rule]] = {}

    def rows_for(self, name: str) -> list[Rule]:
        """The rows that name the program, in the order of the file."""
        if name not in self.cache:
            found = dict(self.by_name.get(name, []))
            for order, row in self.globbed:
                if any(_name_matches(p, name) for p in row.command or ()):
                    found[order] = row
            self.cache[name] = [found[order] for order in sorted(found)]
        return self.cache[name]


def _strictest_row(
    rules: Iterable[Rule], name: str, texts: list[str], display: str
) -> Finding | None:
    matched = [r for r in rules if r.matches(name, texts)]
    chosen = [r for r in matched if not r.fallback] or [r for r in matched if r.fallback][:1]
    best: Rule | None = None
    for rule in chosen:
        if best is None or RANK[rule.verdict] > RANK[best.verdict]:
            best = rule
    return None if best is None else Finding(best.verdict, best.id, f"`{display}` {best.reason}")


def template_fields(rule: Rule) -> set[str]:
    """The `{fields}` a decision rule's reason needs."""
    return {name for _, name, _, _ in string.Formatter().parse(rule.reason or "") if name}
