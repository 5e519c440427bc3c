"""Reading a written explorer file (``kgc explore --html``) as the page's own script does."""

from __future__ import annotations

import base64
import gzip
import html as html_module
import json
import re
from typing import Any


def embedded_of(page: str) -> dict[str, Any]:
    """The nodes a written explorer file holds (its block inflated as the page's script does)."""
    found = re.search(r'<script type="application/octet-stream" id="kgc-nodes"[^>]*>([^<]*)</script>', page)
    assert found is not None, "no embedded block"
    nodes: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(found.group(1))))
    return nodes


def attribute(page: str, name: str) -> str:
    """An attribute of the file's block (``data-bound``, ``data-states`` …), unescaped."""
    found = re.search(rf'id="kgc-nodes"[^>]* {name}="([^"]*)"', page)
    assert found is not None, name
    return html_module.unescape(found.group(1))
