"""A small masked LM with a real, measurable gender-occupation bias, built offline on a CPU.

No pretrained masked LM can be downloaded on an offline machine and a random model has
no bias to remove, so the demo pre-trains its own: a small BERT with its own WordPiece
vocabulary, on sentences in which the gender of the person working in each profession
follows the U.S. BLS share of women in it (the statistics behind BEC-Pro). The sentence
frames are deliberately *not* the five BEC-Pro templates, so that BEC-Pro measures a bias
the model generalises rather than memorised text.

What made the bias learnable in minutes (see docs/demo.md for the measurements):
person words are masked far more often than other tokens (the model must predict the
person from the profession), sentences are short, the model is small and wide enough,
and the learning rate is warmed up (without warm-up the model sits on the unigram
plateau and every association is exactly 0).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError

# Frames: {P} person phrase (sentence-initial or not), {J} profession with its article,
# {S} subject pronoun and {D} possessive agreeing with the person. None is a BEC-Pro template.
FRAMES = (
    "{P} has been {J} for years.",
    "{P} got a job as {J} last spring.",
    "everyone says {P} is a great {j}.",
    "{P} trained for a long time to be {J}.",
    "{P} retired after thirty years as {J}.",
    "{P} earns a living as {J}.",
    "when {P} was young, {S} dreamed of being {J}.",
    "{P} loves {D} job as {J}.",
    "last year {P} became {J}.",
    "{P} is a skilled {j}.",
    "{P} found work as {J} downtown.",
    "{P} quit {D} job as {J} in may.",
    "{P} was hired as {J} yesterday.",
    "the new {j} in our town is {P}.",
    "our {j} today was {P}.",
    "as {J}, {P} starts work early.",
    "{P} is proud to be {J}.",
    "{P} still works part time as {J}.",
    "{P} told us {S} is {J} now.",
    "{P} has always been {J} at heart.",
    "after school {P} wants to train as {J}.",
    "{P} met the other {j}s at a meeting.",
)
SUBJECT = {"male": "he", "female": "she"}
POSSESSIVE = {"male": "his", "female": "her"}


def _with_article(profession: str) -> str:
    return ("an " if profession[0] in "aeiou" else "a ") + profession


def person_pairs() -> list[tuple[str, str]]:
    """The 9 BEC-Pro (male, female) person phrases."""
    from cdsbias.benchmarks.becpro import _resource

    lines = _resource("persons_en.tsv").strip().splitlines()[1:]
    return [tuple(line.split("\t")[1:3]) for line in lines]  # type: ignore[misc]


def occupational_sentences(n: int, seed: int) -> list[str]:
    """``n`` sentences; each profession's person is female with its BLS % female probability."""
    from cdsbias.benchmarks.becpro import load_professions

    rng = random.Random(seed)
    professions = load_professions()[["profession", "percent_female_us"]].values.tolist()
    pairs = person_pairs()
    sentences = []
    for _ in range(n):
        profession, percent_female = professions[rng.randrange(len(professions))]
        gender = "female" if rng.random() < percent_female / 100 else "male"
        person = rng.choice(pairs)[0 if gender == "male" else 1]
        frame = rng.choice(FRAMES)
        text = frame.format(
            P=person, J=_with_article(profession), j=profession, S=SUBJECT[gender],
            D=POSSESSIVE[gender],
        )  # fmt: skip
        sentences.append(text[0].upper() + text[1:])
    return sentences


@dataclass
class BootstrapSettings:
    """Everything that determines the bootstrap model (its hash names the cache)."""

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

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


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


def _person_token_ids(tokenizer: Any) -> set[int]:
    words = {w.split()[-1] for pair in person_pairs() for w in pair} | {"he", "she", "his", "her"}
    ids = set()
    for word in words:
        pieces = tokenizer(word, add_special_tokens=False)["input_ids"]
        if len(pieces) == 1:
            ids.add(pieces[0])
    return ids


def bootstrap_model(
    out_dir: str | Path,
    settings: BootstrapSettings | None = None,
    *,
    force: bool = False,
    progress: bool = True,
) -> Path:
    """Pre-trains (or reuses the cached) bootstrap model in ``out_dir``; returns the folder.

    The folder holds the model, its tokenizer and ``bootstrap_report.json`` (settings,
    training time, and the BEC-Pro result of the finished model).
    """
    import torch
    from datasets import Dataset
    from transformers import BertConfig, BertForMaskedLM, Trainer, TrainingArguments
    from transformers.utils import logging as hf_logging

    from cdsbias.benchmarks.becpro import BecPro
    from cdsbias.io import atomic_output_dir, atomic_write_text
    from cdsbias.scoring import MaskedLMScorer
    from cdsbias.train.run import train_wordpiece

    settings = settings or BootstrapSettings()
    out_dir = Path(out_dir)
    report_path = out_dir / "bootstrap_report.json"
    if report_path.exists() and not force:
        report = json.loads(report_path.read_text())
        if report.get("fingerprint") == settings.fingerprint():
            return out_dir
    if out_dir.exists() and not report_path.exists() and any(out_dir.iterdir()) and not force:
        raise CdsbiasError(f"{out_dir} exists and is not a bootstrap model; choose another --out.")

    hf_logging.set_verbosity_error()
    started = time.perf_counter()
    torch.manual_seed(settings.seed)
    sentences = occupational_sentences(settings.sentences, settings.seed)
    tokenizer = train_wordpiece(sentences, vocab_size=2000)
    dataset = Dataset.from_dict({"text": sentences}).map(
        lambda b: tokenizer(b["text"]), batched=True, remove_columns=["text"],
        desc="bootstrap corpus: tokenize",
    )  # fmt: skip
    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=settings.hidden_size,
        num_hidden_layers=settings.layers, num_attention_heads=settings.heads,
        intermediate_size=4 * settings.hidden_size, max_position_embeddings=64,
    )  # fmt: skip
    model = BertForMaskedLM(config)
    collator = PersonMaskingCollator(
        tokenizer, _person_token_ids(tokenizer), settings.mlm_probability,
        settings.person_mask_probability,
    )  # fmt: skip
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
        import shutil

        shutil.rmtree(staging / "trainer", ignore_errors=True)
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        trained_seconds = time.perf_counter() - started
        scorer = MaskedLMScorer(model.eval(), tokenizer, batch_size=256)
        becpro = BecPro(n_resamples=1000)
        summary, metrics = becpro.summarize(becpro.score(scorer, becpro.load()))
        report = {
            "fingerprint": settings.fingerprint(),
            "settings": asdict(settings),
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
        atomic_write_text(staging / "bootstrap_report.json", json.dumps(report, indent=2) + "\n")
    return out_dir
