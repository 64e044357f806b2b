"""Known-answer demo of ``cdsbias downstream``: a gender shortcut, measured, then scrubbed.

Synthetic biographies of three occupations in which half the biographies name the
occupation ("Mary is a nurse. ...") and half do not ("Mary works at the center. ..."),
while the training split's genders are skewed: nurses 90% women, engineers 10%, teachers
50%. A classifier that learns the shortcut predicts the gender's majority occupation for
the ambiguous half, so on a gender-balanced test split the answer is known:

* TPR gap (female − male): nurse +0.5, engineer −0.5, teacher 0 (the ambiguous half of
  each gender is predicted as that gender's majority occupation), so
  GAP^RMS = sqrt((0.25 + 0.25 + 0) / 3) = 0.41 and r(gap, % women) = +1;
* with ``scrub: true`` (names and gendered words removed, De-Arteaga et al.'s scrubbed
  setting) the ambiguous biographies of women and men read the same: every gap ≈ 0.

Usage (``make demo-downstream``; a few minutes on 2 CPU cores):
    python scripts/demo_downstream.py --out runs/demo_downstream

Exits non-zero when a measured value misses its known answer.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

OCCUPATIONS = {0: ("nurse", 0.9), 1: ("engineer", 0.1), 2: ("teacher", 0.5)}
NAMES = {0: ("James", "John", "Robert", "Michael"), 1: ("Mary", "Patricia", "Linda", "Barbara")}
PRONOUNS = {0: "he", 1: "she"}
EXTRAS = ("had a good day", "wants to work", "works at the day", "is good at work")


def biographies(n: int, *, skewed: bool, seed: int) -> list[dict]:
    """``n`` biographies; ``skewed``: the training shares of women, else 50/50."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        profession = i % 3
        share = OCCUPATIONS[profession][1] if skewed else 0.5
        gender = int(rng.random() < share)
        name, pronoun = rng.choice(NAMES[gender]), PRONOUNS[gender]
        job = OCCUPATIONS[profession][0]
        first = f"{name} is a {job}." if i % 2 == 0 else f"{name} works at the center."
        text = f"{first} {pronoun} {rng.choice(EXTRAS)}."
        rows.append({"hard_text": text, "profession": profession, "gender": gender})
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/demo_downstream"))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--train", type=int, default=900)
    parser.add_argument("--test", type=int, default=600)
    args = parser.parse_args()

    from _models import tiny_masked_lm
    from tiny_models import WORDS

    from cdsbias.downstream.finetune import FinetuneConfig
    from cdsbias.downstream.runner import format_summary, run_downstream

    data = args.out / "data"
    data.mkdir(parents=True, exist_ok=True)
    for split, n, skewed, seed in (("train", args.train, True, 0), ("test", args.test, False, 1)):
        lines = [json.dumps(r) for r in biographies(n, skewed=skewed, seed=seed)]
        (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    words = [*WORDS, *(w.lower() for pair in NAMES.values() for w in pair), "center"]
    model = tiny_masked_lm("bert", args.out / "model", words=words, hidden=64, layers=2)
    config = FinetuneConfig(learning_rate=1e-3, epochs=3, batch_size=16, max_length=32)

    results = {}
    for label, scrub in (("shortcut", False), ("scrubbed", True)):
        summary = run_downstream(
            [str(model)], "bias_in_bios", args.out / label, seeds=tuple(range(args.seeds)),
            options={"scrub": scrub, "n_resamples": 500}, data_dir=data, config=config,
        )  # fmt: skip
        print(f"## {label}\n\n{format_summary(summary)}")
        results[label] = summary["results"][0]

    checks = []
    shortcut, scrubbed = results["shortcut"], results["scrubbed"]
    gaps = {int(o): v["tpr_gap"] for o, v in shortcut["per_group"].items()}
    rms = shortcut["metrics"]["tpr_gap_rms"]["value"]
    r = shortcut["metrics"]["tpr_gap_share_r"]["value"]
    checks.append(("shortcut: nurse gap ≈ +0.5", abs(gaps[0] - 0.5) <= 0.15, gaps[0]))
    checks.append(("shortcut: engineer gap ≈ -0.5", abs(gaps[1] + 0.5) <= 0.15, gaps[1]))
    checks.append(("shortcut: teacher gap ≈ 0", abs(gaps[2]) <= 0.15, gaps[2]))
    checks.append(("shortcut: GAP^RMS ≈ 0.41", abs(rms - 0.408) <= 0.1, rms))
    checks.append(("shortcut: r(gap, % women) > 0.9", r is not None and r > 0.9, r))
    scrubbed_rms = scrubbed["metrics"]["tpr_gap_rms"]["value"]
    checks.append(("scrubbed: GAP^RMS < 0.1", scrubbed_rms < 0.1, scrubbed_rms))
    accuracy = scrubbed["metrics"]["accuracy"]["value"]
    checks.append(("scrubbed: accuracy ≥ 0.5 (the named half)", accuracy >= 0.5, accuracy))
    print("known answers:")
    for text, ok, value in checks:
        print(f"  {'ok  ' if ok else 'MISS'} {text}: {value:.3f}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
