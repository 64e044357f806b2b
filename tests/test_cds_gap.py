"""GAP output: offsets re-derived, labels kept, IDs marked, modes, seeds and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdsbias.cds import CounterfactualSubstituter, counterfactual_gap, format_gap, parse_gap
from cdsbias.cds.gap import COUNTERFACTUAL_SUFFIX, GAP_COLUMNS, check_offsets, read_gap
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError

ASSETS = Path(__file__).parent / "assets" / "cds"
SAMPLE = ASSETS / "gap_sample.tsv"


@pytest.fixture(scope="module")
def substituter() -> CounterfactualSubstituter:
    return CounterfactualSubstituter()


def test_every_swapped_row_passes_the_offset_check(substituter):
    table = read_gap(SAMPLE)
    output, _ = counterfactual_gap(table, substituter, probability=1.0)
    assert len(output.rows) == len(table.rows)
    for original, row in zip(table.rows, output.rows, strict=True):
        assert check_offsets(row) == []
        assert row["ID"] == original["ID"] + COUNTERFACTUAL_SUFFIX
        for column in ("A-coref", "B-coref", "URL"):
            assert row[column] == original[column]
        assert row["Text"] != original["Text"]


def test_spans_follow_the_substitution(substituter):
    table = read_gap(SAMPLE)
    output, _ = counterfactual_gap(table, substituter, probability=1.0)
    first = output.rows[0]
    assert first["Text"].startswith("James Smith met Patricia Brown")
    assert (first["Pronoun"], first["A"], first["B"]) == ("him", "James Smith", "Patricia Brown")
    assert first["Pronoun-offset"] == str(first["Text"].rindex("him"))
    fourth = output.rows[3]
    assert fourth["Pronoun"] == "HER"  # case kept in the span column too


def test_probability_zero_is_the_identity(substituter):
    table = read_gap(SAMPLE)
    output, report = counterfactual_gap(table, substituter, probability=0.0)
    assert format_gap(output) == SAMPLE.read_text(encoding="utf-8")
    assert report.to_dict()["documents_substituted"] == 0


def test_cda_keeps_each_row_and_adds_its_counterfactual(substituter):
    table = read_gap(SAMPLE)
    output, _ = counterfactual_gap(table, substituter, mode="cda", probability=0.3)
    assert len(output.rows) == 2 * len(table.rows)
    assert [row["ID"] for row in output.rows[:2]] == ["fixture-1", "fixture-1-cf"]


def test_same_seed_same_bytes_and_order_independent(substituter):
    table = read_gap(SAMPLE)
    runs = [counterfactual_gap(table, substituter, probability=0.5, seed=7)[0] for _ in range(2)]
    assert format_gap(runs[0]) == format_gap(runs[1])
    reversed_table = parse_gap(format_gap(table))
    reversed_table.rows.reverse()
    reversed_output, _ = counterfactual_gap(reversed_table, substituter, probability=0.5, seed=7)
    assert [row["Text"] for row in reversed_output.rows[::-1]] == [
        row["Text"] for row in runs[0].rows
    ]
    chosen = {
        seed: [r["ID"] for r in counterfactual_gap(table, substituter, seed=seed)[0].rows]
        for seed in range(8)
    }
    assert len({tuple(ids) for ids in chosen.values()}) > 1  # the seed matters


def test_report_counts(substituter):
    table = read_gap(SAMPLE)
    _, report = counterfactual_gap(table, substituter, probability=1.0)
    data = report.to_dict()
    assert data["pairs"]["her->him"] >= 1
    assert data["pairs"]["Mary->James"] == 1
    assert data["documents"]["fixture-2"] == {"substituted": True, "substitutions": 4}
    assert data["substitutions_total"] == sum(data["pairs"].values())


def test_report_lists_unlisted_gendered_looking_words(substituter):
    text = "ID\tText\tPronoun\tPronoun-offset\tA\tA-offset\tA-coref\tB\tB-offset\tB-coref\tURL\n"
    text += "x-1\tThe poetess met Ann, a laundress. She left.\tShe\t34\t"
    text += "Ann\t16\tTRUE\tpoetess\t4\tFALSE\tu\n"
    _, report = counterfactual_gap(parse_gap(text), substituter, probability=1.0)
    words = {entry["word"] for entry in report.to_dict()["unlisted_gendered_looking_words"]}
    assert {"poetess", "laundress"} <= words


def test_cli_writes_gap_and_report(tmp_path):
    out = tmp_path / "cf.tsv"
    assert (
        main(["cds", str(SAMPLE), "--out", str(out), "--probability", "1", "--analyzer", "rules"])
        == 0
    )
    table = read_gap(out)  # re-validates every offset
    assert all(row["ID"].endswith(COUNTERFACTUAL_SUFFIX) for row in table.rows)
    report = json.loads((tmp_path / "cf.tsv.report.json").read_text(encoding="utf-8"))
    assert report["settings"]["analyzer"] == "rules"
    assert report["documents_total"] == 5


def test_cli_no_names(tmp_path):
    out = tmp_path / "cf.tsv"
    main(
        [
            "cds",
            str(SAMPLE),
            "--out",
            str(out),
            "--probability",
            "1",
            "--no-names",
            "--analyzer",
            "rules",
        ]
    )
    assert read_gap(out).rows[0]["A"] == "Mary Smith"


HEADER = "\t".join(GAP_COLUMNS)
GOOD_ROW = "x-1\tShe saw Ann.\tShe\t0\tAnn\t8\tTRUE\tAnn\t8\tFALSE\tu"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"ID\tText\tPronoun\n", "missing GAP column(s): Pronoun-offset, A, A-offset"),
        (HEADER.encode() + b"\n", "has a header but no rows"),
        (
            (HEADER + "\n" + GOOD_ROW + "\n").encode().replace(b"Ann.", b"Ann\xff"),
            "not valid UTF-8",
        ),
        ((HEADER + "\nx-1\tShe saw Ann.\tShe\n").encode(), ":2: expected 11 tab-separated fields"),
        (
            (HEADER + "\n" + GOOD_ROW.replace("\t8\tTRUE", "\t3\tTRUE")).encode(),
            ":2: A 'Ann' is not at A-offset 3",
        ),
        (
            (HEADER + "\n" + GOOD_ROW.replace("\t0\t", "\tzero\t")).encode(),
            "Pronoun-offset 'zero' is not an integer",
        ),
    ],
)
def test_bad_gap_input_fails_cleanly(tmp_path, capsys, content, message):
    source = tmp_path / "in.tsv"
    source.write_bytes(content)
    out = tmp_path / "out.tsv"
    assert main(["cds", str(source), "--out", str(out), "--analyzer", "rules"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: ") and message in error
    assert error.count("\n") == 1
    assert not out.exists() and list(tmp_path.iterdir()) == [source]


@pytest.mark.parametrize("probability", ["-0.1", "1.5", "nan"])
def test_probability_outside_unit_interval(tmp_path, capsys, probability):
    out = tmp_path / "out.tsv"
    assert main(["cds", str(SAMPLE), "--out", str(out), "--probability", probability]) == 2
    assert "--probability must be in [0, 1]" in capsys.readouterr().err
    assert not out.exists()


def test_malformed_word_list_on_the_command_line(tmp_path, capsys):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("actor\tactress\nbroken line\n", encoding="utf-8")
    out = tmp_path / "out.tsv"
    assert main(["cds", str(SAMPLE), "--out", str(out), "--word-pairs", str(pairs)]) == 2
    assert f"{pairs}:2:" in capsys.readouterr().err
    assert not out.exists()


def test_missing_input_file(tmp_path, capsys):
    assert main(["cds", str(tmp_path / "absent.tsv"), "--out", str(tmp_path / "o.tsv")]) == 2
    assert "not found" in capsys.readouterr().err


def test_parse_gap_rejects_missing_columns_as_library_error():
    with pytest.raises(CdsbiasError, match="missing GAP column"):
        parse_gap("ID\tText\n1\tx\n")
