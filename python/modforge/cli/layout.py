"""Text that reads whole in the terminal it is printed to (80 columns and up): wrapped lines keep their
indent, so a listing's second line never starts at column 0."""

from __future__ import annotations

import shutil
import textwrap

# Below this a listing would be one word a line; the commands are laid out for 80.
MIN_WIDTH = 40


def terminal_width() -> int:
    """The columns of standard output's terminal (``COLUMNS`` first), 80 when it is not one."""
    return max(MIN_WIDTH, shutil.get_terminal_size((80, 24)).columns)


def hanging(label: str, text: str, width: int | None = None, indent: int | None = None) -> str:
    """``label`` then ``text`` wrapped to ``width``; continuation lines start under the text (or at
    ``indent``), never at column 0.  Long words (paths, URLs) are not broken."""
    width = width or terminal_width()
    indent = len(label) if indent is None else indent
    return textwrap.fill(text, width=width, initial_indent=label, subsequent_indent=" " * indent,
                         break_long_words=False, break_on_hyphens=False) or label.rstrip()
