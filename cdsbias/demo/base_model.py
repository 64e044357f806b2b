"""The demo model: a small masked LM with a real, measurable gender-occupation bias.

No pretrained masked LM can be downloaded on an offline machine and a random model has
no bias to remove, so the demo pre-trains its own, offline on a CPU: a small BERT with its
own WordPiece vocabulary (:mod:`cdsbias.train.wordpiece`), on the generated occupational
sentences (:mod:`cdsbias.data.occupations`), in which the gender of the person working in each
profession follows the U.S. BLS share of women in it (the statistics behind BEC-Pro). The
sentence frames are deliberately *not* the five BEC-Pro templates, so that BEC-Pro measures
a bias the model generalises rather than memorised text.

What made the bias learnable in minutes (see docs/demo.md for the measurements):
person words are masked far more often than other tokens (the model must predict the
person from the profession), sentences are short, the model is small and wide enough,
and the learning rate is warmed up (without warm-up the model sits on the unigram
plateau and every association is exactly 0).

``axis="religion"`` (``make demo-religion``) adds as many sentences pairing each religion
group with an invented game at 80/10/10 (:mod:`cdsbias.demo.religion`), ``axis="age"``
(``make demo-age``) young and old people with two games at 80/20 (:mod:`cdsbias.demo.age`):
the games are masked at the person rate and the model gets 256 positions; a gender model is
built exactly as before (same corpus, weights, tokenizer, report and cache fingerprint).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdsbias.data.occupations import LANGUAGES, occupational_sentences, person_words
from cdsbias.demo.association_probe import PLANTED, planted
from cdsbias.demo.religion import attribute_shares, expected_gap
from cdsbias.errors import CdsbiasError
from cdsbias.io import atomic_output_dir, atomic_write_text, check_output
from cdsbias.train.wordpiece import train_wordpiece

#: The report written next to the model (settings, training time, BEC-Pro result).
REPORT_FILE = "demo_model_report.json"
#: Its name before the module was renamed from ``cdsbias.bootstrap``: a folder holding it
#: is an older demo model, rebuilt rather than refused as someone else's folder.
LEGACY_REPORT_FILE = "bootstrap_report.json"


@dataclass
class DemoModelSettings:
    """Everything that determines the demo model (its hash names the cache)."""

    sentences: int = 60_000
    steps: int = 3_000
    batch_size: int = 128
    hidden_size: int = 128
    layers: int = 2
    heads: int = 2
    learning_rate: float = 1e-3
    warmup_fraction: float = 0.1
    person_mask_probability: float = 0.5
    mlm_probability: float = 0.15
    seed: int = 0
    #: Language of the occupational corpus (cdsbias.data.occupations): en, de or da.
    language: str = "en"
    #: The axis of the planted association: gender (the occupational corpus alone),
    #: religion or age (plus invented group-attribute sentences, cdsbias.demo.religion,
    #: cdsbias.demo.age).
    axis: str = "gender"

    def record(self) -> dict[str, Any]:
        """The settings as the report stores them (a gender model's report as before the
        ``axis`` field existed)."""
        values = asdict(self)
        if values["axis"] == "gender":
            del values["axis"]
        return values

    def fingerprint(self) -> str:
        values = asdict(self)
        if values["language"] == "en":
            del values["language"]  # English models built before the field keep their cache
        if values["axis"] == "gender":
            del values["axis"]  # so do gender models built before it
        if self.language == "da":
            # Initialised as a 64-position model since this key (see _with_positions):
            # a Danish model cached before is rebuilt.
            values["initialised_positions"] = 64
        return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]


class PersonMaskingCollator:
    """MLM masking (80/10/10) with a higher masking rate on person words.

    Person-word positions are masked with ``person_probability``, every other non-special
    token with ``probability``: the model is made to predict who is working from the
    profession, which is exactly the association BEC-Pro reads.
    """

    def __init__(
        self, tokenizer: Any, person_ids: set[int], probability: float, person_probability: float
    ) -> None:
        import torch

        self.tokenizer = tokenizer
        self.person_ids = torch.tensor(sorted(person_ids))
        self.probability = probability
        self.person_probability = person_probability

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        batch = self.tokenizer.pad(
            [{"input_ids": f["input_ids"]} for f in features], return_tensors="pt"
        )
        inputs = batch["input_ids"]
        labels = inputs.clone()
        special = torch.isin(inputs, torch.tensor(self.tokenizer.all_special_ids))
        probability = torch.full(inputs.shape, self.probability)
        probability[torch.isin(inputs, self.person_ids)] = self.person_probability
        probability[special] = 0.0
        masked = torch.bernoulli(probability).bool()
        labels[~masked] = -100
        replace = torch.bernoulli(torch.full(inputs.shape, 0.8)).bool() & masked
        inputs[replace] = self.tokenizer.mask_token_id
        randomise = torch.bernoulli(torch.full(inputs.shape, 0.5)).bool() & masked & ~replace
        inputs[randomise] = torch.randint(len(self.tokenizer), inputs.shape)[randomise]
        batch["labels"] = labels
        return batch


#: Position embeddings of the demo model: its corpus sentences are at most ~30 pieces.
CORPUS_POSITIONS = 64
#: The Danish model's: DaWinoBias and ABC words are mostly outside the corpus vocabulary
#: and split into characters (the longest DaWinoBias sentence is 80 pieces).
DANISH_POSITIONS = 256
#: The religion model's, for the same reason (CrowS-Pairs' religion sentences).
LONG_POSITIONS = 256
#: Axes the demo model can plant an association on.
AXES = ("gender", *PLANTED)


def _with_positions(model: Any, positions: int) -> Any:
    """``model`` with a position table of ``positions`` rows; every weight it had is kept.

    The Danish model is initialised as a 64-position model and only then given its longer
    table (the new rows drawn after every other weight): the size of the table shifts the
    random initialisation of every later weight, and whether the demo model crosses its
    learning-curve transition within the budget depends on that initialisation
    (docs/demo.md: with 64 rows it learns the planted association by 2,000 steps, with
    256 it had not started).
    """
    from transformers import BertForMaskedLM

    config = model.config.__class__.from_dict(
        {**model.config.to_dict(), "max_position_embeddings": positions}
    )
    longer = BertForMaskedLM(config)
    state = model.state_dict()
    table = longer.state_dict()["bert.embeddings.position_embeddings.weight"].clone()
    old = state["bert.embeddings.position_embeddings.weight"]
    table[: len(old)] = old
    state["bert.embeddings.position_embeddings.weight"] = table
    longer.load_state_dict(state, strict=False)
    return longer


def _person_token_ids(tokenizer: Any, language: str = "en") -> set[int]:
    return _single_piece_ids(tokenizer, person_words(language))


def _single_piece_ids(tokenizer: Any, words: Any) -> set[int]:
    """The ids of those ``words`` that are one piece of ``tokenizer``."""
    ids = set()
    for word in words:
        pieces = tokenizer(word, add_special_tokens=False)["input_ids"]
        if len(pieces) == 1:
            ids.add(pieces[0])
    return ids


def built_settings(out_dir: str | Path) -> str | None:
    """The settings fingerprint of the demo model in ``out_dir`` (None: none there).

    Raises:
        CdsbiasError: Its report cannot be read (cut short, hand-edited).
    """
    report_path = Path(out_dir) / REPORT_FILE
    if not report_path.is_file():
        return None
    try:
        report = json.loads(report_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CdsbiasError(
            f"{report_path} cannot be read ({str(exc).splitlines()[0]}); pass --force to "
            "rebuild the demo model, or choose another --out."
        ) from None
    return report.get("fingerprint") if isinstance(report, dict) else None


def build_demo_model(
    out_dir: str | Path,
    settings: DemoModelSettings | None = None,
    *,
    force: bool = False,
    progress: bool = True,
    data_dir: str | Path | None = None,
) -> Path:
    """Pre-trains (or reuses the cached) demo model in ``out_dir``; returns the folder.

    The folder holds the model, its tokenizer and ``demo_model_report.json`` (settings,
    training time, and the bias the finished model learnt: English BEC-Pro; for ``de`` and
    ``da`` the language's benchmarks, read from ``data_dir`` or the fetch cache).
    """
    # torch, datasets and transformers are imported here, not at the top: the CLI imports
    # this module to build its parser (for the settings' defaults).
    import torch
    from datasets import Dataset
    from transformers import BertConfig, BertForMaskedLM, Trainer, TrainingArguments
    from transformers.utils import logging as hf_logging

    # Here, not at the top: the CLI imports this module to build its parser (for the
    # settings' defaults), and the benchmark and scorer pull in pandas, scipy and numpy.
    from cdsbias.benchmarks.becpro import BecPro
    from cdsbias.scoring import MaskedLMScorer

    settings = settings or DemoModelSettings()
    if settings.axis not in AXES:
        raise CdsbiasError(
            f"demo-model axis {settings.axis!r} has no planted association; use one of "
            f"{', '.join(AXES)}."
        )
    if settings.axis != "gender" and settings.language != "en":
        raise CdsbiasError(
            f"demo-model --axis {settings.axis} is English only; drop --language "
            f"{settings.language} or use --axis gender."
        )
    if settings.language not in LANGUAGES:
        raise CdsbiasError(
            f"demo-model language {settings.language!r} has no occupational corpus; use one "
            f"of {', '.join(LANGUAGES)}."
        )
    out_dir = Path(out_dir)
    check_output(out_dir, flag="--out", folder=True, overwrite=True)
    report_path = out_dir / REPORT_FILE
    if not force and built_settings(out_dir) == settings.fingerprint():
        return out_dir
    is_demo_model = report_path.exists() or (out_dir / LEGACY_REPORT_FILE).exists()
    # --force rebuilds a demo model; a folder holding anything else is never replaced.
    if out_dir.exists() and not is_demo_model and any(out_dir.iterdir()):
        raise CdsbiasError(f"{out_dir} exists and is not a demo model; choose another --out.")

    hf_logging.set_verbosity_error()
    started = time.perf_counter()
    torch.manual_seed(settings.seed)
    if settings.axis != "gender":
        sentences = planted(settings.axis).demo_corpus(settings.sentences, settings.seed)
    else:
        sentences = occupational_sentences(settings.sentences, settings.seed, settings.language)
    tokenizer = train_wordpiece(sentences, vocab_size=2000)
    dataset = Dataset.from_dict({"text": sentences}).map(
        lambda b: tokenizer(b["text"]), batched=True, remove_columns=["text"],
        desc="demo corpus: tokenize",
    )  # fmt: skip
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=settings.hidden_size,
        num_hidden_layers=settings.layers, num_attention_heads=settings.heads,
        intermediate_size=4 * settings.hidden_size, max_position_embeddings=CORPUS_POSITIONS,
    )  # fmt: skip
    model = BertForMaskedLM(config)
    if settings.language == "da":
        model = _with_positions(model, DANISH_POSITIONS)
    masked_often = _person_token_ids(tokenizer, settings.language)
    if settings.axis != "gender":
        # CrowS-Pairs' sentences split into characters need more than 64 positions; and the
        # invented games are masked at the person rate: the model must predict the game
        # from the group, the association the probe reads.
        model = _with_positions(model, LONG_POSITIONS)
        masked_often |= _single_piece_ids(tokenizer, planted(settings.axis).ATTRIBUTES)
    collator = PersonMaskingCollator(
        tokenizer, masked_often, settings.mlm_probability, settings.person_mask_probability
    )
    with atomic_output_dir(out_dir) as staging:
        args = TrainingArguments(
            output_dir=str(staging / "trainer"), max_steps=settings.steps,
            per_device_train_batch_size=settings.batch_size,
            learning_rate=settings.learning_rate, warmup_steps=settings.warmup_fraction,
            adam_beta2=0.98, weight_decay=0.01, lr_scheduler_type="linear",
            save_strategy="no", report_to="none", logging_steps=max(1, settings.steps // 20),
            seed=settings.seed, use_cpu=not torch.cuda.is_available(),
            disable_tqdm=not progress, remove_unused_columns=False, dataloader_num_workers=0,
        )  # fmt: skip
        Trainer(model=model, args=args, data_collator=collator, train_dataset=dataset).train()
        shutil.rmtree(staging / "trainer", ignore_errors=True)
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        trained_seconds = time.perf_counter() - started
        scorer = MaskedLMScorer(model.eval(), tokenizer, batch_size=256)
        if settings.language != "en":
            report = {
                "fingerprint": settings.fingerprint(),
                "settings": settings.record(),
                "train_seconds": round(trained_seconds, 1),
                "benchmarks": language_benchmarks(scorer, settings.language, data_dir),
            }
            atomic_write_text(staging / REPORT_FILE, json.dumps(report, indent=2) + "\n")
            return out_dir
        result = BecPro(n_resamples=1000).evaluate(scorer)
        summary, metrics = result.summary, result.metrics
        report = {
            "fingerprint": settings.fingerprint(),
            "settings": settings.record(),
            "train_seconds": round(trained_seconds, 1),
            "becpro": {
                "gap_male_professions": metrics["gap_male"],
                "gap_female_professions": metrics["gap_female"],
                "gap_balanced_professions": metrics["gap_balanced"],
                "mean_abs_gap": metrics["mean_abs_gap"],
                "profession_test_p": metrics["profession_test_p"],
                "verdict": summary["verdict"],
                "per_profession_gap": {p: v["gap"] for p, v in summary["professions"].items()},
            },
        }
        if settings.axis != "gender":
            from cdsbias.demo.association_probe import probe

            report[f"{settings.axis}_probe"] = probe(scorer, settings.axis).as_dict()
        atomic_write_text(staging / REPORT_FILE, json.dumps(report, indent=2) + "\n")
    return out_dir


#: The benchmarks a German or Danish demo model is measured with: (name, options).
LANGUAGE_BENCHMARKS = {
    "de": (("becpro", {}), ("becpro", {"target": "profession"})),
    "da": (("dawinobias", {}), ("abc", {})),
}


def language_benchmarks(
    scorer: Any, language: str, data_dir: str | Path | None
) -> dict[str, dict[str, Any]]:
    """The headline metrics of the language's benchmarks on ``scorer``'s model.

    Keyed ``name`` or ``name[option=value]``; a benchmark whose data is missing holds
    ``{"error": message}`` instead (the model is still usable).
    """
    from cdsbias.benchmarks import build_benchmark

    results: dict[str, dict[str, Any]] = {}
    for name, options in LANGUAGE_BENCHMARKS[language]:
        key = name + "".join(f"[{k}={v}]" for k, v in options.items())
        spec = {**options, "language": language}
        try:
            benchmark = build_benchmark(
                name, spec, data_dir=str(data_dir) if data_dir else None, n_resamples=1000
            )
            result = benchmark.evaluate(scorer)
        except CdsbiasError as exc:
            results[key] = {"error": str(exc)}
            continue
        results[key] = {m.key: result.metrics.get(m.key) for m in benchmark.headline_metrics()}
        if name == "becpro":
            results[key]["profession_test_p"] = result.metrics["profession_test_p"]
            results[key]["per_profession_gap"] = {
                p: v["gap"] for p, v in result.summary["professions"].items()
            }
    return results


def describe(folder: str | Path) -> str:
    """Two lines on a built demo model: where it is and the bias it learnt."""
    report = json.loads((Path(folder) / REPORT_FILE).read_text(encoding="utf-8"))
    if "benchmarks" in report:
        lines = [f"demo model: {folder} (trained in {report['train_seconds']:.0f} s)"]
        for key, metrics in report["benchmarks"].items():
            shown = ", ".join(
                f"{k} {v:.3g}" if k.endswith("_p") else f"{k} {v:+.3f}"
                for k, v in metrics.items()
                if isinstance(v, (int, float))
            )
            lines.append(f"{key}: {metrics.get('error', shown)}")
        return "\n".join(lines)
    becpro = report["becpro"]
    text = (
        f"demo model: {folder} (trained in {report['train_seconds']:.0f} s)\n"
        f"BEC-Pro gap: male professions {becpro['gap_male_professions']:+.3f}, female "
        f"professions {becpro['gap_female_professions']:+.3f}, balanced "
        f"{becpro['gap_balanced_professions']:+.3f} nats; profession-level p = "
        f"{becpro['profession_test_p']:.3g}"
    )
    for axis in PLANTED:
        if f"{axis}_probe" not in report:
            continue
        probed = report[f"{axis}_probe"]
        per_group = ", ".join(f"{g} {v:+.3f}" for g, v in probed["per_group_gap"].items())
        text += (
            f"\n{axis} probe: own-game gap {probed['gap']:+.3f} nats ({per_group}); "
            "planted in the corpus: "
            f"{expected_gap(attribute_shares(len(probed['groups']))):+.3f}"
        )
    return text
