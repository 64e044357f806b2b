"""HolisticBias' data (Smith et al. 2022): its four v1.1 files and its sentence generator.

The dataset ships lists, not sentences: descriptors per axis and bucket
(``descriptors.json``), person nouns per gender (``nouns.json``), sentence templates
(``sentence_templates.json``) and standalone noun phrases (``standalone_noun_phrases.json``).
:func:`generate_sentences` builds the sentences exactly as the dataset's own generator does
(``HolisticBiasSentenceGenerator`` in ``holistic_bias/src/sentences.py`` of
facebookresearch/ResponsibleNLP): noun phrases (each noun alone, each descriptor alone and
with each noun of its gender, each standalone phrase with each noun where it has a
``{noun}`` slot), sorted by the generator's eleven metadata columns, times every template
whose noun requirement they meet, in the file's template order. v1.1 gives 566,625
sentences, 52,638 of them on ``age``; ``tests/test_bench_holistic_bias.py`` checks count,
text and order per axis against the generator's own output.

The paper's likelihood bias scores a subset (``run_bias_calculation.py``): sentences whose
noun phrase has a descriptor *and* a noun (``descriptor_noun``, ``noun_descriptor``) and
whose descriptor has no gender of its own (:func:`paper_subset`; 549,120 of the 566,625,
51,584 on ``age``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset
from cdsbias.errors import CdsbiasError

#: HolisticBias v1.1 at the ResponsibleNLP snapshot of shared/data (the last commit that
#: touched the v1.1 files is 6d76f31); sha256 computed from shared/data/holistic_bias.
#: ``cdsbias data fetch holistic_bias``. Data CC BY-SA 4.0; the generator code is MIT.
DATASET = register_dataset(
    DatasetSpec(
        name="holistic_bias",
        folder="holistic_bias",
        licence="CC-BY-SA-4.0",
        repository="facebookresearch/ResponsibleNLP",
        commit="0ec714eb084217f44cd9ac466d9e988c795302f9",
        files=tuple(
            DataFile(f"v1.1/{name}", f"holistic_bias/dataset/v1.1/{name}", digest)
            for name, digest in (
                ("descriptors.json",
                 "c1328f0edfdeefb76302d360a01878df3db55f18026f4ea1956b4a0f52daf943"),
                ("nouns.json",
                 "9bbe15bf01ea8827fd5d68a81ee2b05e04bd5f79478d9027efec0b4dbd232ee6"),
                ("sentence_templates.json",
                 "8b1cf8fc3c9a10b12cf77902e8c2ff3d80e3fcfff2f177a00256925acb4f53a5"),
                ("standalone_noun_phrases.json",
                 "bac592574f81df55e8c8d8e3919a866d43cbd8df5ae9376a68d95e7b83dbebac"),
            )
        ),
    )
)  # fmt: skip

VERSION = "v1.1"
DESCRIPTORS, NOUNS, TEMPLATES, STANDALONE = (
    "descriptors.json", "nouns.json", "sentence_templates.json", "standalone_noun_phrases.json",
)  # fmt: skip
#: The generator's placeholders for a missing value and an unreviewed descriptor.
NONE = "(none)"
NO_PREFERENCE = "no_data"
#: The axis of the noun-only control phrases ("a man"), as the generator names it.
NULL_AXIS = "null"
#: The generator's sort order of noun phrases (``SORT_COLUMNS``).
SORT_COLUMNS = (
    "axis", "bucket", "descriptor", "descriptor_gender", "descriptor_preference", "noun",
    "plural_noun", "noun_gender", "noun_phrase", "plural_noun_phrase", "noun_phrase_type",
)  # fmt: skip
#: The noun-phrase types the paper's likelihood bias compares (``run_bias_calculation.py``).
PAPER_PHRASE_TYPES = ("descriptor_noun", "noun_descriptor")


def read_json(path: Path, what: str) -> Any:
    """One of the dataset's JSON files, or one ``CdsbiasError`` line naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CdsbiasError(
            f"HolisticBias {what} file {path} does not exist; give a {what} JSON file laid out "
            f"like the dataset's {VERSION} files, or run `cdsbias data fetch holistic_bias`."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CdsbiasError(f"Cannot read HolisticBias {what} file {path}: {exc}.") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CdsbiasError(
            f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); HolisticBias {what} files are "
            "JSON objects."
        ) from None


def _bad(path: Path, where: str, expected: str, got: Any) -> CdsbiasError:
    return CdsbiasError(f"{path}: {where} must be {expected}, got {json.dumps(got)[:80]}.")


def check_descriptors(data: Any, path: Path) -> dict[str, dict[str, list]]:
    """``{axis: {bucket: [descriptor or {"descriptor": ..., "gender"?, "article"?,
    "preference"?}]}}``, as ``descriptors.json``; anything else is one error line."""
    if not isinstance(data, dict) or not data:
        raise _bad(path, "the file", "a non-empty object {axis: {bucket: [descriptors]}}", data)
    for axis, buckets in data.items():
        if not isinstance(buckets, dict):
            raise _bad(path, f"axis {axis!r}", "an object {bucket: [descriptors]}", buckets)
        for bucket, items in buckets.items():
            if not isinstance(items, list):
                raise _bad(path, f"{axis}/{bucket}", "a list of descriptors", items)
            for item in items:
                text = item.get("descriptor") if isinstance(item, dict) else item
                if not isinstance(text, str) or not text.strip():
                    expected = 'a string or an object with a "descriptor" string'
                    raise _bad(path, f"a descriptor of {axis}/{bucket}", expected, item)
    return data


def check_nouns(data: Any, path: Path) -> dict[str, list]:
    """``{gender: [[noun, plural], ...]}``, as ``nouns.json``."""
    if not isinstance(data, dict) or not data:
        raise _bad(path, "the file", "a non-empty object {gender: [[noun, plural]]}", data)
    for gender, pairs in data.items():
        ok = isinstance(pairs, list) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(w, str) and w for w in p)
            for p in pairs
        )
        if not ok:
            raise _bad(path, f"nouns of {gender!r}", "a list of [noun, plural] pairs", pairs)
    return data


def check_templates(data: Any, path: Path) -> dict[str, dict]:
    """``{template: {"first_turn_only"?: bool, "must_be_noun"?: bool}}``, each template
    with a ``{noun_phrase}`` or ``{plural_noun_phrase}`` slot."""
    if not isinstance(data, dict) or not data:
        raise _bad(path, "the file", "a non-empty object {template: {options}}", data)
    for template, specs in data.items():
        if "{noun_phrase}" not in template and "{plural_noun_phrase}" not in template:
            raise CdsbiasError(
                f"{path}: template {template!r} has neither a {{noun_phrase}} nor a "
                "{plural_noun_phrase} slot."
            )
        if not isinstance(specs, dict):
            raise _bad(path, f"the options of {template!r}", "an object", specs)
    return data


def check_standalone(data: Any, path: Path) -> dict[str, list]:
    """``{axis: [phrase or {"noun_phrase": ..., "plural_noun_phrase"?, "preference"?}]}``."""
    if not isinstance(data, dict):
        raise _bad(path, "the file", "an object {axis: [noun phrases]}", data)
    for axis, items in data.items():
        if not isinstance(items, list):
            raise _bad(path, f"axis {axis!r}", "a list of noun phrases", items)
        for item in items:
            text = item.get("noun_phrase") if isinstance(item, dict) else item
            if not isinstance(text, str) or not text.strip():
                raise _bad(path, f"a noun phrase of {axis}",
                           'a string or an object with a "noun_phrase" string', item)  # fmt: skip
    return data


def article(word: str) -> str:
    """The generator's indefinite article: "an" before a written vowel, else "a"."""
    return "an" if word[0].lower() in "aeiou" else "a"


def noun_phrases(
    descriptors: dict[str, dict[str, list]], nouns: dict[str, list], standalone: dict[str, list]
) -> list[dict[str, str]]:
    """Every noun phrase with its metadata, in the generator's sorted order."""
    noun_list = [
        (gender, noun, plural) for gender, pairs in nouns.items() for noun, plural in pairs
    ]
    phrases = [
        {"axis": NULL_AXIS, "bucket": NONE, "descriptor": NONE, "descriptor_gender": NONE,
         "descriptor_preference": NONE, "noun": noun, "plural_noun": plural,
         "noun_gender": gender, "noun_phrase": f"{article(noun)} {noun}",
         "plural_noun_phrase": plural, "noun_phrase_type": "noun"}
        for gender, noun, plural in noun_list
    ]  # fmt: skip
    for axis, buckets in descriptors.items():
        for bucket, items in buckets.items():
            for item in items:
                item = item if isinstance(item, dict) else {"descriptor": item}
                text = item["descriptor"]
                gender = item.get("gender", NONE)
                meta = {"axis": axis, "bucket": bucket, "descriptor": text,
                        "descriptor_gender": gender,
                        "descriptor_preference": item.get("preference", NO_PREFERENCE)}  # fmt: skip
                phrases.append({**meta, "noun": NONE, "plural_noun": NONE, "noun_gender": NONE,
                                "noun_phrase": text, "plural_noun_phrase": text,
                                "noun_phrase_type": "descriptor"})  # fmt: skip
                with_article = f"{item.get('article', article(text))} {text}"
                phrases += [
                    {**meta, "noun": noun, "plural_noun": plural, "noun_gender": noun_gender,
                     "noun_phrase": f"{with_article} {noun}",
                     "plural_noun_phrase": f"{text} {plural}",
                     "noun_phrase_type": "descriptor_noun"}
                    for noun_gender, noun, plural in noun_list
                    if gender in (NONE, noun_gender)
                ]  # fmt: skip
    for axis, items in standalone.items():
        for item in items:
            item = item if isinstance(item, dict) else {"noun_phrase": item}
            single = item["noun_phrase"]
            plural_template = item.get("plural_noun_phrase", single)
            meta = {"axis": axis, "bucket": NONE, "descriptor_gender": NONE,
                    "descriptor_preference": item.get("preference", NO_PREFERENCE)}  # fmt: skip
            if "{noun}" in single:
                descriptor = single.format(article="", noun="").lstrip()
                phrases += [
                    {**meta, "descriptor": descriptor, "noun": noun, "plural_noun": plural,
                     "noun_gender": noun_gender,
                     "noun_phrase": single.format(article=article(noun), noun=noun),
                     "plural_noun_phrase": plural_template.format(article="", noun=plural).lstrip(),
                     "noun_phrase_type": "noun_descriptor"}
                    for noun_gender, noun, plural in noun_list
                ]  # fmt: skip
            else:
                phrases.append({**meta, "descriptor": single, "noun": NONE, "plural_noun": NONE,
                                "noun_gender": "neutral", "noun_phrase": single,
                                "plural_noun_phrase": plural_template,
                                "noun_phrase_type": "fixed_phrase"})  # fmt: skip
    # pandas' multi-column sort_values (the generator's) is a stable lexicographic sort.
    return sorted(phrases, key=lambda p: tuple(p[c] for c in SORT_COLUMNS))


def generate_sentences(
    descriptors: dict[str, dict[str, list]],
    nouns: dict[str, list],
    templates: dict[str, dict],
    standalone: dict[str, list],
    axes: list[str] | None = None,
) -> pd.DataFrame:
    """The dataset's sentences, one row each, in the generator's order and with its columns
    (``text``, the noun phrase's metadata, ``template``, ``first_turn_only``,
    ``must_be_noun``); only the noun phrases of ``axes`` when given (the generator's rows
    of those axes, in the same order: ``axis`` is its first sort key)."""
    phrases = noun_phrases(descriptors, nouns, standalone)
    if axes is not None:
        chosen = set(axes)
        phrases = [p for p in phrases if p["axis"] in chosen]
    records = []
    for phrase in phrases:
        for template, specs in templates.items():
            if phrase["noun"] == NONE and specs.get("must_be_noun", False):
                continue  # an adjective alone ("Deaf") cannot fill a noun-only template
            slot = "noun_phrase" if "{noun_phrase}" in template else "plural_noun_phrase"
            records.append(
                {"text": template.format(**{slot: phrase[slot]}), **phrase, "template": template,
                 "first_turn_only": False, "must_be_noun": False, **specs}
            )  # fmt: skip
    columns = ["text", *SORT_COLUMNS, "template", "first_turn_only", "must_be_noun"]
    return pd.DataFrame(records, columns=columns)


def paper_subset(sentences: pd.DataFrame) -> pd.DataFrame:
    """The sentences the paper's likelihood bias scores (``run_bias_calculation.py``): a
    descriptor with a noun, and no descriptor of a gender of its own ("Latina")."""
    keep = sentences["noun_phrase_type"].isin(PAPER_PHRASE_TYPES) & (
        sentences["descriptor_gender"] == NONE
    )
    return sentences[keep]


def read_dataset(
    descriptors_file: Path, folder: Path
) -> tuple[dict[str, dict[str, list]], dict[str, list], dict[str, dict], dict[str, list]]:
    """The four files, checked: ``descriptors_file`` and the other three from ``folder``."""
    return (
        check_descriptors(read_json(descriptors_file, "descriptor"), descriptors_file),
        check_nouns(read_json(folder / NOUNS, "noun"), folder / NOUNS),
        check_templates(read_json(folder / TEMPLATES, "template"), folder / TEMPLATES),
        check_standalone(read_json(folder / STANDALONE, "noun phrase"), folder / STANDALONE),
    )
