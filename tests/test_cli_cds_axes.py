"""``cdsbias cds --axis``: rows with text and groups, the report, gender byte for byte, and
bad input (one error line, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from cdsbias.cds.axis_corpus import AxisCounterfactualMapper
from cdsbias.cli import main

TEXTS = [
    "A Muslim woman prayed in the mosque near Church Street.",
    "Nothing here at all.",
    "The Jews and Christians read the Bible; an imam and a rabbi talked. Islamic art.",
    "He met a Christian.",
]


@pytest.fixture(autouse=True)
def _private_datasets_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


def cds(*args: str | Path) -> int:
    return main(["cds", *map(str, args), "--analyzer", "rules", "--quiet"])


def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    return path


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_all_writes_each_rendering_with_its_groups_and_a_report(tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert (
        cds(corpus(tmp_path), "--axis", "religion", "--counterfactuals", "all", "--out", out) == 0
    )
    written = rows(out)
    assert len(written) == 4 + 3 * 2  # three documents name a religion: k-1 = 2 each
    assert written[1] == {
        "text": "A Jewish woman prayed in the synagogue near Church Street.",
        "counterfactual": True,
        "groups": {"jewish": "christian", "christian": "muslim", "muslim": "jewish"},
    }
    # christian -> muslim, then christian -> jewish in its noun form.
    assert [row["text"] for row in written[-2:]] == ["He met a Muslim.", "He met a Jew."]
    report = json.loads((tmp_path / "out.jsonl.report.json").read_text())
    assert report["documents_substituted"] == 3 and report["counterfactuals"] == 6
    # Per rendering: document 1 Muslim, mosque; 3 Jews, Christians, Bible, imam, rabbi;
    # 4 Christian.
    assert report["substitutions_per_group"] == {"jewish": 4, "christian": 6, "muslim": 6}
    assert report["kept"] == {"name": 1}  # Church Street
    assert report["unlisted"] == {"islamic": 1}
    assert "islamic (1)" in capsys.readouterr().out


def test_cli_rows_are_the_training_mapper_rows(tmp_path):
    out = tmp_path / "out.jsonl"
    assert cds(corpus(tmp_path), "--axis", "religion", "--seed", "4", "--out", out) == 0
    expected = AxisCounterfactualMapper("text", axis="religion", seed=4)({"text": TEXTS})
    assert [row["text"] for row in rows(out)] == expected["text"]
    assert [row["groups"] for row in rows(out)] == expected["groups"]


def test_axis_gender_is_todays_output_byte_for_byte(tmp_path):
    source = corpus(tmp_path)
    (tmp_path / "he.txt").write_text("He said his sister met John.\nShe is a nurse.\n")
    for name, extra in (("plain", []), ("axis", ["--axis", "gender"])):
        assert cds(tmp_path / "he.txt", "--out", tmp_path / f"{name}.jsonl", *extra) == 0
    assert (tmp_path / "plain.jsonl").read_bytes() == (tmp_path / "axis.jsonl").read_bytes()
    plain = (tmp_path / "plain.jsonl.report.json").read_bytes()
    assert plain == (tmp_path / "axis.jsonl.report.json").read_bytes()
    assert source.exists()


def _bad(tmp: Path) -> dict[str, tuple[list[str], str]]:
    unequal = tmp / "unequal.tsv"
    unequal.write_text("young\told\nyoung\told\nyouth\n", encoding="utf-8")
    twice = tmp / "twice.tsv"
    twice.write_text("young\told\nyoung\told\nold\taged\n", encoding="utf-8")
    empty = tmp / "empty.tsv"
    empty.write_text("", encoding="utf-8")
    broken = tmp / "broken.json"
    broken.write_text('{"age": [["young", "old"]', encoding="utf-8")
    return {
        "unknown axis": (["--axis", "relgion"], "Did you mean 'religion'"),
        "unequal tuples": (["--axis", str(unequal)], "unequal.tsv"),
        "word in two groups": (["--axis", str(twice)], "'old' is listed for group"),
        "empty file": (["--axis", str(empty)], "empty.tsv"),
        "malformed json": (["--axis", str(broken)], "broken.json"),
        "language lacks axis": (["--axis", "race", "--language", "de"], "has no 'race' axis"),
        "gender flag": (["--axis", "race", "--forms", "neutral"], "--forms shape gender CDS"),
        "counterfactuals on gender": (["--counterfactuals", "all"], "applies to axes"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "unknown axis",
        "unequal tuples",
        "word in two groups",
        "empty file",
        "malformed json",
        "language lacks axis",
        "gender flag",
        "counterfactuals on gender",
    ],
)
def test_bad_input_is_one_error_line_and_writes_nothing(tmp_path, capsys, case):
    args, message = _bad(tmp_path)[case]
    source = corpus(tmp_path)
    kept = tmp_path / "kept.jsonl"
    kept.write_text('{"text": "earlier"}\n', encoding="utf-8")
    fresh = tmp_path / "fresh.jsonl"
    for out in (kept, fresh):
        capsys.readouterr()
        assert cds(source, *args, "--out", out) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: "), err
        assert message in err
    assert kept.read_text(encoding="utf-8") == '{"text": "earlier"}\n'
    assert not fresh.exists() and not (tmp_path / "fresh.jsonl.report.json").exists()
    assert not (tmp_path / "kept.jsonl.report.json").exists()
