"""Character-level edits: what every language's rules produce and everything downstream uses.

An :class:`Edit` replaces ``text[start:end]``; a document's edits are sorted and
non-overlapping, with offsets into the *original* text. ``apply_edits`` builds the
counterfactual, ``map_offset`` carries an annotation's offset over to it (how GAP's Pronoun,
A and B offsets are re-derived), and ``match_case`` gives a substitute its original's casing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """One substitution.

    Attributes:
        start: Start offset in the original text.
        end: End offset (exclusive) in the original text.
        original: ``text[start:end]``.
        replacement: The substitute, in the original's case.
        kind: What was swapped, counted in reports: English uses ``"word"``,
            ``"pronoun"`` and ``"name"``; other languages add their own (``"noun"``,
            ``"possessive"``, ...).
    """

    start: int
    end: int
    original: str
    replacement: str
    kind: str

    @property
    def key(self) -> str:
        """Report key of the pair, e.g. ``"he->she"`` or ``"Mary->James"``."""
        if self.kind == "name":
            return f"{self.original}->{self.replacement}"
        return f"{self.original.lower()}->{self.replacement.lower()}"


def match_case(source: str, replacement: str) -> str:
    """Gives ``replacement`` the case pattern of ``source`` (HIS -> HER, He -> She)."""
    if len(source) > 1 and source.isupper():
        return replacement.upper()
    if source[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Applies sorted, non-overlapping edits to ``text``."""
    if not edits:
        return text
    pieces = []
    position = 0
    for edit in edits:
        pieces.append(text[position : edit.start])
        pieces.append(edit.replacement)
        position = edit.end
    pieces.append(text[position:])
    return "".join(pieces)


def map_offset(edits: list[Edit], offset: int, *, is_end: bool = False) -> int:
    """Maps an offset in the original text to the substituted text.

    An offset inside an edit maps to the start of its replacement (or, for a span end, to
    the end of the replacement), so a span keeps covering whole substituted words.
    """
    shift = 0
    for edit in edits:
        if edit.end <= offset:
            shift += len(edit.replacement) - (edit.end - edit.start)
        elif edit.start < offset:  # offset falls inside this edit
            if is_end:
                return edit.start + shift + len(edit.replacement)
            return edit.start + shift
        else:
            break
    return offset + shift
