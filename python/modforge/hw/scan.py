"""The forbidden-operator scan of generated Verilog.

The designs must not divide, take remainders or multiply wider than the declared DSP tile.
This scan reads the Verilog itself (comments, attributes and strings removed) and reports

* any ``%`` or ``/`` (division and modulo in any form);
* any ``**``;
* any ``*`` whose operands are not both at most ``dsp_bits`` wide, or that it cannot parse
  as ``assign X = A * B;`` with simple operands (it fails closed: unknown means forbidden).

Operand widths come from the declarations (``wire [33:0] x;``), part-selects
(``x[16:0]``), sized constants (``17'h1abc``) and concatenations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DECL = re.compile(r"^\s*(?:wire|reg|input|output|inout)\s+(?:signed\s+)?(?:\[(\d+):(\d+)\]\s*)?(\\\S+|[A-Za-z_][\w$]*)")


@dataclass(frozen=True)
class Violation:
    line: int
    what: str
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}: {self.text.strip()[:160]}"


def strip_verilog(text: str) -> str:
    """Blank out comments, attributes and strings, keeping line numbers."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("(*", i) and not text.startswith("(*)", i):
            j = text.find("*)", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text[i] == "\\":
            # Escaped identifier: up to the next whitespace, may contain any character.
            j = i
            while j < n and not text[j].isspace():
                j += 1
            out.append("\\" + re.sub(r"[^\w$]", "_", text[i + 1:j]))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


_MODULE = re.compile(r"^\s*module\b")


def _module_of_lines(lines: list[str]) -> list[int]:
    """For every line, the index of the module it belongs to (a name's width is per module)."""
    out, current = [], 0
    for line in lines:
        if _MODULE.match(line):
            current += 1
        out.append(current)
    return out


def _widths(clean: str) -> dict[int, dict[str, int]]:
    """Declared widths per module index (see :func:`_module_of_lines`)."""
    lines = clean.splitlines()
    widths: dict[int, dict[str, int]] = {}
    for line, module in zip(lines, _module_of_lines(lines)):
        m = _DECL.match(line)
        if m:
            hi, lo, name = m.group(1), m.group(2), m.group(3).strip()
            widths.setdefault(module, {})[name] = abs(int(hi) - int(lo)) + 1 if hi is not None else 1
    return widths


def operand_width(expr: str, widths: dict[str, int]) -> int | None:
    e = expr.strip()
    m = re.fullmatch(r"\$(?:un)?signed\((.*)\)", e)        # a sign cast keeps the width
    if m:
        return operand_width(m.group(1), widths)
    m = re.fullmatch(r"(\d+)'[sS]?[hHdDbBoO][0-9a-fA-FxXzZ_]+", e)
    if m:
        return int(m.group(1))
    if e.startswith("{") and e.endswith("}"):
        total = 0
        depth = 0
        part = ""
        for ch in e[1:-1] + ",":
            if ch == "," and depth == 0:
                w = operand_width(part, widths)
                if w is None:
                    return None
                total += w
                part = ""
                continue
            depth += ch in "{[("
            depth -= ch in "}])"
            part += ch
        return total
    m = re.fullmatch(r"(\\\S+|[A-Za-z_][\w$]*)\s*(?:\[(\d+)(?::(\d+))?\])?", e)
    if m:
        name, hi, lo = m.group(1), m.group(2), m.group(3)
        if hi is None:
            return widths.get(name)
        if lo is None:
            return 1
        return abs(int(hi) - int(lo)) + 1
    return None


def scan(text: str, dsp_bits: int) -> list[Violation]:
    clean = strip_verilog(text)
    widths = _widths(clean)
    found: list[Violation] = []
    lines = clean.splitlines()
    modules = _module_of_lines(lines)
    raw_lines = text.splitlines()
    for no, line in enumerate(lines, 1):
        raw = raw_lines[no - 1] if no - 1 < len(raw_lines) else line
        if "%" in line:
            found.append(Violation(no, "modulo operator %", raw))
        if "/" in line:
            found.append(Violation(no, "division operator /", raw))
        if "**" in line:
            found.append(Violation(no, "power operator **", raw))
            continue
        body = line.replace("@*", "").replace("@ *", "")      # `always @*` is a sensitivity list
        if "*" not in body:
            continue
        m = re.match(r"^\s*assign\s+(.+?)\s*=\s*(.+?)\s*\*\s*(.+?)\s*;\s*$", body)
        if not m or "*" in m.group(2) or "*" in m.group(3):
            found.append(Violation(no, "multiplication the scan cannot parse (forbidden)", raw))
            continue
        scope = widths.get(modules[no - 1], {})
        wa, wb = operand_width(m.group(2), scope), operand_width(m.group(3), scope)
        if wa is None or wb is None:
            found.append(Violation(no, "multiplication with an operand of unknown width", raw))
        elif wa > dsp_bits or wb > dsp_bits:
            found.append(Violation(no, f"{wa} x {wb}-bit multiplication, wider than the {dsp_bits}-bit DSP tile", raw))
    return found


def multiplications(text: str) -> int:
    """How many ``*`` operators the Verilog has (after stripping)."""
    clean = strip_verilog(text).replace("@*", "").replace("@ *", "")
    return clean.count("*")
