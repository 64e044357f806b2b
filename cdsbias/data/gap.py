"""The GAP corpus (Webster et al. 2018) as training data: its files and download spec.

The built-in ``gap`` training corpus reads these files (:func:`cdsbias.train.data.gap_paths`);
the training corpus code owns their spec, as a benchmark owns its data's.
"""

from __future__ import annotations

from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset

#: The GAP file of each split.
GAP_FILES = {
    "development": "gap-development.tsv",
    "test": "gap-test.tsv",
    "validation": "gap-validation.tsv",
}

#: GAP coreference (Webster et al. 2018): one upstream commit, one sha256 per file (computed from
#: the files in shared/data). ``cdsbias data fetch gap``.
DATASET = register_dataset(
    DatasetSpec(
        name="gap",
        folder="gap-coreference",
        licence="Apache-2.0",
        repository="google-research-datasets/gap-coreference",
        commit="83135f26025cdd705c04f77e940d0c9201116b80",
        files=(
            DataFile(
                "gap-development.tsv",
                "gap-development.tsv",
                "b9a01434fcf58d8c2f9bc762480c27e58ce466cf1ffe8b09cfecbc7a20d2d634",
            ),
            DataFile(
                "gap-test.tsv",
                "gap-test.tsv",
                "1c35e36d5b14f6313ec3f6cd67b275de282595dd59e59390e00cfff9897a6819",
            ),
            DataFile(
                "gap-validation.tsv",
                "gap-validation.tsv",
                "2d784f66b390404f554704b9aef6dcde8845e79dda9886b8391cf7e9a24fdb98",
            ),
        ),
    )
)
