"""Known-answer demo of ``cdsbias downstream``: does the demo's CDS debiasing carry?

Template biographies of 12 of the 60 occupations the demo model was pre-trained on
(:mod:`cdsbias.data.occupations`: 4 evenly spaced by U.S. share of women from each of
BEC-Pro's male, balanced and female groups). The occupations form 4 clusters of one male,
one balanced and one female occupation; each cluster has a workplace word. Half of the
biographies name the occupation ("Mary is a dental hygienist. She ..."), half only the
cluster's workplace ("Mary works at the clinic. She ..."). Every biography carries gender
cues: a first name of ``name_pairs.tsv`` and a pronoun.

* **Training split**: in each occupation the share of women is its U.S. share (rounded to
  whole biographies, no sampling noise), so within a cluster the workplace-only biographies
  of women are mostly the female occupation's and those of men the male occupation's: a
  classifier can learn the gender shortcut.
* **Test split**: every occupation half women, half men, each half half named.

The known answer is the shortcut classifier's score on the test split: right on the named
biographies; on the workplace-only ones it predicts the cluster's occupation with the most
training biographies of that gender (scrubbed: of either gender, since it cannot see one).
It gives TPR gaps of about +0.5 / 0 / −0.5 for the female / balanced / male occupation of
each cluster (GAP^RMS ≈ 0.41, r(gap, % women) ≈ +1), and 0 everywhere when scrubbed.

Two encoders are fine-tuned, each with 3 seeds: the demo's biased base model
(``cdsbias demo-model``) and its CDS fine-tuning (``recipes/demo.yaml``), in three settings:

* **unscrubbed**: the training split above;
* **scrubbed**: the same with ``scrub: true`` (names and gendered words removed,
  De-Arteaga et al.'s setting);
* **balanced training**: unscrubbed, but every occupation's training biographies half women
  (names and sentences drawn with the same seed). The fine-tuning data then holds no
  shortcut (known answer: every gap 0), so a gap here is what the encoder brings to the
  classifier: the channel through which the encoder's debiasing could carry. Its r(gap,
  % women) is read against the U.S. share (the training split's is 50 % everywhere).

The known-answer checks apply to the base model's unscrubbed and scrubbed runs; the CDS
model's numbers, and the balanced setting's, are reported as measured, since whether the
debiasing carries into the classifier is the question.

Usage (``make demo-downstream`` builds both models first):
    python scripts/demo_downstream.py --base runs/demo/base --cds runs/demo/run \\
        --out runs/demo/downstream

Writes ``OUT/unscrubbed/``, ``OUT/scrubbed/`` and ``OUT/balanced-training/``
(``cdsbias downstream`` folders), ``OUT/data/``, ``OUT/data-balanced/`` and
``OUT/table.md``; exits non-zero when the base model misses a known answer.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Each cluster's workplace: the only occupational cue of a workplace-only biography.
PLACES = ("clinic", "office", "center", "market", "studio", "agency")
#: Second sentences; each carries the gender in a pronoun (``S`` subject, ``D`` possessive).
EXTRAS = (
    "{S} has done this work for years.",
    "{S} likes {D} colleagues.",
    "{S} lives near {D} family.",
    "{S} started the job last spring.",
    "{S} is proud of {D} work.",
    "{S} works long days.",
)
PRONOUNS = {0: ("he", "his"), 1: ("she", "her")}
#: How many name pairs of ``name_pairs.tsv`` (the most frequent first) the bios use.
NAME_PAIRS = 8
#: (setting, scrub, gender shares of the training split follow the occupations'). In the
#: balanced setting the fine-tuning data holds no shortcut, so any gap is the encoder's.
SETTINGS = (
    ("unscrubbed", False, True),
    ("scrubbed", True, True),
    ("balanced training", False, False),
)


@dataclass(frozen=True)
class Occupation:
    """A demo occupation: its label, name, U.S. % women, BEC-Pro group and cluster."""

    label: int
    name: str
    percent_female: float
    group: str
    cluster: int


def pick_occupations(clusters: int = 4) -> list[Occupation]:
    """``clusters`` occupations of each BEC-Pro group, evenly spaced by share of women.

    The groups' shares do not overlap (about 1–3 %, 48–53 %, 88–99 %), so spacing within
    each group is what spreads the choice over the whole range the demo model learnt.
    Cluster ``k`` holds the ``k``-th pick of every group.
    """
    from cdsbias.resources import load_professions

    professions = load_professions()
    if not 1 <= clusters <= min(len(PLACES), 20):
        raise SystemExit(f"--clusters must be 1 to {len(PLACES)}, got {clusters}.")
    chosen = []
    for group in ("male", "balanced", "female"):
        rows = professions[professions["prof_gender"] == group]
        rows = rows.sort_values(["percent_female_us", "profession"]).reset_index(drop=True)
        spots = [round(k * (len(rows) - 1) / max(clusters - 1, 1)) for k in range(clusters)]
        for cluster, spot in enumerate(spots):
            row = rows.iloc[spot]
            chosen.append((cluster, group, str(row["profession"]), float(row["percent_female_us"])))
    chosen.sort()
    return [
        Occupation(label, name, share, group, cluster)
        for label, (cluster, group, name, share) in enumerate(chosen)
    ]


def _names() -> dict[int, list[str]]:
    """``{0: male names, 1: female names}``: the first ``NAME_PAIRS`` of ``name_pairs.tsv``."""
    from cdsbias.cds.wordlists import data_lines, resource_path

    pairs = [line.split("\t") for _, line in data_lines(resource_path("name_pairs.tsv"))]
    pairs = pairs[:NAME_PAIRS]
    return {0: [m.strip() for m, _ in pairs], 1: [f.strip() for _, f in pairs]}


def biographies(
    occupations: list[Occupation], per_occupation: int, *, training: bool, seed: int
) -> list[dict[str, Any]]:
    """``per_occupation`` biographies of each occupation, shuffled.

    Args:
        occupations: From :func:`pick_occupations`.
        per_occupation: Biographies per occupation.
        training: Women in the occupation's U.S. share (else half), the gender shortcut.
        seed: Seed of the names, sentences and order.

    Returns:
        Rows with ``hard_text``, ``profession``, ``gender`` (what ``bias_in_bios`` reads)
        and ``named`` (whether the text names the occupation; the known answer needs it).
    """
    rng = random.Random(seed)
    names = _names()
    rows = []
    for occupation in occupations:
        share = occupation.percent_female / 100 if training else 0.5
        women = round(share * per_occupation)
        for gender, count in ((1, women), (0, per_occupation - women)):
            for i in range(count):
                # Alternating within each gender keeps the named half of every
                # (occupation, gender) cell exact, so the test split is balanced in both.
                named = i % 2 == 0
                subject, possessive = PRONOUNS[gender]
                article = "an" if occupation.name[0] in "aeiou" else "a"
                first = (
                    f"is {article} {occupation.name}." if named
                    else f"works at the {PLACES[occupation.cluster]}."
                )  # fmt: skip
                second = rng.choice(EXTRAS).format(S=subject, D=possessive)
                text = f"{rng.choice(names[gender])} {first} {second[0].upper()}{second[1:]}"
                rows.append(
                    {"hard_text": text, "profession": occupation.label, "gender": gender,
                     "named": named}
                )  # fmt: skip
    rng.shuffle(rows)
    return rows


def shortcut_predictions(
    occupations: list[Occupation], train: list[dict], test: list[dict], *, scrubbed: bool
) -> list[int]:
    """The known answer: what a classifier that learnt the shortcut predicts for ``test``.

    Named biographies are classified right. A workplace-only biography gets the cluster's
    occupation with the most workplace-only training biographies of its gender (scrubbed:
    of both genders, which the scrubbed text cannot tell apart); ties go to the lower label.
    """
    cluster_of = {o.label: o.cluster for o in occupations}
    counts: Counter[tuple[int, int | None, int]] = Counter()
    for row in train:
        if not row["named"]:
            gender = None if scrubbed else row["gender"]
            counts[cluster_of[row["profession"]], gender, row["profession"]] += 1
    predictions = []
    for row in test:
        if row["named"]:
            predictions.append(row["profession"])
            continue
        cluster, gender = cluster_of[row["profession"]], None if scrubbed else row["gender"]
        members = [o.label for o in occupations if o.cluster == cluster]
        predictions.append(max(members, key=lambda label: (counts[cluster, gender, label], -label)))
    return predictions


def write_split(folder: Path, split: str, rows: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(row) for row in rows]
    (folder / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cell(metric: dict[str, Any], signed: bool = False) -> str:
    value, interval = metric.get("value"), [metric.get("ci_low"), metric.get("ci_high")]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    shown = f"{value:+.3f}" if signed else f"{value:.3f}"
    if any(v is None or math.isnan(v) for v in interval):
        return shown
    low, high = (f"{v:+.3f}" if signed else f"{v:.3f}" for v in interval)
    return f"{shown} [{low}, {high}]"


def results_table(
    occupations: list[Occupation],
    known: dict[str, dict[str, float]],
    measured: dict[str, dict[str, dict[str, Any]]],
    models: dict[str, str],
) -> str:
    """The markdown table: model × setting → accuracy, GAP^RMS, r, gaps by group."""
    header = (
        "| model | setting | accuracy | TPR gap RMS | r(gap, % women) "
        "| mean gap: female / balanced / male occupations |\n|---|---|---|---|---|---|"
    )
    from cdsbias.downstream.metrics import pearson

    lines = [header]
    groups = ("female", "balanced", "male")
    us_share = {o.label: o.percent_female for o in occupations}

    def group_gaps(gaps: dict[int, float]) -> str:
        means = []
        for group in groups:
            values = [gaps[o.label] for o in occupations if o.group == group and o.label in gaps]
            means.append(f"{sum(values) / len(values):+.3f}" if values else "—")
        return " / ".join(means)

    for setting, *_ in SETTINGS:
        answer = known[setting]
        r = answer["tpr_gap_share_r"]
        lines.append(
            f"| known answer (shortcut) | {setting} | {answer['accuracy']:.3f} "
            f"| {answer['tpr_gap_rms']:.3f} | {'—' if math.isnan(r) else f'{r:+.3f}'} "
            f"| {group_gaps(answer['gaps'])} |"
        )
    for label, model in models.items():
        for setting, *_ in SETTINGS:
            result = measured[setting][model]
            metrics = result["metrics"]
            gaps = {int(o): v["tpr_gap"] for o, v in result["per_group"].items()}
            r = _cell(metrics["tpr_gap_share_r"], True)
            if r == "—" and gaps:  # balanced training: every training share is 50 %
                labels = sorted(gaps)
                us_r = pearson([gaps[o] for o in labels], [us_share[o] for o in labels])
                r = "—" if math.isnan(us_r) else f"{us_r:+.3f} (U.S. share)"
            lines.append(
                f"| {label} | {setting} | {_cell(metrics['accuracy'])} "
                f"| {_cell(metrics['tpr_gap_rms'])} | {r} | {group_gaps(gaps)} |"
            )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="runs/demo/base", help="the demo's biased base model")
    parser.add_argument("--cds", default="runs/demo/run", help="its CDS fine-tuning")
    parser.add_argument("--out", type=Path, default=Path("runs/demo/downstream"))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--clusters", type=int, default=4, help="occupations per group")
    parser.add_argument("--train", type=int, default=160, help="training bios per occupation")
    parser.add_argument("--test", type=int, default=100, help="test bios per occupation")
    parser.add_argument("--n-resamples", type=int, default=1000)
    args = parser.parse_args()

    import pandas as pd

    from cdsbias.downstream import get_task
    from cdsbias.downstream.finetune import FinetuneConfig
    from cdsbias.downstream.metrics import tpr_gaps
    from cdsbias.downstream.runner import format_summary, run_downstream

    occupations = pick_occupations(args.clusters)
    test = biographies(occupations, args.test, training=False, seed=1)
    trains, folders = {}, {}
    for skewed in (True, False):
        # Both training splits draw names and sentences with the same seed; only the
        # genders' shares differ.
        trains[skewed] = biographies(occupations, args.train, training=skewed, seed=0)
        folders[skewed] = args.out / ("data" if skewed else "data-balanced")
        write_split(folders[skewed], "train", trains[skewed])
        write_split(folders[skewed], "test", test)
    (args.out / "data" / "occupations.json").write_text(
        json.dumps([o.__dict__ for o in occupations], indent=2) + "\n", encoding="utf-8"
    )
    print("occupations (label, % women, cluster):")
    for o in occupations:
        print(f"  {o.label:2d} {o.name:28s} {o.percent_female:5.1f}  {PLACES[o.cluster]}")

    # The demo model's learning rate scale (recipes/demo.yaml, 5e-4): bias-bench's 2e-5 is
    # tuned for bert-base and barely moves a 2-layer model in 3 epochs.
    config = FinetuneConfig(learning_rate=5e-4, epochs=3, batch_size=16, max_length=48)
    models = {"base (biased)": args.base, "CDS (recipes/demo.yaml)": args.cds}
    known: dict[str, dict[str, Any]] = {}
    measured: dict[str, dict[str, dict[str, Any]]] = {}
    for setting, scrub, skewed in SETTINGS:
        options = {"scrub": scrub, "n_resamples": args.n_resamples}
        data, train = folders[skewed], trains[skewed]
        # The known answer, scored by the task's own statistics on the same test split.
        task = get_task("bias_in_bios")(options, data)
        task.load()
        frame = pd.DataFrame(test)
        frame["prediction"] = shortcut_predictions(occupations, train, test, scrubbed=scrub)
        known[setting] = task.statistics(frame)
        known[setting]["gaps"] = tpr_gaps(
            frame["profession"], frame["prediction"], frame["gender"]
        ).gaps
        summary = run_downstream(
            list(models.values()), "bias_in_bios", args.out / setting.replace(" ", "-"),
            seeds=tuple(range(args.seeds)), options=options, data_dir=data, config=config,
        )  # fmt: skip
        print(f"## {setting}\n\n{format_summary(summary)}")
        measured[setting] = {entry["model"]: entry for entry in summary["results"]}

    table = results_table(occupations, known, measured, models)
    (args.out / "table.md").write_text(table + "\n", encoding="utf-8")
    print(table)

    base = {setting: measured[setting][args.base]["metrics"] for setting, *_ in SETTINGS}
    value = {s: {k: base[s][k]["value"] for k in base[s]} for s in base}
    answer = known["unscrubbed"]
    checks = [
        ("base, unscrubbed: GAP^RMS within 0.1 of the known answer "
         f"({answer['tpr_gap_rms']:.3f})",
         abs(value["unscrubbed"]["tpr_gap_rms"] - answer["tpr_gap_rms"]) <= 0.1,
         value["unscrubbed"]["tpr_gap_rms"]),
        ("base, unscrubbed: r(gap, % women) > 0.8", (value["unscrubbed"]["tpr_gap_share_r"]
         or -1) > 0.8, value["unscrubbed"]["tpr_gap_share_r"]),
        ("base, scrubbed: GAP^RMS < 0.1", value["scrubbed"]["tpr_gap_rms"] < 0.1,
         value["scrubbed"]["tpr_gap_rms"]),
        ("base, scrubbed: accuracy ≥ 0.5 (the named half)",
         value["scrubbed"]["accuracy"] >= 0.5, value["scrubbed"]["accuracy"]),
    ]  # fmt: skip
    print("known answers (base model):")
    for text, ok, measured_value in checks:
        shown = "nan" if measured_value is None else f"{measured_value:.3f}"
        print(f"  {'ok  ' if ok else 'MISS'} {text}: {shown}")
    cds = {s: measured[s][args.cds]["metrics"]["tpr_gap_rms"]["value"] for s, *_ in SETTINGS}
    carried = ", ".join(f"{s} {value[s]['tpr_gap_rms']:.3f} → {cds[s]:.3f}" for s, *_ in SETTINGS)
    print(f"does CDS carry? GAP^RMS base → CDS: {carried} (reported, not checked)")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
