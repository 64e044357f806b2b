"""Fitting a post-hoc erasure on a model: fit sentences → encodings → :class:`AffineErasure`.

The one path a post-hoc method takes, whatever wires it (``posthoc_only`` or after
training): :func:`fit_posthoc` chooses sentences from the corpus
(:mod:`cdsbias.methods.fit_sentences`), encodes them with the batched encoder
(:func:`cdsbias.scoring.embeddings.encode_sentences`: deduplicated, length-sorted, padding
masked, so each row equals a one-sentence forward pass) and fits the map
(:mod:`cdsbias.methods.erasure`). The result records what the run folder needs: method,
word-list source and hash, sentences per class, per-iteration dev accuracy, rank removed,
selection, encoding and fit seconds. :func:`cdsbias.methods.head_fold.fold` then applies it.
A run fits once, on the main process of a multi-process launch (:func:`main_process_fit`).

Features, as bias-bench computes them for each method:

* SentenceDebias (``bias_bench/debias/sentence_debias.py``): the last hidden layer
  averaged over the attention mask, L2-normalised, inputs truncated to 128 tokens.
* INLP (``bias_bench/debias/inlp/context_nullspace_projection.py``): the last hidden layer
  averaged over all tokens, special tokens included, not normalised, inputs truncated to
  the model's limit. LEACE (absent from bias-bench) uses INLP's sentences and features.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from cdsbias.axes import BiasAxis
from cdsbias.errors import CdsbiasError, unknown_name_error
from cdsbias.methods.attribute_sentences import select_attribute_sentences
from cdsbias.methods.erasure import (
    ERASURE_METHODS,
    INLP,
    SENTENCE_DEBIAS,
    AffineErasure,
    group_subspace,
    leace_eraser,
)
from cdsbias.methods.fit_sentences import (
    INLP_MIN_SENTENCES_PER_CLASS,
    INLP_SENTENCES_PER_CLASS,
    WordPairs,
    binary_inlp,
    load_fit_pairs,
    select_counterfactual_sets,
    select_inlp_sentences,
)
from cdsbias.methods.inlp_fit import inlp_projection
from cdsbias.scoring.embeddings import encode_sentences

#: bias-bench's ``max_length`` for SentenceDebias's encodings (special tokens included).
SENTENCE_DEBIAS_MAX_TOKENS = 128


def clip_to_tokens(tokenizer: Any, sentences: list[str], limit: int | None) -> list[str]:
    """Each sentence cut after the last token that fits in ``limit`` (special tokens
    included), as ``truncation=True, max_length=limit`` would cut its input ids."""
    if limit is None:
        return sentences
    lengths = [len(ids) for ids in tokenizer(sentences, add_special_tokens=True)["input_ids"]]
    out = list(sentences)
    for i, length in enumerate(lengths):
        text = sentences[i]
        while length > limit:
            encoded = tokenizer(
                text, add_special_tokens=True, truncation=True, max_length=limit,
                return_offsets_mapping=True,
            )  # fmt: skip
            end = max(stop for _, stop in encoded["offset_mapping"])
            # Re-tokenising a cut text can merge pieces differently; cut once more if so.
            text = text[:end] if end < len(text) else text.rsplit(" ", 1)[0]
            length = len(tokenizer(text, add_special_tokens=True)["input_ids"])
        out[i] = text
    return out


def inlp_features(scorer: Any, sentences: list[str]) -> np.ndarray:
    """INLP's (and LEACE's) sentence features, as bias-bench's ``_extract_gender_features``
    and ``_extract_binary_features`` compute them: each sentence tokenized with the model's
    special tokens and cut to the model's limit, the encoder's last hidden layer (no LM
    head), averaged over every token (``[CLS]``/``[SEP]`` included), not normalised.

    Batched (:func:`~cdsbias.scoring.embeddings.encode_sentences`: padding masked out of
    attention and mean), so each row equals bias-bench's one-sentence forward pass to
    float32 rounding (``tests/test_inlp_parity.py``).

    Returns:
        float64 ``[len(sentences), hidden_size]``, rows in input order.
    """
    return encode_sentences(scorer, clip_to_tokens(scorer.tokenizer, sentences, scorer.max_length))


def fit_posthoc(
    scorer: Any,
    documents: Iterable[str],
    method: str,
    *,
    pairs: WordPairs | None = None,
    components: int = 1,
    iterations: int = 80,
    per_class: int = INLP_SENTENCES_PER_CLASS,
    min_per_class: int = INLP_MIN_SENTENCES_PER_CLASS,
    max_pairs: int | None = None,
    seed: int = 0,
    split_seed: int = 0,
    axis: BiasAxis | None = None,
) -> AffineErasure:
    """Fits ``method`` on sentences of ``documents`` under ``scorer.model``.

    Args:
        scorer: A :class:`~cdsbias.scoring.MaskedLMScorer` (its model's base output is
            what the erasure acts on).
        documents: Document texts of the corpus (original, not CDS-substituted), read
            lazily and only as far as needed.
        method: ``sentence_debias``, ``inlp`` or ``leace``.
        pairs: The axis's word tuples
            (:func:`~cdsbias.methods.fit_sentences.axis_fit_words`); default the gender
            pairs, :func:`load_fit_pairs` ``()``.
        components: SentenceDebias's principal components removed.
        iterations: INLP's classifiers.
        per_class: INLP/LEACE sentences per class.
        min_per_class: Fewest INLP/LEACE sentences any class may have.
        max_pairs: SentenceDebias's cap on counterfactual pairs (None: the whole corpus).
        seed: Seed of INLP's clipping (the run's seed, as bias-bench's ``--seed``).
        split_seed: Seed of INLP's train/dev split (``inlp_split_seed``; bias-bench's
            ``random_state=0`` whatever its ``--seed``).
        axis: The run's bias axis, recorded with the fit (``BiasAxis.record()``).

    Returns:
        The fitted erasure with its record filled in.

    Raises:
        CdsbiasError: An unknown method, no word pair in the corpus, too few sentences.
    """
    if method not in ERASURE_METHODS:
        raise unknown_name_error("posthoc_method", method, ERASURE_METHODS)
    pairs = pairs if pairs is not None else load_fit_pairs()
    start = time.perf_counter()
    if method == SENTENCE_DEBIAS:
        chosen = select_counterfactual_sets(documents, pairs, max_sets=max_pairs)
        counts = {"pairs" if len(pairs.groups) == 2 else "sets": len(chosen)}
        selected = time.perf_counter()
        limit = min(SENTENCE_DEBIAS_MAX_TOKENS, scorer.max_length or SENTENCE_DEBIAS_MAX_TOKENS)
        groups = [
            encode_sentences(scorer, clip_to_tokens(scorer.tokenizer, side, limit),
                             normalize=True)
            for side in chosen.sentences
        ]  # fmt: skip
        encoded = time.perf_counter()
        erasure = group_subspace(groups, components=components, names=pairs.groups)
    else:
        # bias-bench's INLP on race and religion: attribute vs neutral sentences; LEACE and
        # gender INLP: one class per group and a neutral class.
        select = select_attribute_sentences if method == INLP and binary_inlp(pairs) else (
            select_inlp_sentences
        )  # fmt: skip
        inlp_sentences = select(
            documents, pairs, per_class=per_class, min_per_class=min_per_class, seed=seed
        )
        counts = inlp_sentences.counts()
        selected = time.perf_counter()
        sentences, labels = inlp_sentences.labelled()
        features = inlp_features(scorer, sentences)
        encoded = time.perf_counter()
        y = np.asarray(labels)
        if method == INLP:
            erasure = inlp_projection(features, y, iterations=iterations, seed=split_seed)
            erasure.details["split_seed"] = split_seed
        else:
            erasure = leace_eraser(features, y)
        erasure.details["labels"] = inlp_sentences.labels
    erasure.sentences_per_class = counts
    erasure.details.update(
        word_pairs={"source": pairs.source, "hash": pairs.hash, "pairs": len(pairs.pairs)},
        select_seconds=selected - start,
        encode_seconds=encoded - selected,
    )
    if axis is not None:
        erasure.details["bias_axis"] = axis.record()
    return erasure


def main_process_fit(
    scorer: Any, texts: Callable[[], Iterable[str]], *, seed: int, main: bool
) -> Callable[..., AffineErasure]:
    """``fit(method, **arguments)`` for a run's :class:`~cdsbias.methods.PosthocContext`:
    :func:`fit_posthoc` on the corpus ``texts()``, run once, on the main process.

    Under a multi-process launch every rank would encode the same sentences and fit the
    same map; the main process fits and the others receive the erasure (accelerate's
    ``broadcast_object_list``), or the fit's error, which every rank then raises.

    Args:
        scorer: The batched scorer of the model.
        texts: Returns a fresh iterable of the corpus's document texts.
        seed: The run's seed.
        main: Whether this is the main process.
    """

    def fit(method: str, **arguments: Any) -> AffineErasure:
        from accelerate.utils import broadcast_object_list

        fitted: Any = None
        if main:
            try:
                fitted = fit_posthoc(scorer, texts(), method, seed=seed, **arguments)
            except CdsbiasError as exc:
                fitted = exc
        fitted = broadcast_object_list([fitted])[0]
        if isinstance(fitted, CdsbiasError):
            raise fitted
        return fitted

    return fit
