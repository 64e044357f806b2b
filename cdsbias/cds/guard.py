"""Spans that no counterfactual rule may touch: URLs, @handles, e-mail addresses, code.

``https://t.co/HE4vlScPHi`` holds the letters *HE*, ``@his_majesty_cat`` the word *his*,
``her@example.org`` the word *her*; rewriting them corrupts a link, a name or an address
that has nothing to do with gender. Every language and every gender form
(cdsbias.cds.languages.base.Language) finds these spans first and hands its rules the text
with each span blanked out (:func:`mask`: the same length, spaces), so no rule sees a word
inside one, none decides from one, and every offset stays that of the original text. Each
span is counted in the substitution report as a skip with its class's reason
(``GUARD_REASONS``).

What counts as each class:

* ``url``: a scheme and ``://`` (``https://``, ``ftp://``), or ``www.``, up to the next
  space, quote or angle bracket, without the punctuation that ends the sentence around it
  (``(see https://x.org/a).`` keeps ``https://x.org/a``); or a bare domain, with its path,
  that ends in one of ``COMMON_DOMAINS`` (``sheeats.com``), or in one of ``OTHER_DOMAINS``
  after two dots or before a path (``her.blog.example.de``, ``bit.ly/xyz``);
* ``email``: ``local@domain.tld``;
* ``handle``: ``@`` and a name of letters, digits and underscores (``@SheCodesNZ``) or
  dotted lower-case parts (``@its.him.again``), not after a letter or digit (an e-mail);
* ``code``: Markdown code, a block fenced by exactly three backticks (`````...`````) or an
  inline span between single backticks on one line. Double backticks open a LaTeX quote,
  as GAP and other corpora from Wikipedia write them (````his masterpiece''``, also
  unbalanced or closed by ``````, and ````````), so they are never code; nor is
  ```Fred' and `Ginger'``: a single-backtick span may not hold a ``'`` before a
  non-letter (the LaTeX single quote; *don't* may).

Hashtags are not guarded (*#truestory* is text; a rule decides around it). The n-ary axis
substitution (cdsbias.cds.axis_substitution: race, religion, age, a user's file) is not a
``Language``; it calls :func:`protected_spans` and :func:`mask` the same way, and counts a
span among the axis words left alone where the span hid one.
"""

from __future__ import annotations

import bisect
import re
from typing import NamedTuple

#: Span class -> the reason counted in the report (``left_unchanged_by_reason``).
GUARD_REASONS = {
    "url": "URL kept",
    "email": "e-mail address kept",
    "handle": "@handle kept",
    "code": "code span kept",
}
#: Last parts of a bare domain (without ``://`` or ``www.``) that make it a URL by
#: themselves (``example.com``) ...
COMMON_DOMAINS = "com|org|net|edu|gov|info|io"
#: ... and those that do only with a path or two dots (``bit.ly/xyz``,
#: ``news.example.de``): alone they are too often a missing space (*with him.me too*).
#: None ends an abbreviation of the CDS languages (*z.B.*, *u.a.*, *f.eks.*, *bl.a.*).
OTHER_DOMAINS = (
    "biz|co|ly|me|app|dev|ai|tv|fm|gg|uk|us|eu|de|dk|at|ch|se|no|nl|fr|be|es|it|ca|au|nz|ie"
)
# A URL may hold these; its last character may not be one of the trailing ones.
_URL_BODY = r"[^\s<>\"`]*[^\s<>\"`'.,;:!?)\]}]"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_DOMAIN_END = r"\b(?![.-]?\w)"
_PATTERN = re.compile(
    rf"""
    (?P<code>(?<!`)```(?!`).+?(?<!`)```(?!`)               # a fenced block
      | (?<!`)`(?!`)(?:[^`'\n]|'(?=[^\W\d_]))+`(?!`)     # `code`, not `a LaTeX quote'
    )
    | (?P<email>(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
    | (?P<url>(?:\b[A-Za-z][A-Za-z0-9+.-]*://|\bwww\.){_URL_BODY}
      | (?<![\w.@/-])(?:{_LABEL}\.)+(?:{COMMON_DOMAINS}){_DOMAIN_END}(?:/{_URL_BODY}|/)?
      | (?<![\w.@/-])(?:{_LABEL}\.){{2,}}(?:{OTHER_DOMAINS}){_DOMAIN_END}(?:/{_URL_BODY}|/)?
      | (?<![\w.@/-]){_LABEL}\.(?:{OTHER_DOMAINS}){_DOMAIN_END}(?:/{_URL_BODY}|/)
    )
    | (?P<handle>(?<![\w@])@\w+(?:\.(?=[a-z0-9_])\w+)*)
    """,
    re.VERBOSE | re.DOTALL,
)
# Every span needs one of these, so text without them is not searched further (each a
# fast scan: GAP's LaTeX quotes put "``" in a third of its texts, and the full pattern
# costs about as much as the English rules themselves).
_DOMAIN = re.compile(rf"\.(?:{COMMON_DOMAINS}|{OTHER_DOMAINS})\b")


def _may_hold_a_span(text: str) -> bool:
    return (
        "@" in text
        or "://" in text
        or "www." in text
        # A backtick outside a "``" pair: a code span may start there ("```" included).
        or ("`" in text and text.count("`") != 2 * text.count("``"))
        or _DOMAIN.search(text) is not None
    )


class GuardedSpan(NamedTuple):
    """A span of text that no rule may change.

    Attributes:
        start: Start offset.
        end: End offset (exclusive).
        kind: ``url``, ``email``, ``handle`` or ``code`` (``GUARD_REASONS``).
    """

    start: int
    end: int
    kind: str

    @property
    def reason(self) -> str:
        """The reason counted in the report, e.g. ``"URL kept"``."""
        return GUARD_REASONS[self.kind]


def protected_spans(text: str) -> list[GuardedSpan]:
    """The URLs, handles, e-mail addresses and code spans of ``text``, in order (module
    docstring); empty for most text, after one quick search."""
    if not _may_hold_a_span(text):
        return []
    return [
        GuardedSpan(match.start(), match.end(), match.lastgroup or "url")
        for match in _PATTERN.finditer(text)
    ]


def mask(text: str, spans: list[GuardedSpan]) -> str:
    """``text`` with each span replaced by as many spaces: offsets stay those of ``text``,
    and no rule finds a word, or decides from one, inside a span."""
    if not spans:
        return text
    pieces = []
    position = 0
    for span in spans:
        pieces.append(text[position : span.start])
        pieces.append(" " * (span.end - span.start))
        position = span.end
    pieces.append(text[position:])
    return "".join(pieces)


def outside(items: list, spans: list[GuardedSpan]) -> list:
    """The edits or skips (anything with ``start``/``end``) that overlap no span.

    ``spans`` are sorted and do not overlap (as :func:`protected_spans` returns them), so
    only the last span that starts before an item ends can overlap it: one bisection each.
    """
    if not spans:
        return items
    starts = [span.start for span in spans]
    kept = []
    for item in items:
        position = bisect.bisect_left(starts, item.end) - 1
        if position < 0 or spans[position].end <= item.start:
            kept.append(item)
    return kept
