"""Danish CDS rules (cdsbias.cds.languages.da), the language check and ``--language da``."""

from __future__ import annotations

import itertools
import json
import warnings

import pytest

from cdsbias.cds import CounterfactualMapper, get_language
from cdsbias.cds.edits import apply_edits, map_offset
from cdsbias.cds.languages import check_language
from cdsbias.cds.languages.base import Skip
from cdsbias.cds.languages.da import genitive, load_gendered_words
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError


@pytest.fixture(scope="module")
def danish():
    return get_language("da")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "Han gav hende sin bog, og hun takkede ham.",
            "Hun gav ham sin bog, og han takkede hende.",
        ),
        ("Hans bil er rød.", "Hendes bil er rød."),
        ("Bogen er hans.", "Bogen er hendes."),
        (
            "Kongen, kongens, konger, kongerne, kongernes.",
            "Dronningen, dronningens, dronninger, dronningerne, dronningernes.",
        ),
        ("Skuespilleren og værtinden.", "Skuespillerinden og værten."),
        ("Hendes mand og hans kone.", "Hans kone og hendes mand."),
        ("En mand og en kvinde.", "En kvinde og en mand."),
        ("Prinsesses hest og prins' hund.", "Prins' hest og prinsesses hund."),
        ("Fru Jensen mødte hr. Hansen.", "Hr. Jensen mødte fru Hansen."),
        ("Dronning Margrethe", "Kong Frederik"),
        ("HAN OG HENDE", "HUN OG HAM"),
        ("gud og Gud", "gudinde og Gud"),
        ("Mandskabet i kongeriget", "Mandskabet i kongeriget"),  # only whole words
    ],
)
def test_danish_swaps(danish, source, expected):
    names = danish.name_map
    # Names: the list's partner of each name.
    expected = expected.replace("Frederik", names["Margrethe"])
    assert danish.substitute(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # "Hans" before a form of address is the possessive, anywhere in the sentence,
        # and the capitalised title after it swaps.
        ("Hans Majestæt Kongen talte.", "Hendes Majestæt Dronningen talte."),
        ("Vi mødte Hans Kongelige Højhed Prinsen.", "Vi mødte Hendes Kongelige Højhed Prinsessen."),
        ("Hendes Excellence kom sent.", "Hans Excellence kom sent."),
        ("Hans datter blev prinsesse.", "Hendes søn blev prins."),  # before a common noun
        # Capitalised mid-sentence before a listed person noun: the possessive.
        ("Vi mødte Hans søster i går.", "Vi mødte Hendes bror i går."),
        ("Hans Christian Andersen skrev.", "Helle Kirsten Andersen skrev."),  # still a name
        ("Jeg talte med Hans om det.", "Jeg talte med Helle om det."),
        # Royal and noble titles, every form.
        ("Greven, grevinden og baronerne kom.", "Grevinden, greven og baronesserne kom."),
        ("Storhertugens søn mødte lensgrevinden.", "Storhertugindens datter mødte lensgreven."),
        ("Tsaren og arveprinsen red.", "Tsarinaen og arveprinsessen red."),
        # Gendered adjectives swap together with their noun, and standing alone.
        ("En mandlig skuespiller vandt.", "En kvindelig skuespillerinde vandt."),
        ("De kvindelige værtinder smilede.", "De mandlige værter smilede."),
        ("Lægen er mandlig.", "Lægen er kvindelig."),
        # Text in capitals is swapped and written in capitals.
        ("HAN ELSKER HENDES DATTER.", "HUN ELSKER HANS SØN."),
        ("KONGEN OG DRONNINGEN KOM.", "DRONNINGEN OG KONGEN KOM."),
    ],
)
def test_titles_forms_of_address_adjectives_and_capitals(danish, source, expected):
    assert apply_edits(source, danish.edits(source)) == expected


def test_names_genitive_surnames_and_ambiguous_names(danish):
    partner = danish.name_map
    assert danish.substitute("Peters bror") == f"{partner['Peter']}s søster"
    assert danish.substitute("Per dag") == "Per dag"  # the preposition, not the name
    assert danish.substitute("Per Hansen kom.") == f"{partner['Per']} Hansen kom."
    assert danish.substitute("Hans kom hjem.") == f"{partner['Hans']} kom hjem."
    assert danish.substitute("Vi så Hans.") == f"Vi så {partner['Hans']}."
    assert danish.substitute("Hertugen af Kent") == "Hertuginden af Kent"
    no_names = get_language("da", names=False)
    assert no_names.substitute("Peter og Hans kom.") == "Peter og Hans kom."
    assert no_names.substitute("Hans bil") == "Hendes bil"


def test_unresolved_units_are_reported_as_skips(danish):
    skipped: list[Skip] = []
    text = "Vi gik over Kongens Nytorv med Han Solo."
    assert danish.edits(text, skipped=skipped) == []
    assert [(s.original, s.reason) for s in skipped] == [
        ("Kongens", "capitalised noun mid-sentence"),
        ("Han", "Han as a name"),
    ]


def test_edits_are_sorted_offsets_into_the_source(danish):
    text = "Hun og hendes søster mødte prins' søn."
    edits = danish.edits(text)
    assert all(a.end <= b.start for a, b in itertools.pairwise(edits))
    assert all(text[e.start : e.end] == e.original for e in edits)
    new = apply_edits(text, edits)
    start = text.index("søster")
    assert new[map_offset(edits, start) : map_offset(edits, start + 6, is_end=True)] == "bror"
    assert {e.kind for e in edits} == {"pronoun", "possessive", "noun"}


def test_word_list_errors_name_file_and_line(tmp_path):
    path = tmp_path / "words.tsv"
    path.write_text("konge kongen\tdronning\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"words\.tsv:1: 2 male and 1 female forms"):
        load_gendered_words(path)
    path.write_text("a\tb\nc\tb\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"words\.tsv:2: 'b' already maps to 'a' \(line 1\)"):
        load_gendered_words(path)
    path.write_text("a\tb\tsideways\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match="direction 'sideways'"):
        load_gendered_words(path)
    assert genitive("kongen") == "kongens" and genitive("prins") == "prins'"


DANISH_DOCS = ["Han sagde til hende, at hans bror var syg."] * 30
ENGLISH_DOCS = ["He told her that his brother was ill."] * 30


def test_language_check_warns_on_a_mismatch_and_names_the_key():
    with pytest.warns(UserWarning, match="looks Danish, not English.*set cds_language: da"):
        check_language(DANISH_DOCS, "en")
    with pytest.warns(UserWarning, match="looks English.*--language en"):
        check_language(ENGLISH_DOCS, "da", option="--language")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_language(DANISH_DOCS, "da") is None


def test_mapper_carries_the_language_through_workers():
    datasets = pytest.importorskip("datasets")
    corpus = datasets.Dataset.from_dict({"text": DANISH_DOCS[:1] * 4 + ["Kongen sov."] * 4})
    mapper = CounterfactualMapper(probability=1.0, language="da")
    one = corpus.map(mapper, batched=True, batch_size=3)
    two = corpus.map(mapper, batched=True, batch_size=3, num_proc=2)
    assert one["text"] == two["text"]
    assert one["text"][0] == "Hun sagde til ham, at hendes søster var syg."
    assert one["text"][-1] == "Dronningen sov."
    streamed = list(corpus.to_iterable_dataset().map(mapper, batched=True, batch_size=3))
    assert [row["text"] for row in streamed] == one["text"]
    # English stays the default and its mapper fingerprints as before (no language attribute).
    assert not hasattr(CounterfactualMapper(), "language")


def test_cli_language_da_prints_the_danish_report(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("Han kom.\nVi gik over Kongens Nytorv.\nDet regner.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["cds", str(source), "--out", str(out), "--probability", "1", "--quiet"]
    assert main([*args, "--language", "da"]) == 0
    printed = capsys.readouterr().out
    assert (
        "Danish (da): 1 of 3 substituted documents changed; swapped 1 words (pronoun 1)" in printed
    )
    assert "left unchanged as ambiguous: 1 (capitalised noun mid-sentence 1)" in printed
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["text"] == "Hun kom."
    report = json.loads((tmp_path / "out.jsonl.report.json").read_text(encoding="utf-8"))
    assert report["settings"]["language"] == "da"
    assert report["left_unchanged_by_reason"] == {"capitalised noun mid-sentence": 1}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--language", "dan"], "Unknown CDS language 'dan'. Did you mean 'da'?"),
        (["--language", "da", "--word-pairs", "x.tsv"], "replace the English lists"),
        (["--language", "da", "--analyzer", "spacy"], "decides English her/his only"),
    ],
)
def test_cli_bad_language_is_one_line_and_writes_nothing(tmp_path, capsys, extra, message):
    source = tmp_path / "in.txt"
    source.write_text("Han kom.\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["cds", str(source), "--out", str(out), "--quiet", *extra]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and "\n" not in error
    assert not out.exists()


def test_cli_non_utf8_danish_corpus_is_one_line(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_bytes(b"Han kom.\n" + "Hun gik.\n".encode("latin-1") + b"\xe6\xf8\n")
    out = tmp_path / "out.jsonl"
    assert main(["cds", str(source), "--out", str(out), "--language", "da", "--quiet"]) == 2
    error = capsys.readouterr().err.strip()
    assert "not UTF-8" in error and "line 3" in error and "\n" not in error
    assert not out.exists()


def test_model_card_names_the_language_and_its_swaps():
    from cdsbias.cds.treatment import CorpusTreatment

    english = CorpusTreatment({"cds_mode": "cda"}).card_text("GAP")
    assert english.endswith("plus a copy in which gendered words and first names were swapped "
                            "(he↔she, his↔her, John↔Mary, ...)")  # fmt: skip
    danish = CorpusTreatment({"cds_mode": "cds", "cds_language": "da", "cds_names": False})
    assert "gendered words were swapped (han↔hun, hans↔hendes, kongen↔dronningen, ...) " \
        "with the Danish rules" in danish.card_text("X")  # fmt: skip
