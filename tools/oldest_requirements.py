"""Print the oldest versions pyproject.toml allows, as pins: `torch>=2.3` becomes `torch==2.3`.

`make test-oldest` installs these into .venv-oldest (with the oldest Python the course supports) and runs the unit
tests and the notebooks' checks there, so that every lower bound the course declares is one that has been tested.

    python -m tools.oldest_requirements [--extras dev]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

ROOT = Path(__file__).resolve().parent.parent


def requirements(extras: list[str]) -> list[str]:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    if tomllib is not None:
        project = tomllib.loads(text)["project"]
        reqs = list(project["dependencies"])
        for extra in extras:
            reqs += project["optional-dependencies"][extra]
        return reqs
    # Python 3.10 has no tomllib: read the quoted requirement strings of the sections we need.
    sections = ["dependencies"] + extras
    reqs = []
    for name in sections:
        block = re.search(rf"^{re.escape(name)} = \[(.*?)^\]", text, flags=re.M | re.S)
        if block is None:
            raise SystemExit(f"pyproject.toml has no list named {name!r}")
        reqs += re.findall(r'"([^"]+)"', block.group(1))
    return reqs


def pin_floor(requirement: str) -> str:
    """'torch>=2.3' -> 'torch==2.3'; 'sphinx-revealjs>=3.0,<4' -> 'sphinx-revealjs==3.0'."""
    name, floor = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(?:.*?>=\s*([0-9][^,;\s]*))?", requirement).groups()
    if floor is None:
        raise SystemExit(f"{requirement!r} declares no lower bound: every dependency needs a tested floor")
    return f"{name}=={floor}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.oldest_requirements", description=__doc__.split("\n\n")[0])
    parser.add_argument("--extras", default="dev", help="comma-separated extras to include (default: dev)")
    args = parser.parse_args(argv)
    extras = [e for e in args.extras.split(",") if e]
    print("\n".join(pin_floor(r) for r in requirements(extras)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
