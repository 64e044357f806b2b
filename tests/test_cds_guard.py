"""The guard of cdsbias.cds.guard: URLs, @handles, e-mail addresses and code spans are never
rewritten, in English, German and Danish, binary and neutral; the spans are reported per
class; LaTeX quotes (GAP) are not code.

The corpus of ``guarded_corpus`` is generated here (seed 36), so it knows where each span is
without asking the guard: a span the guard missed would show as a changed span."""

from __future__ import annotations

import json
import random

import pytest

from cdsbias.cds.edits import Edit, apply_edits, map_offset
from cdsbias.cds.forms import GenderForms, apply_forms
from cdsbias.cds.guard import GUARD_REASONS, GuardedSpan, mask, outside, protected_spans
from cdsbias.cds.languages import get_language
from cdsbias.cds.report import SubstitutionReport
from cdsbias.cli import main

# Gendered words of each language, to hide inside spans, and sentences with gendered words
# of their own around the span (so the rules have work to do outside it).
WORDS = {
    "en": ["he", "she", "him", "his", "her", "hers", "HE", "She", "John", "Mary", "king"],
    "de": ["er", "sie", "ihr", "ihm", "ihn", "sein", "Mann", "Frau", "Lehrerin", "Hans"],
    "da": ["han", "hun", "ham", "hende", "hans", "mand", "kvinde", "konge", "Peter", "Mette"],
}
TEMPLATES = {
    "en": [
        "She sent him {span} yesterday.",
        "Read {span} and tell her what he thinks.",
        "{span} is where his sister posts.",
        "He wrote: {span}",
        "Her brother found {span}, she said.",
    ],
    "de": [
        "Sie schickte ihm {span} gestern.",
        "Er liest {span} und sagt es seiner Frau.",
        "{span} gehört ihrem Bruder.",
        "Der Lehrer schrieb: {span}",
    ],
    "da": [
        "Hun sendte ham {span} i går.",
        "Han læser {span} og fortæller det til sin kone.",
        "{span} tilhører hendes bror.",
        "Kongen skrev: {span}",
    ],
}


def _span(rng: random.Random, words: list[str]) -> tuple[str, str]:
    a, b, c = rng.sample(words, 3)
    number = rng.randint(1, 999)
    kind = rng.choice(["url", "url", "www", "bare", "email", "handle", "handle", "code", "fence"])
    made = {
        "url": f"https://{a.lower()}.example.com/{b}-{c}/{number}?ref={a}",
        "www": f"www.{a.lower()}{b.lower()}.org/{c}",
        "bare": rng.choice(
            [f"bit.ly/{a.upper()}{number}{b}", f"{a.lower()}.{b.lower()}.example.de"]
        ),
        "email": f"{a.lower()}.{b.lower()}@{c.lower()}-mail.dk",
        "handle": rng.choice([f"@{a}_{b}{number}", f"@{a.lower()}.{b.lower()}"]),
        "code": f"`{a}_{b}.py`",
        "fence": f"```{a} = {b}({c})```",
    }[kind]
    return {"www": "url", "bare": "url", "fence": "code"}.get(kind, kind), made


def guarded_corpus(language: str, size: int = 100) -> list[tuple[str, int, str, str]]:
    """``size`` texts of ``language``: (text, span start, span, span class)."""
    rng = random.Random(36)
    rows = []
    for _ in range(size):
        kind, span = _span(rng, WORDS[language])
        text = rng.choice(TEMPLATES[language]).format(span=span)
        rows.append((text, text.index(span), span, kind))
    return rows


ENGINES = {
    "en binary": ("en", None),
    "en neutral": ("en", GenderForms("neutral")),
    "en binary+neutral": ("en", GenderForms("binary+neutral")),
    "de binary": ("de", None),
    "da binary": ("da", None),
}


@pytest.mark.parametrize("engine", list(ENGINES))
def test_no_span_of_the_generated_corpus_changes(engine):
    code, forms = ENGINES[engine]
    language = apply_forms(get_language(code), forms, seed=3)
    rows = guarded_corpus(code)
    kinds = {kind for *_, kind in rows}
    assert kinds == set(GUARD_REASONS)
    texts = [text for text, *_ in rows]
    changed_outside = 0
    for (text, start, span, _), edits in zip(rows, language.edits_many(texts), strict=True):
        output = apply_edits(text, edits)
        moved = map_offset(edits, start)
        assert output[moved : moved + len(span)] == span, (text, output)
        changed_outside += bool(edits)
    # The rules still work around the spans: (nearly) every sentence has gendered words.
    assert changed_outside >= 0.9 * len(rows)


def test_corpus_has_over_two_hundred_spans_and_each_is_found_exactly():
    rows = [row for code in WORDS for row in guarded_corpus(code)]
    assert len(rows) >= 200
    for text, start, span, kind in rows:
        found = protected_spans(text)
        assert [(s.start, s.end, s.kind) for s in found] == [(start, start + len(span), kind)]


@pytest.mark.parametrize(
    ("code", "forms", "source", "expected"),
    [
        (
            "en",
            None,
            "He posted https://t.co/HE4vlScPHi for her.",
            "She posted https://t.co/HE4vlScPHi for him.",
        ),
        (
            "en",
            "neutral",
            "Mail her at her@example.org, said he.",
            "Mail them at her@example.org, said they.",
        ),
        ("en", None, "Ask @his_majesty what she wants.", "Ask @his_majesty what he wants."),
        (
            "en",
            "neutral",
            "He fixed `her_config.py` for her.",
            "They fixed `her_config.py` for them.",
        ),
        (
            "de",
            None,
            "Er schrieb an sie.mueller@example.de und dankte ihr.",
            "Sie schrieb an sie.mueller@example.de und dankte ihm.",
        ),
        (
            "de",
            None,
            "Sie folgt @ErUndSie auf https://example.de/er/sie.",
            "Er folgt @ErUndSie auf https://example.de/er/sie.",
        ),
        (
            "de",
            None,
            "Er tippte `ihr_name = sein_name` ein.",
            "Sie tippte `ihr_name = sein_name` ein.",
        ),
        (
            "da",
            None,
            "Han skrev til hun.hansen@example.dk i går.",
            "Hun skrev til hun.hansen@example.dk i går.",
        ),
        (
            "da",
            None,
            "Hun følger @han_og_hun og www.hanogham.dk/hende.",
            "Han følger @han_og_hun og www.hanogham.dk/hende.",
        ),
        ("da", None, "Han skrev ```hun = ham``` i koden.", "Hun skrev ```hun = ham``` i koden."),
    ],
)
def test_guard_in_each_language(code, forms, source, expected):
    language = apply_forms(get_language(code), forms and GenderForms(forms))
    assert language.substitute(source) == expected


@pytest.mark.parametrize(
    "text",
    [
        "He called it ``his masterpiece'' and she agreed.",
        "``Kruse was tired. ``If she'd tried,'' says Beidleman, ``she would have.``",
        "`Fred' and `Ginger' danced while he sang.",
        "''`` W ```` jested that only the groom could throw such a party.",
        "z.B. sagte er, u.a. mit ihr; f.eks. sagde han, bl.a. til hende, ca. 5 gange.",
        "I stayed with him.me too, she said.",
    ],
)
def test_latex_quotes_and_abbreviations_are_not_guarded(text):
    assert protected_spans(text) == []


def test_mask_keeps_offsets_and_hides_every_letter():
    text = "see https://x.org/her and @his_cat now"
    spans = protected_spans(text)
    masked = mask(text, spans)
    assert len(masked) == len(text)
    assert masked == "see " + " " * len("https://x.org/her") + " and " + " " * 8 + " now"


def test_guarded_spans_are_reported_per_class():
    language = get_language("en")
    text = "He wrote to her@x.org, see https://x.org/him and @her_cat, run `his`."
    skipped = []
    edits = language.edits(text, skipped=skipped)
    assert [edit.original for edit in edits] == ["He"]
    assert sorted(skip.reason for skip in skipped) == [
        "@handle kept",
        "URL kept",
        "code span kept",
        "e-mail address kept",
    ]
    report = SubstitutionReport()
    report.add("0", text, edits, substituted=True, language=language, skipped=skipped)
    line = report.summary(language)
    assert line.endswith(
        "left unchanged as ambiguous: 0; guarded spans never rewritten: 4 (@handle kept 1, "
        "URL kept 1, code span kept 1, e-mail address kept 1)"
    )


def test_edits_many_reports_the_guard_once_per_span():
    language = apply_forms(get_language("en"), GenderForms("neutral"))
    skipped: list = []
    language.edits_many(["Mr Lee wrote to @her_cat.", "She left."], skipped=skipped)
    assert [[skip.reason for skip in own] for own in skipped] == [
        ["title kept", "@handle kept"],
        [],
    ]


def test_command_prints_the_guarded_spans(tmp_path, capsys):
    pytest.importorskip("datasets")
    source = tmp_path / "in.txt"
    source.write_text("She posted https://t.co/HE4vl and @his_cat.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["cds", str(source), "--out", str(out), "--probability", "1", "--quiet"]
    assert main([*args, "--forms", "neutral"]) == 0
    assert (
        "guarded spans never rewritten: 2 (@handle kept 1, URL kept 1)" in capsys.readouterr().out
    )
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["text"] == "They posted https://t.co/HE4vl and @his_cat."
    report = json.loads((tmp_path / "out.jsonl.report.json").read_text(encoding="utf-8"))
    assert report["left_unchanged_by_reason"] == {"@handle kept": 1, "URL kept": 1}


def test_outside_drops_exactly_the_items_that_overlap_a_span():
    spans = [GuardedSpan(0, 3, "url"), GuardedSpan(10, 12, "code"), GuardedSpan(25, 30, "email")]
    bounds = [(3, 5), (5, 20), (12, 14), (8, 10), (9, 11), (24, 25), (29, 31), (30, 31), (2, 3)]
    items = [Edit(start, end, "x", "y", "word") for start, end in bounds]
    kept = [(item.start, item.end) for item in outside(items, spans)]
    assert kept == [(3, 5), (12, 14), (8, 10), (24, 25), (30, 31)]


@pytest.mark.parametrize(
    ("axis", "source", "expected"),
    [
        (
            "religion",
            "The Muslim mayor posted https://example.org/muslim-voters and @city.muslim.news.",
            "The Christian mayor posted https://example.org/muslim-voters and @city.muslim.news.",
        ),
        (
            "race",
            "A black teacher wrote to black.teacher@example.org about `black_list`.",
            "A white teacher wrote to black.teacher@example.org about `black_list`.",
        ),
    ],
)
def test_the_axis_substitution_never_rewrites_a_guarded_span(axis, source, expected):
    """Race, religion and user axes go through the same guard as gender's languages: the
    word outside the span changes, the same word inside it does not, and the report counts
    each span that hid an axis word."""
    from cdsbias.axes import get_axis
    from cdsbias.cds.axis_substitution import AxisSubstituter

    axis_ = get_axis(axis)
    substituter = AxisSubstituter(axis_)
    analysis = substituter.analyse(source)
    # Group 0 <-> the other group of the word outside the span.
    group = analysis.matches[0].group
    target = axis_.groups.index("christian" if axis == "religion" else "white")
    mapping = list(range(axis_.k))
    mapping[group], mapping[target] = target, group
    assert len(analysis.matches) == 1
    assert apply_edits(source, substituter.edits(analysis, mapping)) == expected
    assert sum(analysis.kept.values()) == 2
    assert set(analysis.kept) <= set(GUARD_REASONS.values())
