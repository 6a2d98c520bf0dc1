"""Text formatting shared by the markdown and LaTeX renderers."""
from __future__ import annotations

import re

# Common multiples of L_tr get a typographic fraction so column headers stay short.
_FRACTIONS = {0.125: ("⅛", r"\frac{1}{8}"), 0.25: ("¼", r"\frac{1}{4}"),
              0.5: ("½", r"\frac{1}{2}"), 0.75: ("¾", r"\frac{3}{4}")}


def format_metric(value: float) -> str:
    """Our measured value: 2 decimals, none from 1000 up (digits there are noise), and 2
    significant digits below 0.1 (a small attention resolution must not print as 0.00)."""
    return _format(value, "")


def format_delta(value: float) -> str:
    """A signed difference (ours − paper) in the same precision as format_metric."""
    return _format(value, "+")


def _format(value: float, sign: str) -> str:
    if abs(value) >= 1000:
        return f"{value:{sign}.0f}"
    if 0 < abs(value) < 0.1:
        return f"{value:{sign}.2g}"
    return f"{value:{sign}.2f}"


def human_count(n: int | float) -> str:
    """3_300_000 -> '3.3M', 50_000 -> '50k', 200 -> '200'."""
    n = float(n)
    for threshold, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= threshold:
            return f"{n / threshold:.1f}".rstrip("0").rstrip(".") + suffix
    return f"{n:g}"


def multiple_md(multiple: float) -> str:
    if multiple in _FRACTIONS:
        return _FRACTIONS[multiple][0]
    return f"{multiple:g}"


def multiple_tex(multiple: float) -> str:
    if multiple in _FRACTIONS:
        return _FRACTIONS[multiple][1]
    return f"{multiple:g}"


def md_escape(text: str) -> str:
    # A bare pipe would split a markdown table cell.
    return str(text).replace("|", r"\|")


_TEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "_": r"\_", "%": r"\%",
    "&": r"\&", "#": r"\#", "$": r"\$", "^": r"\^{}", "~": r"\textasciitilde{}",
    "×": r"$\times$", "−": r"$-$", "Δ": r"$\Delta$", "→": r"$\rightarrow$",
    "—": "---", "–": "--", "≥": r"$\geq$", "≤": r"$\leq$", "±": r"$\pm$",
    "¼": r"$\frac{1}{4}$", "½": r"$\frac{1}{2}$", "¾": r"$\frac{3}{4}$", "⅛": r"$\frac{1}{8}$",
    "<": r"\textless{}", ">": r"\textgreater{}",
}
_TEX_PATTERN = re.compile("|".join(re.escape(k) for k in _TEX_SPECIALS))
_CODE_SPAN = re.compile(r"`([^`]*)`")


def tex_escape(text: str) -> str:
    """Plain (markdown-ish) text to LaTeX; `code` spans become \\texttt{}."""
    parts = []
    last = 0
    for match in _CODE_SPAN.finditer(str(text)):
        parts.append(_escape_plain(str(text)[last:match.start()]))
        parts.append(r"\texttt{" + _escape_plain(match.group(1)) + "}")
        last = match.end()
    parts.append(_escape_plain(str(text)[last:]))
    return "".join(parts)


def _escape_plain(text: str) -> str:
    return _TEX_PATTERN.sub(lambda m: _TEX_SPECIALS[m.group(0)], text)
