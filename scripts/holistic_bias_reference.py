"""Per-axis digests of HolisticBias' own sentence generator, for tests/test_bench_holistic_bias.py.

Runs ``HolisticBiasSentenceGenerator`` of facebookresearch/ResponsibleNLP (a checkout at the
commit of ``cdsbias.benchmarks.holistic_bias_data.DATASET``; needs pandas, numpy, tqdm) on
the v1.1 files and writes, per axis, the number of sentences, the number the paper's
likelihood bias scores, and the sha256 of the axis's rows (every column, tab-separated, in
the generator's order). cdsbias' generator must reproduce them byte for byte.

Usage:
    python scripts/holistic_bias_reference.py RESPONSIBLE_NLP_CHECKOUT \
        > tests/assets/holistic_bias/generator_v1.1.json
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import tempfile


def row_digest(frame) -> str:
    """sha256 of the rows as tab-separated text, every value as the generator's CSV spells it."""
    digest = hashlib.sha256()
    for row in frame.astype(str).itertuples(index=False):
        digest.update(("\t".join(row) + "\n").encode("utf-8"))
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", help="a ResponsibleNLP checkout (holds holistic_bias/)")
    args = parser.parse_args()
    sys.path.insert(0, args.checkout)
    import pandas as pd
    from holistic_bias.src.sentences import HolisticBiasSentenceGenerator

    # The generator prints its progress to stdout, where the JSON goes.
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(sys.stderr):
        HolisticBiasSentenceGenerator(tmp, "v1.1")
        frame = pd.read_csv(f"{tmp}/sentences.csv", dtype=str, keep_default_na=False)
    paper = frame["noun_phrase_type"].isin(["descriptor_noun", "noun_descriptor"]) & (
        frame["descriptor_gender"] == "(none)"
    )
    out = {
        "generator": "ResponsibleNLP holistic_bias/src/sentences.py, dataset v1.1",
        "columns": list(frame.columns),
        "n_sentences": len(frame),
        "axes": {
            axis: {
                "n_sentences": int((frame["axis"] == axis).sum()),
                "n_paper": int(((frame["axis"] == axis) & paper).sum()),
                "sha256": row_digest(frame[frame["axis"] == axis]),
            }
            for axis in sorted(frame["axis"].unique())
        },
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
