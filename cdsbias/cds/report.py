"""The substitution report: counts per word pair and kind, per document, the units a
language left alone because it could not resolve them (per reason), and gendered-looking
words that no list covers yet (to help curate the lists)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cdsbias.cds.guard import GUARD_REASONS

if TYPE_CHECKING:
    from cdsbias.cds.edits import Edit
    from cdsbias.cds.languages.base import Language, Skip


# Skip reasons of the guard (cdsbias.cds.guard): printed apart from the ambiguous units.
_GUARDED = frozenset(GUARD_REASONS.values())


@dataclass
class SubstitutionReport:
    """Accumulates counts over a corpus.

    Attributes:
        pairs: Substitutions per pair key, e.g. ``{"he->she": 812}``.
        kinds: Substitutions per kind (English: word, pronoun, name; other languages
            add noun, possessive, determiner, ...).
        documents: Per document id: whether it was substituted and how many edits.
        unlisted: Words that look gendered but that no list covers
            (``Language.unlisted_words``; English: -ess, -man, -woman, ... endings).
        skipped: Units left unchanged because the language could not resolve them, per
            reason (e.g. ``"ambiguous sie"``), and the URLs, handles, e-mail addresses and
            code spans no rule may touch (``"URL kept"``, ...), in the substituted documents.
    """

    pairs: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    unlisted: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)

    def add(
        self,
        document_id: str,
        text: str,
        edits: list[Edit],
        *,
        substituted: bool,
        language: Language,
        skipped: list[Skip] = (),
    ) -> None:
        """Records one document: its edits and skips (if substituted) and its unlisted words."""
        if substituted:
            for edit in edits:
                self.pairs[edit.key] += 1
                self.kinds[edit.kind] += 1
            for skip in skipped:
                self.skipped[skip.reason] += 1
        self.documents[document_id] = {
            "substituted": substituted,
            "substitutions": len(edits) if substituted else 0,
        }
        self.unlisted.update(language.unlisted_words(text))

    def to_dict(self, *, top_unlisted: int = 50, settings: dict[str, Any] | None = None) -> dict:
        """Returns a JSON-ready dictionary (pairs sorted by count, then name)."""
        substituted = sum(1 for doc in self.documents.values() if doc["substituted"])
        return {
            "settings": settings or {},
            "documents_total": len(self.documents),
            "documents_substituted": substituted,
            "substitutions_total": sum(self.pairs.values()),
            "substitutions_by_kind": dict(sorted(self.kinds.items())),
            "left_unchanged_by_reason": dict(sorted(self.skipped.items())),
            "pairs": dict(sorted(self.pairs.items(), key=lambda item: (-item[1], item[0]))),
            "unlisted_gendered_looking_words": [
                {"word": word, "count": count}
                for word, count in sorted(self.unlisted.items(), key=lambda i: (-i[1], i[0]))[
                    :top_unlisted
                ]
            ],
            "documents": self.documents,
        }

    def to_json(self, **kwargs: Any) -> str:
        """Serialises ``to_dict(**kwargs)`` with stable key order."""
        return json.dumps(self.to_dict(**kwargs), indent=2, ensure_ascii=False) + "\n"

    def summary(self, language: Language) -> str:
        """The per-language lines ``cdsbias cds`` prints: documents changed, swaps by kind,
        the units left alone (e.g. an ``ihr`` whose reading the context does not fix) and,
        if any, the guarded spans per class (URLs, handles, e-mails, code:
        cdsbias.cds.guard)."""
        substituted = sum(1 for doc in self.documents.values() if doc["substituted"])
        changed = sum(1 for doc in self.documents.values() if doc["substitutions"])
        kinds = ", ".join(f"{kind} {count:,}" for kind, count in sorted(self.kinds.items()))
        guarded = {r: n for r, n in self.skipped.items() if r in _GUARDED}
        ambiguous = {r: n for r, n in self.skipped.items() if r not in _GUARDED}
        skipped = ", ".join(f"{reason} {count:,}" for reason, count in sorted(ambiguous.items()))
        line = (
            f"{language.name} ({language.code}): {changed:,} of {substituted:,} substituted "
            f"documents changed; swapped {sum(self.kinds.values()):,} words"
            f"{f' ({kinds})' if kinds else ''}; left unchanged as ambiguous: "
            f"{sum(ambiguous.values()):,}{f' ({skipped})' if skipped else ''}"
        )
        if guarded:
            spans = ", ".join(f"{reason} {count:,}" for reason, count in sorted(guarded.items()))
            line += f"; guarded spans never rewritten: {sum(guarded.values()):,} ({spans})"
        return line
