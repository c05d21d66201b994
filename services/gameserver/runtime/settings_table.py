"""The table of every variable of the settings, generated from their declarations.

`markdown` is the table of docs/services.md (between ``<!-- settings:begin -->`` and
``<!-- settings:end -->``), `env_example` the block of infra/renature.env.example (between
``# settings:begin`` and ``# settings:end``). ``python -m gameserver.runtime.settings_table``
(``make settings-docs``) writes both; a unit test fails when either is stale.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from gameserver.runtime.settings import declared, parts
from gameserver.runtime.settings_parts import as_variable

DOCS_MARKERS = ("<!-- settings:begin -->", "<!-- settings:end -->")
ENV_MARKERS = ("# settings:begin", "# settings:end")
DOCS = Path("docs/services.md")
ENV_EXAMPLE = Path("infra/renature.env.example")


class Row(NamedTuple):
    variable: str
    default: str
    """As the table shows it (``16``, ``rn``, ``on``, ``none``)."""
    value: str
    """As the environment would hold it ("" where there is none to write)."""
    meaning: str
    part: str
    secret: bool


def rows() -> list[Row]:
    """Every field that a variable sets, part by part, in declaration order."""
    found = []
    for part, kind in parts().items():
        for spec, _ in declared(kind):
            if not spec.metadata.get("env"):
                continue
            default, shown = _default(spec), spec.metadata.get("shown")
            if shown and shown.startswith("`") and default is not None:
                value = shown.strip("`")  # a word the parser takes (`off` for 0.0)
            else:
                value = "" if default is None else as_variable(default)
            shown = shown or (f"`{value}`" if value else "none")
            found.append(
                Row(
                    spec.metadata["env"],
                    shown,
                    value,
                    spec.metadata["doc"],
                    part,
                    bool(spec.metadata.get("secret")),
                )
            )
    return found


def markdown() -> str:
    """The table of docs/services.md."""
    lines = ["| Variable | Default | Meaning | Part |", "|---|---|---|---|"]
    for row in rows():
        lines.append(f"| `{row.variable}` | {row.default} | {row.meaning} | `{row.part}` |")
    return "\n".join(lines)


def env_example() -> str:
    """The block of infra/renature.env.example: every variable, commented out, at its
    default."""
    lines = [
        "# Every setting of the services, at its default (generated: `make settings-docs`).",
        "# Each service reads them from its own environment (docker-compose.yml, the ConfigMap",
        "# renature-env); docs/services.md says what each means.",
    ]
    part = None
    for row in rows():
        if row.part != part:
            part = row.part
            lines.append(f"# -- {part}")
        default = "" if row.value or row.secret else f" (default: {row.default})"
        lines.append(f"# {row.meaning}{default}".replace("`", ""))
        lines.append(f"# {row.variable}={'' if row.secret else row.value}")
    return "\n".join(lines)


def replaced(text: str, markers: tuple[str, str], body: str) -> str:
    """``text`` with what stands between the two markers replaced by ``body``."""
    begin, end = markers
    if begin not in text or end not in text:
        raise ValueError(f"the markers {begin} and {end} are missing")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def documents(root: Path) -> dict[Path, str]:
    """Both documents as they should read, by path under ``root``."""
    docs, env = root / DOCS, root / ENV_EXAMPLE
    return {
        docs: replaced(docs.read_text(encoding="utf-8"), DOCS_MARKERS, markdown()),
        env: replaced(env.read_text(encoding="utf-8"), ENV_MARKERS, env_example()),
    }


def _default(spec: dataclasses.Field[Any]) -> Any:
    if spec.default_factory is not dataclasses.MISSING:
        return None  # made per process (a consumer name): the table says how
    return spec.default


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m gameserver.runtime.settings_table")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository")
    args = parser.parse_args(argv)
    for path, text in documents(args.root).items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
