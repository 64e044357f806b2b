"""Measures the CDS engines' speed (words per second, one core), each language against
English in the same run.

Usage:
    python scripts/bench_cds.py [--data-dir ../shared/data] [--repeats 3] [--no-names]
        [--stream-words 1000000]

English: the Text column of all of GAP (dev + test + validation), 71 words a document.
Danish: the DaWinoBias and ABC sentences of genda-lens, joined ten sentences a document,
so that documents are about as long as GAP's and the per-document cost of ``datasets``
weighs the same. German, two corpora:

* ``de`` (ordinary text): each of the 5,400 BEC-Pro DE sentences after a paragraph of the
  ordinary German prose of ``tests/assets/cds/german_text.txt`` (in turn), 48 words a
  document; 8.7 % of its words are changed by the German rules (the prose alone: 3.4 %);
* ``de-dense``: the BEC-Pro DE sentences alone, ten a document: every sentence has a
  person word, 44.5 % of the words are changed (the worst case).

``en-neutral`` is English gender-neutral rewriting (``gender_forms: neutral``, he/she ->
they with verb agreement; cdsbias.cds.forms) on the same GAP text; issue #29 asks for >=
200,000 words/s on ordinary text.

Words are whitespace-separated tokens; seconds are CPU seconds of this process
(``time.process_time``), so other jobs on a shared machine do not slow the count down and
words/s is per core. Two measurements per corpus:

* ``engine``: ``substitute_many`` over the texts in memory (best of ``--repeats``);
* ``stream``: the training path's ``CounterfactualMapper`` (p = 1) over a streamed
  ``datasets.IterableDataset`` of about ``--stream-words`` words (the texts repeated),
  consumed to the end, so the reading, batching and mapping of a streamed corpus count.

``guard`` is the share of the engine's time spent finding the URLs, handles, e-mail
addresses and code spans that no rule may touch (cdsbias.cds.guard), measured in the same
run. The rule-based path is always measured; English's spaCy path only when spaCy and the model
are installed. Issues #3 and #22 ask for >= 200,000 words/s per core on the rule-based path,
for English and for German and Danish.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from cdsbias.cds import LANGUAGES, CounterfactualMapper, build_substituter, read_gap
from cdsbias.cds.forms import GenderForms
from cdsbias.cds.guard import protected_spans
from cdsbias.cds.spacy_analysis import DEFAULT_SPACY_MODEL, spacy_available

REPO = Path(__file__).resolve().parents[1]
SPLITS = ("development", "test", "validation")
DANISH_FILES = (
    "DaWinoBias_anti_stereotyped_evalda.txt",
    "DaWinoBias_pro_stereotyped_evalda.txt",
    "abc_fem_sents.txt",
    "abc_male_sents.txt",
)


GERMAN_PROSE = REPO / "tests" / "assets" / "cds" / "german_text.txt"
# Corpus name -> its language; German has an ordinary and a dense corpus.
CORPORA = {"de": "de", "de-dense": "de", "en-neutral": "en"}
#: Corpora measured with other gender forms than binary, and their text's corpus.
FORMS = {"en-neutral": (GenderForms("neutral"), "en")}


def load_texts(data_dir: Path, language: str) -> list[str]:
    """The benchmark texts of corpus ``language`` from the shared data folder."""
    if language == "en":
        folder = data_dir / "gap-coreference"
        return [
            row["Text"] for split in SPLITS for row in read_gap(folder / f"gap-{split}.tsv").rows
        ]
    if language == "da":
        folder = data_dir / "genda-lens-danish"
        lines = []
        for name in DANISH_FILES:
            text = (folder / name).read_text(encoding="utf-8")
            lines.extend(line.strip() for line in text.splitlines())
        return documents([line for line in lines if line and line != "---"])
    if language in ("de", "de-dense"):
        rows = (data_dir / "bec-pro" / "BEC-Pro_DE.tsv").read_text(encoding="utf-8")
        becpro = [line.split("\t")[1] for line in rows.splitlines()[1:] if "\t" in line]
        if language == "de-dense":
            return documents(becpro)
        prose = GERMAN_PROSE.read_text(encoding="utf-8").splitlines()
        paragraphs = [line for line in prose if line.strip() and not line.startswith("#")]
        return [
            f"{paragraphs[i % len(paragraphs)]} {sentence}" for i, sentence in enumerate(becpro)
        ]
    raise SystemExit(f"no benchmark texts for language '{language}'")


def documents(sentences: list[str], size: int = 10) -> list[str]:
    """Joins consecutive sentences into documents of ``size`` sentences."""
    return [" ".join(sentences[i : i + size]) for i in range(0, len(sentences), size)]


def words_per_second(substituter, texts: list[str], repeats: int) -> tuple[float, float]:
    """Returns (best words/s over ``repeats`` runs, seconds of the best run)."""
    words = sum(len(text.split()) for text in texts)
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        substituter.substitute_many(texts)
        best = min(best, time.process_time() - started)
    return words / best, best


def guard_seconds(texts: list[str], repeats: int) -> float:
    """Best CPU seconds of finding the guarded spans (cdsbias.cds.guard) of ``texts``: the
    part of every engine's time that the URL/handle/e-mail/code guard adds."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        for text in texts:
            protected_spans(text)
        best = min(best, time.process_time() - started)
    return best


def streamed_words_per_second(
    texts: list[str],
    language: str | None,
    names: bool,
    target_words: int,
    gender_forms: GenderForms | None = None,
) -> tuple[float, float]:
    """Words/s of ``CounterfactualMapper`` over a streamed corpus of ~``target_words``
    (``language`` None: a map that returns its batch, the cost of streaming alone)."""
    import datasets

    words = sum(len(text.split()) for text in texts)
    copies = max(1, target_words // max(words, 1))
    corpus = datasets.Dataset.from_dict({"text": texts * copies}).to_iterable_dataset()
    if language is None:
        mapper = _identity
    else:
        mapper = CounterfactualMapper(
            probability=1.0, names=names, language=language, gender_forms=gender_forms
        )
        mapper.substituter  # noqa: B018 - load the word lists outside the timed part
    started = time.process_time()
    for _ in corpus.map(mapper, batched=True, batch_size=1000):
        pass
    seconds = time.process_time() - started
    return words * copies / seconds, seconds


def _corpora(language: str) -> list[str]:
    """The benchmark corpora of a registered language: its binary ones, then its others."""
    owned = [corpus for corpus, owner in CORPORA.items() if owner == language]
    binary = [corpus for corpus in owned if corpus not in FORMS] or [language]
    return binary + [corpus for corpus in owned if corpus in FORMS]


def _identity(batch: dict) -> dict:
    return batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_data = Path(os.environ.get("CDSBIAS_SHARED_DATA", REPO.parent / "shared" / "data"))
    parser.add_argument("--data-dir", type=Path, default=default_data)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-names", dest="names", action="store_false")
    parser.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    parser.add_argument("--stream-words", type=int, default=1_000_000)
    args = parser.parse_args()

    names = "on" if args.names else "off"
    print(f"rule-based CDS, one process; names={names}")
    english = load_texts(args.data_dir, "en")
    rate, seconds = streamed_words_per_second(english, None, args.names, args.stream_words)
    print(f"streaming GAP text through an identity map: {rate:,.0f} words/s ({seconds:.2f} s)")
    baseline = {}
    corpora = [corpus for language in LANGUAGES for corpus in _corpora(language)]
    for corpus in corpora:
        language = CORPORA.get(corpus, corpus)
        forms, text_corpus = FORMS.get(corpus, (None, corpus))
        texts = load_texts(args.data_dir, text_corpus)
        words = sum(len(text.split()) for text in texts)
        substituter = build_substituter(
            names=args.names, analyzer="rules", language=language, gender_forms=forms
        )
        rate, seconds = words_per_second(substituter, texts, args.repeats)
        stream_rate, stream_seconds = streamed_words_per_second(
            texts, language, args.names, args.stream_words, forms
        )
        guard = guard_seconds(texts, args.repeats)
        baseline.setdefault("engine", rate)
        baseline.setdefault("stream", stream_rate)
        print(
            f"{corpus:>8}: {len(texts):>6} texts {words:>8} words | engine {rate:>10,.0f} words/s "
            f"({seconds:.2f} s, x{rate / baseline['engine']:.2f} of en) | stream "
            f"{stream_rate:>10,.0f} words/s ({stream_seconds:.2f} s, "
            f"x{stream_rate / baseline['stream']:.2f} of en) | guard {guard / seconds:.1%} "
            "of engine"
        )
    if spacy_available(args.spacy_model):
        texts = load_texts(args.data_dir, "en")
        spacy_path = build_substituter(
            names=args.names, analyzer="spacy", spacy_model=args.spacy_model
        )
        rate, seconds = words_per_second(spacy_path, texts, 1)
        print(f"en spacy: {rate:>12,.0f} words/s ({seconds:.2f} s, {args.spacy_model})")
    else:
        print(f"en spacy: not measured ({args.spacy_model} or spaCy not installed)")


if __name__ == "__main__":
    main()
