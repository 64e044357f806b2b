"""The data files shipped inside the package, read through one place.

Sub-folders: ``becpro/`` (BEC-Pro templates, person words, professions), ``kurita/``
(Kurita et al. word lists and templates) and ``wordlists/`` (the CDS word and name pairs);
each has a README with sources and licences. Reading through
:func:`importlib.resources.files` (never a path built from ``__file__``) keeps the files
readable from an installed wheel, and lets code outside the benchmarks (the occupational
corpus of the demo) use them without importing a benchmark.
"""

from __future__ import annotations

import io
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # importlib.resources.abc is new in Python 3.11; the package supports 3.10.
    from importlib.resources.abc import Traversable

    import pandas as pd


def _traversable(*parts: str) -> Traversable:
    """The packaged file ``parts`` (relative to this folder), e.g. ``("becpro", "x.tsv")``."""
    if not parts:
        raise ValueError("name a file inside cdsbias/resources, e.g. read_text('becpro', ...)")
    node = files("cdsbias.resources")
    for part in parts:
        node = node.joinpath(part)
    return node


def read_text(*parts: str) -> str:
    """The UTF-8 text of a packaged file, e.g. ``read_text("becpro", "templates_en.txt")``."""
    return _traversable(*parts).read_text(encoding="utf-8")


def read_tsv(*parts: str) -> pd.DataFrame:
    """A packaged tab-separated file with a header row, read by pandas with its defaults."""
    import pandas as pd  # here: the CDS word lists (and so the CLI's start) need no pandas

    return pd.read_csv(io.StringIO(read_text(*parts)), sep="\t")


def resource_path(*parts: str) -> Path:
    """The file-system path of a packaged file, for readers that need a path.

    The package is installed as plain files (setuptools package data, editable or
    wheel), so the traversable is a real path; the CDS word-list readers report
    ``file:line`` against it.
    """
    return Path(str(_traversable(*parts)))


def load_professions() -> pd.DataFrame:
    """The 60 BEC-Pro professions with group and % female (BLS 2019; see becpro/README.md).

    Shared by the BEC-Pro benchmark and the generated occupational-sentences corpus
    (:mod:`cdsbias.data.occupations`), so the corpus does not import a benchmark.
    """
    return read_tsv("becpro", "professions.tsv")


__all__ = ["load_professions", "read_text", "read_tsv", "resource_path"]
