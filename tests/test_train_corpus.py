"""Training on any non-streaming corpus: recipe keys, local files, errors, a short run."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from cdsbias.data.corpora import describe_corpus, open_corpus
from cdsbias.data.occupations import occupational_sentences
from cdsbias.errors import CdsbiasError
from cdsbias.runs.card_recipe import card_recipe
from cdsbias.runs.folder import RUN_INFO_FILE
from cdsbias.runs.points import read_points
from cdsbias.train.config import DataConfig, load_recipe
from cdsbias.train.data import load_documents
from cdsbias.train.run import main as train_main

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "recipes" / "smoke.yaml"
GAP_SAMPLE = REPO / "tests" / "assets" / "cds" / "gap_sample.tsv"

DOCS = [
    {"doc": "a", "body": "She is a nurse. Her brother is a doctor."},
    {"doc": "b", "body": "He works as an engineer and his wife is a teacher."},
    {"doc": "c", "body": "The mother asked the father for help."},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def jsonl(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", DOCS)


def documents(**values) -> dict[str, list]:
    return load_documents(DataConfig(**values)).to_dict()


# ------------------------------------------------------------------ recipe keys
def test_recipe_accepts_the_corpus_keys(jsonl):
    recipe = load_recipe(
        SMOKE, ["output_dir=x", "dataset=json", f"data_files={jsonl}", "text_column=body"]
    )
    assert recipe.data.dataset == "json"
    assert recipe.data.data_files == [str(jsonl)]
    assert recipe.data.text_column == "body"
    hub = load_recipe(
        SMOKE,
        ["output_dir=x", "dataset=Salesforce/wikitext",
         "dataset_config_name=wikitext-2-raw-v1", "dataset_split=validation"],
    )  # fmt: skip
    assert (hub.data.dataset_config_name, hub.data.dataset_split) == (
        "wikitext-2-raw-v1",
        "validation",
    )


def test_data_files_takes_a_list_and_a_glob(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", DOCS[:1])
    write_jsonl(tmp_path / "b.jsonl", DOCS[1:])
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        f"output_dir: x\ndataset: json\ntext_column: body\n"
        f"data_files: [{tmp_path / 'a.jsonl'}, {tmp_path / 'b.jsonl'}]\n"
    )
    assert len(load_recipe(recipe).data.data_files) == 2
    glob = load_recipe(SMOKE, ["output_dir=x", "dataset=json", f"data_files={tmp_path}/*.jsonl"])
    assert glob.data.data_files == [f"{tmp_path}/*.jsonl"]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["dataset=json"], "dataset: json reads local files; set data_files"),
        (["data_files=FILE"], "data_files does not apply to dataset: gap"),
        (["dataset=occupations", "data_files=FILE"], "data_files does not apply"),
        (["text_column=body"], "text_column does not apply to dataset: gap"),
        (["dataset_split=test"], "dataset_split does not apply to dataset: gap"),
        (["dataset=json", "data_files=FILE", "dataset_config_name=en"], "dataset_config_name"),
        (["dataset=json", "data_files=FILE", "splits=[test]"], "splits does not apply"),
        (["dataset=json", "data_files=MISSING/*.jsonl"], "data_files: no file matches"),
        (["dataset=json", "data_files=MISSING/c.jsonl"], "data_files: input file not found"),
        (["dataset=json", "data_files=FILE", "max_documents=0"], "max_documents must be"),
        (
            ["dataset=occupations"],  # smoke.yaml sets max_documents: 120
            r"max_documents does not apply to dataset: occupations \(occupation_sentences sets "
            r"its size\); remove it \(max_documents=null\) or set occupation_sentences\.",
        ),
    ],
)
def test_recipe_rejects_conflicting_or_missing_corpus_keys(jsonl, overrides, message):
    overrides = [
        o.replace("FILE", str(jsonl)).replace("MISSING", str(jsonl.parent / "none"))
        for o in overrides
    ]
    with pytest.raises(CdsbiasError, match=message):
        load_recipe(SMOKE, ["output_dir=x", *overrides])


def test_local_corpus_recipe_loads_with_its_launch_override(jsonl):
    path = REPO / "recipes" / "local_corpus.yaml"
    assert path.read_text().startswith("# ")
    recipe = load_recipe(path, [f"data_files={jsonl}"])
    assert (recipe.data.dataset, recipe.data.text_column) == ("json", "text")
    assert recipe.data.data_files == [str(jsonl)]


def test_builder_and_file_kind_must_agree(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("text\nShe works.\n")
    data = DataConfig(dataset="json", data_files=[str(path)])
    with pytest.raises(CdsbiasError, match=r"c\.csv holds csv data, not json.*dataset: csv"):
        load_documents(data)


# ------------------------------------------------------------------ local corpora
def test_jsonl_with_a_custom_text_column(jsonl):
    docs = documents(dataset="json", data_files=[str(jsonl)], text_column="body")
    # No id column: CDS keys each document by its text (as `cdsbias cds` does).
    assert docs == {"text": [d["body"] for d in DOCS]}


def test_an_id_column_is_kept_as_text(tmp_path):
    rows = [{"id": 7, "text": "She sings."}, {"id": 9, "text": "He sings."}]
    path = write_jsonl(tmp_path / "ids.jsonl", rows)
    assert documents(dataset="json", data_files=[str(path)]) == {
        "id": ["7", "9"],
        "text": ["She sings.", "He sings."],
    }


def test_text_files_one_document_per_line_and_max_documents(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("She is tall.\nHe is short.\nThey are here.\n", encoding="utf-8")
    assert documents(dataset="text", data_files=[str(path)], max_documents=2) == {
        "text": ["She is tall.", "He is short."],
    }


def test_csv_and_parquet(tmp_path):
    import datasets

    with open(tmp_path / "c.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["doc", "body"])
        writer.writeheader()
        writer.writerows(DOCS)
    expected = {"text": [d["body"] for d in DOCS]}
    csv_docs = documents(dataset="csv", data_files=[str(tmp_path / "c.csv")], text_column="body")
    assert csv_docs == expected
    datasets.Dataset.from_list(DOCS).to_parquet(str(tmp_path / "c.parquet"))
    parquet = documents(
        dataset="parquet", data_files=[str(tmp_path / "c.parquet")], text_column="body"
    )
    assert parquet == expected


def test_a_glob_reads_every_match_in_order(tmp_path):
    write_jsonl(tmp_path / "b.jsonl", DOCS[1:])
    write_jsonl(tmp_path / "a.jsonl", DOCS[:1])
    docs = documents(dataset="json", data_files=[f"{tmp_path}/*.jsonl"], text_column="body")
    assert docs["text"] == [d["body"] for d in DOCS]


def test_local_corpus_description_names_no_path(jsonl):
    data = DataConfig(dataset="json", data_files=[str(jsonl)], text_column="body")
    described = describe_corpus(data)
    assert described == {"datasets": [], "description": "local json files (3 documents)"}
    card = card_recipe({"dataset": "json", "data_files": [str(jsonl)], "text_column": "body"})
    assert card == {"dataset": "json", "text_column": "body"}


def test_hub_corpus_description_and_card(tmp_path):
    hub = DataConfig(dataset="someone/absent-corpus", dataset_config_name="en")
    # Offline, the count cannot be read; the id still names the corpus.
    assert describe_corpus(hub) == {
        "datasets": ["someone/absent-corpus"],
        "description": "someone/absent-corpus (en), split train",
    }
    files = DataConfig(dataset="someone/absent-corpus", data_files=["en/*.jsonl", "x.jsonl"])
    assert describe_corpus(files)["description"] == (
        "someone/absent-corpus, split train (files en/*.jsonl, x.jsonl)"
    )
    folder = DataConfig(dataset=str(tmp_path))
    assert describe_corpus(folder)["datasets"] == []
    assert str(tmp_path) not in json.dumps(describe_corpus(folder))
    assert "dataset" not in card_recipe({"dataset": str(tmp_path), "text_column": "text"})


def test_data_files_select_files_of_a_dataset_repository(tmp_path):
    # A local dataset folder stands in for a hub repository: load_dataset(path, data_files=)
    # resolves the files inside it the same way.
    repo = tmp_path / "corpus-repo"
    (repo / "en").mkdir(parents=True)
    write_jsonl(repo / "en" / "a.jsonl", DOCS[:1])
    write_jsonl(repo / "en" / "b.jsonl", DOCS[1:])
    write_jsonl(repo / "other.jsonl", [{"doc": "z", "body": "They left."}])
    overrides = ["output_dir=x", f"dataset={repo}", "data_files=en/b.jsonl", "text_column=body"]
    recipe = load_recipe(SMOKE, overrides)
    assert recipe.data.data_files == ["en/b.jsonl"]
    assert load_documents(recipe.data).to_dict() == {"text": [d["body"] for d in DOCS[1:]]}
    everything = DataConfig(dataset=str(repo), text_column="body")
    assert len(load_documents(everything)) == 4  # without data_files: every file of the repo
    recipe = load_recipe(SMOKE, [*overrides[:2], "data_files=en/*.jsonl", "text_column=body"])
    assert load_documents(recipe.data)["text"] == [d["body"] for d in DOCS]
    streamed = open_corpus(recipe.data, streaming=True)
    assert [row["body"] for row in streamed] == [d["body"] for d in DOCS]
    recipe = load_recipe(SMOKE, [*overrides[:2], "data_files=en/c.jsonl", "text_column=body"])
    with pytest.raises(CdsbiasError, match=f"could not load dataset '{repo}'"):
        load_documents(recipe.data)


# ------------------------------------------------------------------ built-in corpora
def test_gap_documents_are_the_gap_file(tmp_path):
    from cdsbias.data.fetch import get_spec

    spec = get_spec("gap")
    target = tmp_path / spec.folder / spec.file("gap-development.tsv").path
    target.parent.mkdir(parents=True)
    shutil.copy(GAP_SAMPLE, target)
    with open(GAP_SAMPLE, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    loaded = load_documents(DataConfig(data_dir=str(tmp_path), splits=["development"]))
    assert loaded.column_names == ["id", "text"]
    assert loaded.to_dict() == {"id": [r["ID"] for r in rows], "text": [r["Text"] for r in rows]}
    two = load_documents(
        DataConfig(data_dir=str(tmp_path), splits=["development"], max_documents=2)
    )
    assert two["id"] == [rows[0]["ID"], rows[1]["ID"]]
    assert describe_corpus(DataConfig())["datasets"] == ["google-research-datasets/gap"]


def test_max_documents_cuts_gap_of_occupations_plus_gap():
    recipe = load_recipe(SMOKE, ["output_dir=x", "dataset=occupations+gap"])
    assert recipe.data.max_documents == 120  # from smoke.yaml: accepted, it cuts GAP
    alone = load_recipe(SMOKE, ["output_dir=x", "dataset=occupations", "max_documents=null"])
    assert alone.data.max_documents is None


def test_occupation_documents_are_the_generated_sentences():
    loaded = load_documents(
        DataConfig(dataset="occupations", occupation_sentences=30, occupation_seed=4)
    )
    texts = occupational_sentences(30, seed=4)
    assert loaded.to_dict() == {"id": [f"occupations-{i}" for i in range(30)], "text": texts}
    assert describe_corpus(DataConfig(dataset="occupations"))["datasets"] == []


# ------------------------------------------------------------------ train.py errors
def bad_corpus_cases(tmp_path: Path) -> dict[str, tuple[list[str], str]]:
    good = write_jsonl(tmp_path / "good.jsonl", DOCS)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("She is a nurse.\nHe is a caf\xe9 owner.\n".encode("latin-1"))
    return {
        "missing column": (
            ["dataset=json", f"data_files={good}", "text_column=content"],
            "column 'content' not found; the corpus has: doc, body",
        ),
        "empty corpus": (["dataset=json", f"data_files={empty}"], "has no documents"),
        "empty glob": (
            ["dataset=json", f"data_files={tmp_path}/nothing/*.jsonl"],
            "no file matches",
        ),
        "no data_files": (["dataset=csv"], "set data_files"),
        "data_files with gap": ([f"data_files={good}"], "data_files does not apply"),
        "not utf-8": (
            ["dataset=text", f"data_files={latin}"],
            f"{latin} is not UTF-8: invalid byte at offset 27",
        ),
    }


@pytest.mark.parametrize(
    "case",
    ["missing column", "empty corpus", "empty glob", "no data_files", "data_files with gap",
     "not utf-8"],
)  # fmt: skip
def test_bad_corpus_is_one_error_line_and_writes_nothing(tmp_path, capsys, case):
    overrides, message = bad_corpus_cases(tmp_path)[case]
    out = tmp_path / "run"
    assert train_main([str(SMOKE), f"output_dir={out}", "report_to=none", *overrides]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1
    assert message in errors[0]
    assert not out.exists()


@pytest.mark.parametrize("case", ["empty glob", "no data_files", "data_files with gap"])
def test_recipe_errors_keep_an_earlier_run_even_with_overwrite(tmp_path, capsys, case):
    overrides, message = bad_corpus_cases(tmp_path)[case]
    out = tmp_path / "run"
    out.mkdir()
    (out / "bias_metrics.jsonl").write_text('{"step": 0}\n')
    argv = [str(SMOKE), f"output_dir={out}", "overwrite_output_dir=true", *overrides]
    assert train_main(argv) == 2
    assert message in capsys.readouterr().err
    assert (out / "bias_metrics.jsonl").read_text() == '{"step": 0}\n'


def test_load_time_errors_keep_an_earlier_run_even_with_overwrite(tmp_path):
    overrides, _ = bad_corpus_cases(tmp_path)["missing column"]
    out = tmp_path / "run"
    out.mkdir()
    (out / "bias_metrics.jsonl").write_text('{"step": 0}\n')
    argv = [str(SMOKE), f"output_dir={out}", "overwrite_output_dir=true", *overrides]
    assert train_main(argv) == 2
    assert (out / "bias_metrics.jsonl").read_text() == '{"step": 0}\n'


# ------------------------------------------------------------------ a short run
def test_short_training_run_on_a_local_jsonl_corpus(tmp_path):
    sentences = occupational_sentences(160, seed=3)
    rows = [{"body": " ".join(sentences[i : i + 2]), "n": i} for i in range(0, 160, 2)]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", rows)
    out = tmp_path / "run"
    code = train_main(
        [str(SMOKE), f"output_dir={out}", "dataset=json", f"data_files={corpus}",
         "text_column=body", "max_steps=2", "save_steps=2", "report_to=none"]
    )  # fmt: skip
    assert code == 0
    points = read_points(out)
    assert [p["step"] for p in points] == [0, 2]
    assert "gap_male" in points[-1]["benchmarks"]["becpro"]["metrics"]
    info_text = (out / RUN_INFO_FILE).read_text()
    info = json.loads(info_text)
    assert info["corpus"] == {"datasets": [], "description": "local json files (80 documents)"}
    assert str(tmp_path) not in info_text and "corpus.jsonl" not in info_text
    assert info["card_recipe"]["dataset"] == "json"
    assert info["card_recipe"]["text_column"] == "body"
    assert "data_files" not in info["card_recipe"]
