"""The CDS language registry, the word-set files and the corpus-language check."""

from __future__ import annotations

import warnings

import pytest

from cdsbias.cds import CounterfactualMapper, CounterfactualSubstituter, get_language
from cdsbias.cds.edits import Edit as EditsEdit
from cdsbias.cds.engine import Edit
from cdsbias.cds.languages import LANGUAGES, check_language, language_class
from cdsbias.cds.languages.base import Language
from cdsbias.cds.wordlists import load_word_sets
from cdsbias.errors import CdsbiasError


def test_registry_builds_english_and_engine_edit_still_imports():
    english = get_language("en")
    assert isinstance(english, Language) and english.code == "en"
    assert isinstance(english, CounterfactualSubstituter)
    assert english.substitute("He met his sister.") == "She met her brother."
    assert Edit is EditsEdit
    for code in LANGUAGES:
        assert language_class(code).code == code


def test_unknown_language_suggests_the_nearest():
    with pytest.raises(CdsbiasError, match=r"Unknown CDS language 'eng'\. Did you mean 'en'\?"):
        get_language("eng")
    with pytest.raises(CdsbiasError, match="Unknown CDS language"):
        CounterfactualMapper(language="xx")


def test_a_country_code_suggests_its_language(capsys):
    """Spelling alone finds no code for "dk" (as near "de" as "da"); the alias table does,
    for the languages cdsbias has, and says why. The same hint reaches the demo model's
    --language and a benchmark's language."""
    from cdsbias.cli import main

    with pytest.raises(CdsbiasError) as caught:
        get_language("dk")
    assert str(caught.value) == (
        "Unknown CDS language 'dk'. Did you mean 'da'? ('dk' is Denmark's country code; "
        "Danish is 'da'.) Available: da, de, en"
    )
    with pytest.raises(CdsbiasError, match=r"'GB'\. Did you mean 'en'\? \('gb' is"):
        get_language("GB")
    with pytest.raises(CdsbiasError, match=r"^Unknown CDS language 'se'\. Available"):
        get_language("se")  # Swedish: cdsbias has no 'sv' to suggest
    with pytest.raises(SystemExit):
        main(["demo-model", "--out", "unused", "--language", "dk"])
    assert "--language: Unknown occupational-corpus language 'dk'. Did you mean 'da'?" in (
        capsys.readouterr().err
    )
    from cdsbias.benchmarks import get_benchmark

    with pytest.raises(CdsbiasError) as caught:
        get_benchmark("dawinobias")(language="dk")
    assert str(caught.value) == (
        "Benchmark 'dawinobias' has no 'dk' data; it supports da (the default is da). Did you "
        "mean 'da'? ('dk' is Denmark's country code; Danish is 'da'.)"
    )
    with pytest.raises(CdsbiasError, match=r"supports en, de \(the default is en\)\.$"):
        get_benchmark("becpro")(language="dk")  # no Danish BEC-Pro: nothing to suggest


def test_language_whose_lists_fail_to_load_is_one_line(monkeypatch, tmp_path):
    """A module that cannot read its data gives one line naming the file."""
    import sys
    import types

    module = types.ModuleType("cdsbias_test_broken_language")

    class Broken(Language):
        code = "xx"
        name = "Broken"

        def __init__(self, *, names: bool = True) -> None:
            super().__init__(names=names)
            (tmp_path / "missing.tsv").read_text(encoding="utf-8")

        def edits(self, text, *, skipped=None):
            return []

        @property
        def known_words(self):
            return frozenset()

    module.Broken = Broken
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(LANGUAGES, "xx", f"{module.__name__}:Broken")
    with pytest.raises(CdsbiasError) as error:
        get_language("xx")
    message = str(error.value)
    assert "\n" not in message and "missing.tsv" in message and "Broken" in message


def test_word_sets_file_errors_name_file_and_line(tmp_path):
    path = tmp_path / "sets.txt"
    path.write_text("# comment\n[a]\nx y\nz\n[b]\nw\n", encoding="utf-8")
    sets = load_word_sets(path)
    assert sets["a"] == {"x", "y", "z"} and sets["b"] == {"w"}
    with pytest.raises(CdsbiasError, match=r"no \[c\] section"):
        sets["c"]
    path.write_text("x\n[a]\ny\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"sets\.txt:1: words before the first"):
        load_word_sets(path)
    path.write_text("[a]\ny\n[a]\nz\n", encoding="utf-8")
    with pytest.raises(CdsbiasError, match=r"sets\.txt:3: section \[a\] appears twice"):
        load_word_sets(path)
    path.write_bytes(b"[a]\n\xff\n")
    with pytest.raises(CdsbiasError, match=r"sets\.txt:2: not valid UTF-8"):
        load_word_sets(path)
    with pytest.raises(CdsbiasError, match="not found"):
        load_word_sets(tmp_path / "nope.txt")


def test_english_corpus_in_english_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_language(["He said she would call him."] * 50, "en") is None
        assert check_language([], "en") is None
