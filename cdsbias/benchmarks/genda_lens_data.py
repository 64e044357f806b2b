"""GenDa Lens' data (DaDebias/genda-lens): the Danish DaWinoBias and ABC files.

One dataset, read by two benchmarks (``dawinobias`` and ``abc``), so its download spec has
its own module, which both import.
"""

from __future__ import annotations

from cdsbias.data.fetch import DataFile, DatasetSpec, register_dataset

#: GenDa Lens (DaWinoBias and ABC): one upstream commit, one sha256 per file (computed from
#: the files in shared/data). ``cdsbias data fetch genda_lens``.
DATASET = register_dataset(
    DatasetSpec(
        name="genda_lens",
        folder="genda-lens-danish",
        licence="MIT (upstream DaWinoBias/ABC have no licence)",
        repository="DaDebias/genda-lens",
        commit="26dc297cff0566f6743f932511a4a2702eae6d17",
        files=(
            DataFile(
                "DaWinoBias_anti_stereotyped_evalda.txt",
                "genda_lens/data/DaWinoBias_anti_stereotyped_evalda.txt",
                "bc4e1f45b67609cc58b63f172c0d266a752135d6022cffac9122d29209d35458",
            ),
            DataFile(
                "DaWinoBias_pro_stereotyped_evalda.txt",
                "genda_lens/data/DaWinoBias_pro_stereotyped_evalda.txt",
                "f9a42fa1d798adb48a9c54af20e94c502bc8bb536cf75277f3e78d7e9a4f0d97",
            ),
            DataFile(
                "abc_fem_sents.txt",
                "genda_lens/data/abc_fem_sents.txt",
                "c7b4b98ebca5b8cf522f2606267bbe49dac1d4a48b1e5f42f1fedb7e564ebae1",
            ),
            DataFile(
                "abc_male_sents.txt",
                "genda_lens/data/abc_male_sents.txt",
                "129b6eb847c0109f85ef0cc8c04c83fcb3bf5d28e66dbf86bed2ca8145bc15b8",
            ),
            DataFile(
                "abc_all.txt",
                "abc-adaption/data/abc_all.txt",
                "684412e8a5b99544ae1e65f8d714084f6bddae1ba40865088b6dbacf168b89cd",
            ),
            DataFile(
                "abc_female.txt",
                "abc-adaption/data/abc_female.txt",
                "44088987108081b45b9485e57daa0eae9701aa9c79ddc084dee336630f431a8e",
            ),
            DataFile(
                "abc_male.txt",
                "abc-adaption/data/abc_male.txt",
                "b8823b169e1a844fe5a97e1eadf9eb9fb69c23347340c87aed8ea9307b2cd5ad",
            ),
            DataFile(
                "professions_to_add_abc.txt",
                "abc-adaption/data/professions_to_add_abc.txt",
                "5ecbd5fa808232e15ba97d04a0f4c9856fc0c79071b7da1fd898e50f34e11d58",
            ),
            DataFile(
                "wino_fem.txt",
                "abc-adaption/data/wino_fem.txt",
                "a2608c20c2ad298c1a993430f4f9c7a6eba61afe89fd634371f6985844e36dfa",
            ),
            DataFile(
                "wino_male.txt",
                "abc-adaption/data/wino_male.txt",
                "daec34e04f0e11f6cfea674fb6dabd24f10e73b6ac239852ebdb8d90d36b6320",
            ),
            DataFile(
                "sentence_templates_228.txt",
                "abc-adaption/output/sentence_templates_228.txt",
                "8aacc410310491c17285a6fb7fb50da1a970e79f00e8b46a5a5591ea1ebba06a",
            ),
        ),
    )
)
