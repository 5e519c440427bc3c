"""Text measurement for hand-laid-out SVG: label widths without a renderer.

The widths are DejaVu Sans's advance widths (Book and Bold, per em, read from the TTF that Debian's
``fonts-dejavu-core`` ships). The diagrams ask for ``DejaVu Sans, Verdana, Arial, sans-serif``;
DejaVu Sans is the widest of these, so a layout that leaves room for it never overlaps in the
others. Characters outside printable ASCII count as 1 em (the widest glyph in the font).
"""

from __future__ import annotations

FONT_FAMILY = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"

_ASCII = "".join(chr(c) for c in range(32, 127))
# fmt: off
_BOOK = (
    0.318, 0.401, 0.46, 0.838, 0.636, 0.95, 0.78, 0.275, 0.39, 0.39, 0.5, 0.838, 0.318, 0.361, 0.318, 0.337,
    0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.337, 0.337, 0.838, 0.838, 0.838, 0.531,
    1.0, 0.684, 0.686, 0.698, 0.77, 0.632, 0.575, 0.775, 0.752, 0.295, 0.295, 0.656, 0.557, 0.863, 0.748, 0.787,
    0.603, 0.787, 0.695, 0.635, 0.611, 0.732, 0.684, 0.989, 0.685, 0.611, 0.685, 0.39, 0.337, 0.39, 0.838, 0.5,
    0.5, 0.613, 0.635, 0.55, 0.635, 0.615, 0.352, 0.635, 0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612,
    0.635, 0.635, 0.411, 0.521, 0.392, 0.634, 0.592, 0.818, 0.592, 0.592, 0.525, 0.636, 0.337, 0.636, 0.838,
)
_BOLD = (
    0.348, 0.456, 0.521, 0.838, 0.696, 1.002, 0.872, 0.306, 0.457, 0.457, 0.523, 0.838, 0.38, 0.415, 0.38, 0.365,
    0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.696, 0.4, 0.4, 0.838, 0.838, 0.838, 0.58,
    1.0, 0.774, 0.762, 0.734, 0.83, 0.683, 0.683, 0.821, 0.837, 0.372, 0.372, 0.775, 0.637, 0.995, 0.837, 0.85,
    0.733, 0.85, 0.77, 0.72, 0.682, 0.812, 0.774, 1.103, 0.771, 0.724, 0.725, 0.457, 0.365, 0.457, 0.838, 0.5,
    0.5, 0.675, 0.716, 0.593, 0.716, 0.678, 0.435, 0.716, 0.712, 0.343, 0.343, 0.665, 0.343, 1.042, 0.712, 0.687,
    0.716, 0.716, 0.493, 0.595, 0.478, 0.712, 0.652, 0.924, 0.645, 0.652, 0.582, 0.712, 0.365, 0.712, 0.838,
)
# fmt: on
_WIDTHS = {False: dict(zip(_ASCII, _BOOK, strict=True)), True: dict(zip(_ASCII, _BOLD, strict=True))}


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width in pixels of ``text`` set in DejaVu Sans at ``size`` px."""
    table = _WIDTHS[bold]
    return size * sum(table.get(ch, 1.0) for ch in text)


def wrap(text: str, size: float, max_width: float, bold: bool = False) -> list[str]:
    """Greedy word wrap to lines no wider than ``max_width`` (a single word longer than that stays
    on a line of its own)."""
    words = text.split(" ")
    lines: list[str] = []
    current = ""
    for word in words:
        candidate = f"{current} {word}" if current else word
        if current and text_width(candidate, size, bold) > max_width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current or not lines:
        lines.append(current)
    return lines
