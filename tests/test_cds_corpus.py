"""CDS/CDA over plain texts and datasets.Dataset, and the optional spaCy path (mocked)."""

from __future__ import annotations

import importlib.util
import pickle
import re
from dataclasses import dataclass, field

import pytest

from cdsbias.cds import (
    CounterfactualMapper,
    CounterfactualSubstituter,
    SpacyAnalyzer,
    counterfactual_batch,
    substitute_texts,
)
from cdsbias.cds.corpus import should_substitute
from cdsbias.cds.spacy_analysis import analysis_from_doc, build_substituter
from cdsbias.errors import CdsbiasError

TEXTS = [f"Document {i}: he gave her his book and she thanked him." for i in range(40)]


def test_cds_probability_one_swaps_every_text():
    out = substitute_texts(TEXTS[:3], probability=1.0)
    assert out[0] == "Document 0: she gave him her book and he thanked her."


def test_cds_probability_half_is_seeded_and_close_to_half():
    first = substitute_texts(TEXTS, probability=0.5, seed=11)
    assert first == substitute_texts(TEXTS, probability=0.5, seed=11)
    changed = sum(a != b for a, b in zip(first, TEXTS, strict=True))
    assert 10 <= changed <= 30
    assert first != substitute_texts(TEXTS, probability=0.5, seed=12)


def test_coin_depends_only_on_seed_and_key():
    coins = [should_substitute(5, f"doc-{i}", 0.5) for i in range(200)]
    assert coins == [should_substitute(5, f"doc-{i}", 0.5) for i in range(200)]
    assert 70 < sum(coins) < 130
    assert all(should_substitute(5, f"doc-{i}", 1.0) for i in range(20))
    assert not any(should_substitute(5, f"doc-{i}", 0.0) for i in range(20))


def test_cda_adds_a_counterfactual_after_each_row():
    batch = {"text": ["He left.", "She stayed."], "label": [0, 1]}
    out = CounterfactualMapper(mode="cda")(batch)
    assert out["text"] == ["He left.", "She left.", "She stayed.", "He stayed."]
    assert out["label"] == [0, 0, 1, 1]
    assert out["counterfactual"] == [False, True, False, True]


def test_counterfactual_batch_function_form():
    out = counterfactual_batch({"body": ["his wife"]}, column="body", probability=1.0)
    assert out["body"] == ["her husband"] and out["counterfactual"] == [True]


def test_mapper_rejects_bad_settings_and_columns():
    with pytest.raises(CdsbiasError, match=r"\[0, 1\]"):
        CounterfactualMapper(probability=2.0)
    with pytest.raises(CdsbiasError, match="Unknown mode"):
        CounterfactualMapper(mode="swap")
    with pytest.raises(CdsbiasError, match="Column 'text' not found"):
        CounterfactualMapper()({"sentence": ["he"]})


def test_mapper_pickles_without_its_engine():
    mapper = CounterfactualMapper(probability=1.0)
    mapper({"text": ["he"]})
    clone = pickle.loads(pickle.dumps(mapper))
    assert clone._substituter is None
    assert clone({"text": ["he"]})["text"] == ["she"]


def test_dataset_map_with_two_processes_matches_one_process():
    datasets = pytest.importorskip("datasets")
    dataset = datasets.Dataset.from_dict({"text": TEXTS, "id": [str(i) for i in range(40)]})
    mapper = CounterfactualMapper(probability=0.5, seed=3, id_column="id")
    parallel = dataset.map(mapper, batched=True, batch_size=7, num_proc=2)
    serial = dataset.map(mapper, batched=True, batch_size=40)
    assert parallel["text"] == serial["text"]
    assert 0 < sum(parallel["counterfactual"]) < 40
    doubled = dataset.map(CounterfactualMapper(mode="cda"), batched=True, num_proc=2)
    assert len(doubled) == 80


# --- spaCy path, with a fake pipeline that has spaCy's Doc/Token/Span interface -----------


@dataclass
class FakeToken:
    text: str
    idx: int
    tag_: str = "NN"
    dep_: str = "dep"

    @property
    def lower_(self) -> str:
        return self.text.lower()

    @property
    def is_alpha(self) -> bool:
        return self.text.isalpha()


@dataclass
class FakeSpan:
    tokens: list[FakeToken]
    label_: str

    def __iter__(self):
        return iter(self.tokens)


@dataclass
class FakeDoc:
    tokens: list[FakeToken]
    ents: list[FakeSpan] = field(default_factory=list)

    def __iter__(self):
        return iter(self.tokens)


class FakeNlp:
    """Tags 'her'/'his' from a fixed table and marks PERSON spans given as word ranges."""

    def __init__(
        self,
        pronoun_tags: dict[int, tuple[str, str]],
        persons: list[tuple[int, int]],
        organisations: tuple[tuple[int, int], ...] = (),
    ):
        self.pronoun_tags = pronoun_tags  # token index -> (tag_, dep_)
        self.persons = persons  # (first token index, end token index)
        self.organisations = organisations
        self.calls = 0

    def pipe(self, texts, batch_size=64):
        for text in texts:
            self.calls += 1
            tokens = [
                FakeToken(match.group(), match.start())
                for match in re.finditer(r"\w+|[^\w\s]", text)
            ]
            for index, (tag, dep) in self.pronoun_tags.items():
                tokens[index].tag_, tokens[index].dep_ = tag, dep
            ents = [FakeSpan(tokens[start:end], "PERSON") for start, end in self.persons]
            ents += [FakeSpan(tokens[start:end], "ORG") for start, end in self.organisations]
            yield FakeDoc(tokens, ents)


def test_spacy_tags_decide_her_and_his():
    # The rules read "saw her run" as an object (saw + bare verb); the fake tagger says the
    # possessive ("her run" = her race), and its decision wins. "his" as an attribute -> hers.
    text = "We saw her run. Mary and Jones . It is his ."
    nlp = FakeNlp({2: ("PRP$", "poss"), 11: ("PRP$", "attr")}, persons=[(5, 6)])
    substituter = CounterfactualSubstituter(analyzer=SpacyAnalyzer(nlp, "fake"))
    assert substituter.substitute(text) == "We saw his run. James and Jones . It is hers ."
    assert substituter.method == "spacy:fake"


def test_spacy_ner_decides_given_names_and_surnames():
    text = "Phoebe Thomas met Mary . Thomas left ."
    # NER: "Phoebe Thomas" is a PERSON (Thomas = surname); "Mary" is a PERSON.
    nlp = FakeNlp({}, persons=[(0, 2), (3, 4)])
    substituter = CounterfactualSubstituter(analyzer=SpacyAnalyzer(nlp, "fake"))
    out = substituter.substitute(text)
    phoebe_partner = substituter.name_map["Phoebe"]
    assert out == f"{phoebe_partner} Thomas met James . Thomas left ."


def test_spacy_name_missed_by_ner_follows_the_document():
    # NER tags only the first "Mary"; the second mention is swapped for consistency.
    nlp = FakeNlp({}, persons=[(0, 1)])
    substituter = CounterfactualSubstituter(analyzer=SpacyAnalyzer(nlp, "fake"))
    assert substituter.substitute("Mary sang . Later Mary left .") == (
        "James sang . Later James left ."
    )


def test_analysis_strips_titles_from_person_entities():
    tokens = [FakeToken("Queen", 0), FakeToken("Mary", 6), FakeToken("Tudor", 11)]
    analysis = analysis_from_doc(FakeDoc(tokens, [FakeSpan(tokens, "PERSON")]))
    assert analysis.given_names == {6}
    assert analysis.surnames == {11}


def test_edits_many_runs_the_pipeline_once_per_text():
    nlp = FakeNlp({}, persons=[])
    substituter = CounterfactualSubstituter(analyzer=SpacyAnalyzer(nlp, "fake"))
    substituter.substitute_many(["he left .", "she left ."])
    assert nlp.calls == 2


def test_auto_analyzer_falls_back_to_rules_without_spacy():
    if importlib.util.find_spec("spacy") and importlib.util.find_spec("en_core_web_sm"):
        pytest.skip("spaCy and en_core_web_sm are installed")
    assert build_substituter(analyzer="auto").method == "rules"
    with pytest.raises(CdsbiasError, match=r"spaCy|spacy"):
        build_substituter(analyzer="spacy")
    with pytest.raises(CdsbiasError, match="Unknown analyser"):
        build_substituter(analyzer="magic")


def test_spacy_surname_evidence_beats_a_lone_person_tag():
    # NER tags "Phoebe Thomas" (Thomas = surname) and, wrongly, the lone "Thomas" as a person.
    text = "Phoebe Thomas sang . Thomas left ."
    nlp = FakeNlp({}, persons=[(0, 2), (4, 5)])
    substituter = CounterfactualSubstituter(analyzer=SpacyAnalyzer(nlp, "fake"))
    assert substituter.substitute(text).endswith("Thomas sang . Thomas left .")


def test_spacy_other_entities_do_not_veto_names():
    # A small model may tag a (swapped) name as ORG; the rules still decide there.
    text = "He met Bridget . Then Jack Smith came ."
    nlp = FakeNlp({}, persons=[], organisations=((2, 3),))
    substituter = CounterfactualSubstituter(analyzer=SpacyAnalyzer(nlp, "fake"))
    assert substituter.substitute(text) == CounterfactualSubstituter().substitute(text)
    assert "Bridget" not in substituter.substitute(text)


def test_analysis_from_a_real_spacy_doc():
    """Runs where spaCy is installed (the optional extra): the real Doc/Token/Span API."""
    spacy = pytest.importorskip("spacy")
    from spacy.tokens import Span

    nlp = spacy.blank("en")
    doc = nlp("Phoebe Thomas gave her book to Mary .")
    doc[3].tag_, doc[3].dep_ = "PRP$", "poss"
    doc.ents = [Span(doc, 0, 2, label="PERSON"), Span(doc, 6, 7, label="PERSON")]
    analysis = analysis_from_doc(doc)
    assert analysis.possessive == {doc[3].idx: True}
    assert analysis.given_names == {0, doc[6].idx}
    assert analysis.surnames == {doc[1].idx}
