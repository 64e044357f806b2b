"""Context-Debias: the loss of Kaneko & Bollegala (2021, EACL), "Debiasing Pre-trained
Contextualised Embeddings", as terms the Trainer adds in ``compute_loss``.

For attribute classes ``a`` (male, female words) and stereotype words ``t`` (professions)::

    v_i(a)  = mean over the attribute sentences of class a of E_i(a, x)        (fixed)
    L_debias   = Σ_a  mean_{t, x, i ∈ layers}  ⟨E_i(t, x; θ), v_i(a)⟩²
    L_preserve = mean_{x ∈ attribute sentences, w ∈ x, i ∈ all layers}
                   mean_h (E_i(w, x; θ) − E_i(w, x; θ_original))²
    loss = α · L_debias + β · L_preserve  (+ mlm_weight · the batch's MLM loss)

``E_i(w, x)`` is the hidden state of word ``w`` (mean over its pieces) in sentence ``x`` at
layer ``i``; the layers are the encoder's ``hidden_states`` (the embedding output, then every
transformer layer). Every choice below is read from their ``src/run_debias_mlm.py`` and
``script/debias.sh`` (kanekomasahiro/context-debias):

* α = 0.2, β = 0.8 (``--weighted_loss 0.2 0.8``); the inner product is squared
  (``--square_loss``).
* ``layers``: ``all`` (every entry of ``hidden_states``, the default), ``first`` (entry 0, the
  embedding output) or ``last``; the preservation term always spans all layers, as theirs.
* ``level``: ``token`` (the default; the stereotype word's state) or ``sentence`` (every
  token of the stereotype sentence against ``v``).
* The attribute vectors are computed once, with the model as it is when
  :meth:`ContextDebiasLoss.prepare` runs, under ``torch.no_grad`` in eval mode (theirs at each
  epoch's start; call :meth:`ContextDebiasLoss.refresh_attribute_vectors` for that).
* The original states come from the model before training, in eval mode (their separate
  ``original_model``): for a peft model, the same model inside ``disable_adapter()``; for the
  bottleneck adapter, inside :func:`cdsbias.methods.bottleneck.disabled_adapters`; for full
  fine-tuning, a frozen deep copy whose size is logged — of the run's original model, given
  separately when a resumed run's model holds its checkpoint's weights. The copy follows the
  trained model to the device and dtype the Trainer places it on (it is made before).

Deviations, each deliberate (their code's quirks, not reproduced):

* They square the *batch mean* of the inner products (``mean(⟨h, v⟩) ** 2``), so opposite
  signs cancel; here the mean of the squares, the paper's Eq. (1).
* They pad without an attention mask and average over padding; here padded positions are
  masked out of attention and of every mean.
* For a multi-piece word they index pieces off by one and divide by the padded width; here
  the mean over the word's own pieces.
* They train on one batch kind per step (stereotype, or one attribute class, at random);
  here every step has both terms: one stereotype batch and one attribute batch (classes
  mixed), so both can be logged at every step.
* An optional MLM term (``mlm_weight``, default 0 as theirs) lets the Trainer keep its
  masked-LM loss on its own batch.
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, Literal

from cdsbias.errors import CdsbiasError
from cdsbias.methods.context_debias_data import (
    ContextDebiasExamples,
    Example,
    build_examples,
    default_attribute_words,
    default_stereotype_words,
)

logger = logging.getLogger(__name__)

LAYERS = ("all", "first", "last")
LEVELS = ("token", "sentence")


def unwrapped(model: Any) -> Any:
    """The model inside ``DistributedDataParallel``-style wrappers (``.module``)."""
    while hasattr(model, "module") and hasattr(model.module, "config"):
        model = model.module
    return model


def masked_lm_of(model: Any) -> Any:
    """The ``*ForMaskedLM`` inside wrappers and a peft model (the model itself otherwise)."""
    model = unwrapped(model)
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def hidden_states(model: Any, input_ids: Any, attention_mask: Any) -> Any:
    """``[batch, tokens, layers + 1, hidden]``: the encoder's embedding output and every
    layer's output (the masked-LM head is not run)."""
    import torch

    encoder = masked_lm_of(model).base_model
    out = encoder(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    return torch.stack(out.hidden_states, dim=2)


def _model_bytes(model: Any) -> int:
    tensors = [*model.parameters(), *model.buffers()]
    return sum(t.numel() * t.element_size() for t in tensors)


@contextmanager
def _eval_mode(model: Any) -> Iterator[None]:
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


class ContextDebiasLoss:
    """Context-Debias's two terms for a Trainer's ``compute_loss`` (see the module docstring).

    Use::

        loss_fn = ContextDebiasLoss().prepare(model, tokenizer, corpus_lines)
        terms = loss_fn.loss_terms(model)          # {"debias": ..., "preserve": ...}
        loss = loss_fn.total(terms, outputs.loss)  # + mlm_weight * MLM loss

    Args:
        alpha: Weight of the debiasing term (0.2).
        beta: Weight of the preservation term (0.8).
        layers: ``all``, ``first`` or ``last`` (the debiasing term's layers).
        level: ``token`` or ``sentence``.
        mlm_weight: Weight of the Trainer's MLM loss in :meth:`total` (0: theirs has none).
        attribute_words: One word list per class; default the project's gendered pairs.
        stereotype_words: Default the BEC-Pro professions.
        batch_size: Sentences per batch of each term (their 32).
        max_words: Longest corpus line used, in words (their 128).
        max_per_kind: Cap on the sentences kept per kind (None: all).
        seed: Order of the batches.

    Raises:
        CdsbiasError: A bad setting.
    """

    def __init__(
        self,
        *,
        alpha: float = 0.2,
        beta: float = 0.8,
        layers: Literal["all", "first", "last"] = "all",
        level: Literal["token", "sentence"] = "token",
        mlm_weight: float = 0.0,
        attribute_words: Sequence[Iterable[str]] | None = None,
        stereotype_words: Iterable[str] | None = None,
        batch_size: int = 32,
        max_words: int = 128,
        max_per_kind: int | None = None,
        seed: int = 42,
    ) -> None:
        if layers not in LAYERS:
            raise CdsbiasError(f"context_debias_layers must be one of {LAYERS}, got '{layers}'.")
        if level not in LEVELS:
            raise CdsbiasError(f"context_debias_level must be one of {LEVELS}, got '{level}'.")
        for name, value in (("alpha", alpha), ("beta", beta), ("mlm_weight", mlm_weight)):
            if not value >= 0:
                raise CdsbiasError(f"context_debias_{name} must be >= 0, got {value}.")
        if batch_size < 1:
            raise CdsbiasError(f"context_debias_batch_size must be >= 1, got {batch_size}.")
        self.alpha, self.beta, self.mlm_weight = float(alpha), float(beta), float(mlm_weight)
        self.layers, self.level = layers, level
        self.attribute_words = [list(w) for w in (attribute_words or default_attribute_words())]
        self.stereotype_words = list(stereotype_words or default_stereotype_words())
        self.batch_size, self.max_words, self.max_per_kind = batch_size, max_words, max_per_kind
        self._random = random.Random(seed)
        self.examples = ContextDebiasExamples()
        self.vectors: Any = None
        #: Bytes of the frozen copy of the original model (0 when an adapter is switched off).
        self.original_bytes = 0
        self._original: Any = None
        self._pad_id = 0
        self._queues: dict[str, list[Example]] = {}

    # ------------------------------------------------------------------ set-up
    def prepare(
        self,
        model: Any,
        tokenizer: Any,
        sentences: Iterable[str],
        *,
        max_length: int | None = None,
        original: Callable[[], Any] | None = None,
    ) -> ContextDebiasLoss:
        """Selects the example sentences, sets up the original states, computes ``v``.

        ``max_length`` is the longest input the model takes (the caller reads it with
        :func:`cdsbias.scoring.encoding.input_limit`); longer sentences are skipped.
        ``original`` loads the run's original model when ``model`` is not it (a resumed
        full-weights run holds its checkpoint's weights); it is called only where a frozen
        model is needed (an adapter switched off needs none), and what it loads becomes the
        frozen model of the preservation term and gives ``v``, so both are what the
        uninterrupted run had.

        Raises:
            CdsbiasError: No stereotype sentence, or an attribute class without a sentence
                (the counts found are named).
        """
        from cdsbias.methods.bottleneck import adapters

        self._pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.examples = build_examples(
            sentences, tokenizer, self.attribute_words, self.stereotype_words,
            max_words=self.max_words, max_length=max_length,
            max_per_kind=self.max_per_kind,
        )  # fmt: skip
        if not self.examples.stereotype or not all(self.examples.attribute):
            raise CdsbiasError(
                "Context-Debias needs stereotype sentences and sentences of every attribute "
                f"class; the corpus gave {self.examples.counts()}. Use a larger corpus or "
                "other word lists."
            )
        model = unwrapped(model)
        if hasattr(model, "disable_adapter"):
            self._original = "peft"
        elif adapters(model):
            self._original = "bottleneck"
        else:
            if original is not None:  # a resumed run's original, loaded afresh: no copy
                frozen = masked_lm_of(original())
            else:
                frozen = copy.deepcopy(masked_lm_of(model))
            frozen = frozen.eval().requires_grad_(False)
            self._original = frozen
            self.original_bytes = _model_bytes(frozen)
            logger.info(
                "Context-Debias keeps a frozen copy of the original model for the "
                "preservation term: %d bytes (%.1f MB).",
                self.original_bytes, self.original_bytes / 2**20,
            )  # fmt: skip
        resumed = original is not None and not isinstance(self._original, str)
        self.refresh_attribute_vectors(self._original if resumed else model)
        return self

    def refresh_attribute_vectors(self, model: Any) -> None:
        """``v_i(a)``: per class, the mean over its sentences of the attribute word's state
        at every layer (``[classes, layers + 1, hidden]``), from ``model`` as it is now."""
        import torch

        means = []
        with torch.no_grad(), _eval_mode(model):
            for examples in self.examples.attribute:
                total, count = None, 0
                for start in range(0, len(examples), self.batch_size):
                    chunk = examples[start : start + self.batch_size]
                    words = self._word_states(model, chunk)
                    total = words.sum(0) if total is None else total + words.sum(0)
                    count += len(chunk)
                means.append(total / count)
        self.vectors = torch.stack(means)

    # ----------------------------------------------------------------- batches
    def _batch(self, examples: Sequence[Example], device: Any) -> tuple[Any, Any, Any]:
        """Padded ids, attention mask and the per-token weight of the read word
        (1 / its number of pieces at its pieces)."""
        import torch

        width = max(len(e.input_ids) for e in examples)
        ids = torch.full((len(examples), width), self._pad_id, dtype=torch.long)
        attention = torch.zeros((len(examples), width), dtype=torch.long)
        weights = torch.zeros((len(examples), width))
        for row, example in enumerate(examples):
            ids[row, : len(example.input_ids)] = torch.as_tensor(example.input_ids)
            attention[row, : len(example.input_ids)] = 1
            weights[row, list(example.positions)] = 1.0 / len(example.positions)
        return ids.to(device), attention.to(device), weights.to(device)

    def _word_states(self, model: Any, examples: Sequence[Example]) -> Any:
        """``[batch, layers + 1, hidden]``: each example's word, mean over its pieces."""
        import torch

        device = next(model.parameters()).device
        ids, attention, weights = self._batch(examples, device)
        return torch.einsum("bt,btlh->blh", weights, hidden_states(model, ids, attention))

    def _next(self, kind: str) -> list[Example]:
        """The next batch of ``kind`` (``stereotype`` or ``attribute``), reshuffled per pass."""
        queue = self._queues.setdefault(kind, [])
        if len(queue) < self.batch_size:
            pool = (
                self.examples.stereotype
                if kind == "stereotype"
                else [e for examples in self.examples.attribute for e in examples]
            )
            fresh = list(pool)
            self._random.shuffle(fresh)
            queue.extend(fresh)
        batch, self._queues[kind] = queue[: self.batch_size], queue[self.batch_size :]
        return batch

    def _layer_index(self) -> slice | list[int]:
        return {"all": slice(None), "first": [0], "last": [-1]}[self.layers]

    # ------------------------------------------------------------------- terms
    def debias_term(self, model: Any, examples: Sequence[Example]) -> Any:
        """Unweighted ``L_debias`` on these stereotype sentences."""
        import torch

        if self.vectors is None:
            raise CdsbiasError("ContextDebiasLoss.prepare() must run before the loss.")
        device = next(model.parameters()).device
        ids, attention, weights = self._batch(examples, device)
        states = hidden_states(model, ids, attention)[:, :, self._layer_index()]
        vectors = self.vectors.to(device)[:, self._layer_index()]
        if self.level == "token":
            words = torch.einsum("bt,btlh->blh", weights, states)
            products = torch.einsum("blh,nlh->bnl", words, vectors)
            return (products**2).mean(dim=(0, 2)).sum()
        products = torch.einsum("btlh,nlh->btnl", states, vectors)
        mask = attention.to(products.dtype)[:, :, None, None]
        per_class = ((products**2) * mask).sum(dim=(0, 1, 3))
        return (per_class / (mask.sum() * products.shape[-1])).sum()

    def original_states(self, model: Any, ids: Any, attention: Any) -> Any:
        """The original model's ``hidden_states`` for these inputs (no gradient)."""
        import torch

        from cdsbias.methods.bottleneck import disabled_adapters

        if self._original is None:
            raise CdsbiasError("ContextDebiasLoss.prepare() must run before the loss.")
        model = unwrapped(model)
        if self._original == "peft":
            switch: Any = model.disable_adapter()
        elif self._original == "bottleneck":
            switch = disabled_adapters(model)
        else:
            switch = nullcontext()
        source = model if isinstance(self._original, str) else self._placed_copy(model)
        with torch.no_grad(), switch, _eval_mode(source):
            return hidden_states(source, ids, attention)

    def _placed_copy(self, model: Any) -> Any:
        """The frozen copy, first moved where the trained ``model`` is (its device and
        floating dtype) if it is elsewhere: the copy is made before the Trainer (accelerate)
        places the model on its device, so it would stay on the CPU beside a model on a GPU.
        ``Module.to`` keeps it frozen (no grad) and in eval mode."""
        reference = next(model.parameters())
        frozen = self._original
        current = next(frozen.parameters())
        if current.device != reference.device or current.dtype != reference.dtype:
            frozen.to(device=reference.device, dtype=reference.dtype)
        return frozen

    def preserve_term(self, model: Any, examples: Sequence[Example]) -> Any:
        """Unweighted ``L_preserve`` on these attribute sentences (all tokens, all layers)."""
        device = next(model.parameters()).device
        ids, attention, _ = self._batch(examples, device)
        states = hidden_states(model, ids, attention)
        original = self.original_states(model, ids, attention)
        per_token = ((states - original) ** 2).mean(dim=-1)  # [batch, tokens, layers]
        mask = attention.to(per_token.dtype)[:, :, None]
        return (per_token * mask).sum() / (mask.sum() * per_token.shape[-1])

    def loss_terms(self, model: Any) -> dict[str, Any]:
        """``{"debias": α · L_debias, "preserve": β · L_preserve}`` on the next batches.

        A zero weight skips its forward pass and gives an exact zero.
        """
        import torch

        device = next(model.parameters()).device
        zero = torch.zeros((), device=device)
        debias = (
            self.alpha * self.debias_term(model, self._next("stereotype")) if self.alpha else zero
        )
        preserve = (
            self.beta * self.preserve_term(model, self._next("attribute")) if self.beta else zero
        )
        return {"debias": debias, "preserve": preserve}

    def total(self, terms: dict[str, Any], mlm_loss: Any = None) -> Any:
        """The loss to minimise: the two terms plus ``mlm_weight`` times ``mlm_loss``."""
        loss = terms["debias"] + terms["preserve"]
        if self.mlm_weight and mlm_loss is not None:
            loss = loss + self.mlm_weight * mlm_loss
        return loss
