"""The substitution report: counts per word pair, per document, and gendered-looking words
that no list covers yet (to help curate the lists)."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cdsbias.cds.engine import WORD_PATTERN, Edit
from cdsbias.cds.pronouns import word_set

# Endings that often mark a gendered noun; the report lists unlisted words with them.
GENDERED_LOOKING = re.compile(
    r"(?:ess|esses|man|men|woman|women|boy|boys|girl|girls|ette|ettes|trix|wife|wives)$"
)
# Frequent words with those endings that are not gendered.
NOT_GENDERED = word_set(
    """business process access success address progress congress express press stress
    excess recess chess guess dress mess bless confess possess assess impress compress
    depress suppress harness less unless nevertheless regardless witness fitness illness
    darkness wilderness kindness happiness awareness weakness sickness goodness bless
    human humans german germans roman romans amen omen omens specimen specimens regimen
    abdomen semen stamen acumen layman laymen shaman ramen german norman cayman caiman
    oman yemen dolmen hymen person season reason lesson poison prison comparison
    garrison jason mason crimson parson wilson johnson jackson harrison anderson davidson
    nelson robinson emerson madison allison benson carson dawson dickson ferguson gibson
    hudson lawson morrison patterson peterson richardson simpson stevenson thompson watson
    samson hanson larson carlson olson nilsson henderson addison orson tyson unison venison
    bison arson treason liaison cotton mutton button"""
)


@dataclass
class SubstitutionReport:
    """Accumulates counts over a corpus.

    Attributes:
        pairs: Substitutions per pair key, e.g. ``{"he->she": 812}``.
        kinds: Substitutions per kind (word, pronoun, name).
        documents: Per document id: whether it was substituted and how many edits.
        unlisted: Lower-case words with a gendered-looking ending (-ess, -man, -woman, -boy,
            -girl, -ette, -trix, -wife) that no list covers.
    """

    pairs: Counter = field(default_factory=Counter)
    kinds: Counter = field(default_factory=Counter)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    unlisted: Counter = field(default_factory=Counter)

    def add(
        self,
        document_id: str,
        text: str,
        edits: list[Edit],
        *,
        substituted: bool,
        known_words: frozenset[str] | set[str],
    ) -> None:
        """Records one document: its edits (if substituted) and its unlisted words."""
        if substituted:
            for edit in edits:
                self.pairs[edit.key] += 1
                self.kinds[edit.kind] += 1
        self.documents[document_id] = {
            "substituted": substituted,
            "substitutions": len(edits) if substituted else 0,
        }
        for match in WORD_PATTERN.finditer(text):
            lower = match.group()
            # Lower case only: capitalised ones are mostly surnames (Chapman, Goodman).
            if (
                lower.islower()
                and len(lower) > 4
                and lower not in known_words
                and lower not in NOT_GENDERED
                and not lower.endswith(("ness", "less"))
                and GENDERED_LOOKING.search(lower)
            ):
                self.unlisted[lower] += 1

    def to_dict(self, *, top_unlisted: int = 50, settings: dict[str, Any] | None = None) -> dict:
        """Returns a JSON-ready dictionary (pairs sorted by count, then name)."""
        substituted = sum(1 for doc in self.documents.values() if doc["substituted"])
        return {
            "settings": settings or {},
            "documents_total": len(self.documents),
            "documents_substituted": substituted,
            "substitutions_total": sum(self.pairs.values()),
            "substitutions_by_kind": dict(sorted(self.kinds.items())),
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
