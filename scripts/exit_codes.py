"""Write docs/exit-codes.md from kgc/cli/exits.py (the one source of the exit codes).

python scripts/exit_codes.py          # rewrite the page
python scripts/exit_codes.py --check  # exit 1 if the page is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgc.cli.exits import markdown  # noqa: E402

PAGE = ROOT / "docs" / "exit-codes.md"


def main(argv: list[str]) -> int:
    text = markdown()
    if "--check" in argv:
        fresh = PAGE.exists() and PAGE.read_text(encoding="utf-8") == text
        if not fresh:
            print(f"{PAGE.relative_to(ROOT)} is stale: run python scripts/exit_codes.py", file=sys.stderr)
        return 0 if fresh else 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
