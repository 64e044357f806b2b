"""The masked-LM scorer every benchmark is built on.

One operation underlies all metrics in cdsbias: *the log-probability of token(s) at masked
position(s) of an input, under a masked LM*. :class:`MaskedLMScorer` does it fast:

* identical inputs are run once (BEC-Pro's 5,400 rows need ~960 forward passes);
* inputs are sorted by length and batched, so padding is minimal;
* the vocabulary projection (the largest matrix of a BERT-base) is applied only at the
  positions that are read, not at every position of every sequence (both in
  :mod:`cdsbias.scoring.batching`);
* everything runs under :func:`torch.inference_mode` on any device.

Targets that split into several word pieces get a proper joint probability by the chain
rule, left to right (the convention of Salazar et al. 2020 and of multi-token
fill-in-the-blank probing)::

    ln P(t_1 .. t_k | s) = sum_i ln P(t_i | s, t_1 .. t_{i-1} shown, t_i .. t_k masked)

so a word is scored with exactly as many mask tokens as it has pieces, and single-piece
targets reduce to the usual ``ln softmax(logits)[t]`` at the mask.

Which pieces spell a word (a word-boundary marker split off in front of it included) is
decided at the text level, in :mod:`cdsbias.scoring.encoding`.

With ``self_debias`` set, every read is Self-Debias's ``p'`` instead (Schick et al. 2021;
:mod:`cdsbias.scoring.self_debias`): each distinct input is run a second time with the
debiasing prefix inserted, in the same batch order, and its rows are read at the shifted
positions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from cdsbias.errors import CdsbiasError
from cdsbias.scoring.batching import capped_batches, logits_at, max_batch_tokens
from cdsbias.scoring.encoding import (
    MASK_PLACEHOLDER,
    EncodedTarget,
    TargetEncoding,
    _is_cased,
    input_limit,
)

if TYPE_CHECKING:
    from cdsbias.scoring.self_debias import SelfDebias


class MaskedLMScorer(TargetEncoding):
    """Scores words and tokens at masked positions under a ``*ForMaskedLM`` model.

    Sentences use a mask placeholder for each slot (``[MASK]`` by default; the
    tokenizer's own mask token, e.g. RoBERTa's ``<mask>``, is accepted too), so the same
    benchmark text works for every model.

    Args:
        model: A ``transformers`` masked-LM model (``AutoModelForMaskedLM``).
        tokenizer: Its *fast* tokenizer (offsets are needed to find a word's pieces).
        batch_size: Sequences per forward pass (fewer when a batch would read more than
            ``MAX_BATCH_ENTRIES`` rows x vocabulary entries, :mod:`cdsbias.scoring.batching`).
            Larger is faster until memory runs out.
        device: Where to run; defaults to the model's current device.
        progress: Show a tqdm progress bar over batches.
        self_debias: Score under Self-Debias (:mod:`cdsbias.scoring.self_debias`): every
            read gets ``p' ∝ p · max(exp(−λ · max(q − p, 0)), ε)`` with ``q`` read from a
            second, prefixed input. ``None`` (default) scores plainly.

    Raises:
        CdsbiasError: If the tokenizer has no mask token or is not a fast tokenizer.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        batch_size: int = 64,
        device: Any = None,
        progress: bool = False,
        self_debias: SelfDebias | None = None,
    ) -> None:
        import torch

        if getattr(tokenizer, "mask_token_id", None) is None:
            raise CdsbiasError("The tokenizer has no mask token; masked-LM scoring needs one.")
        if not getattr(tokenizer, "is_fast", False):
            raise CdsbiasError(
                "The tokenizer is not a fast (Rust) tokenizer; word offsets are needed to locate "
                "target words. Load it with AutoTokenizer.from_pretrained(..., use_fast=True)."
            )
        if model.get_output_embeddings() is None:
            raise CdsbiasError(f"{type(model).__name__} has no language-modelling head.")
        if batch_size < 1:
            raise CdsbiasError(f"batch_size must be at least 1, got {batch_size}.")
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.progress = progress
        #: Self-Debias settings, or None for plain scoring.
        self.self_debias = self_debias
        self.device = (
            torch.device(device) if device is not None else next(model.parameters()).device
        )
        self.model.to(self.device)
        self.model.eval()
        self.mask_id: int = tokenizer.mask_token_id
        self.pad_id: int = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        #: Longest input (special tokens included) the model takes; see :func:`input_limit`.
        self.max_length: int | None = input_limit(model, tokenizer)
        # Rows of the logits: the head's output size. (DeBERTa's non-legacy head reports its
        # hidden-size dense layer as "output embeddings", so the config is asked first.)
        self._vocab_size = int(
            getattr(model.config, "vocab_size", None)
            or model.get_output_embeddings().weight.shape[0]
        )
        #: Whether the tokenizer keeps case ("He" and "he" are different tokens).
        self.cased: bool = _is_cased(tokenizer)
        placeholders = {MASK_PLACEHOLDER, tokenizer.mask_token}
        self._slot_pattern = re.compile("|".join(re.escape(p) for p in sorted(placeholders)))
        # Ids of the tokens a template adds around text; never scored by PLL.
        self._frame_ids = {
            getattr(tokenizer, f"{name}_token_id")
            for name in ("cls", "sep", "bos", "eos", "pad")
            if getattr(tokenizer, f"{name}_token_id", None) is not None
        }
        #: Number of sequences run through the model so far (Self-Debias's prefixed
        #: partners included); for benchmarks/tests.
        self.sequences_run = 0

    @classmethod
    def from_pretrained(
        cls,
        name_or_path: str,
        *,
        device: str | None = None,
        batch_size: int = 64,
        revision: str | None = None,
        progress: bool = False,
        self_debias: SelfDebias | None = None,
    ) -> MaskedLMScorer:
        """Loads a hub id or local folder (see :func:`cdsbias.scoring.load_masked_lm`).

        ``progress`` shows transformers' loading bars as well as the scoring bar.
        """
        from cdsbias.scoring.loading import load_masked_lm, resolve_device

        model, tokenizer = load_masked_lm(name_or_path, revision=revision, progress=progress)
        return cls(
            model,
            tokenizer,
            batch_size=batch_size,
            device=resolve_device(device),
            progress=progress,
            self_debias=self_debias,
        )

    def with_self_debias(
        self, prefix: str | None = None, decay_constant: float | None = None,
        epsilon: float | None = None,
    ) -> MaskedLMScorer:  # fmt: skip
        """A copy of this scorer (same model, batches, counters' start) that reads
        Self-Debias's ``p'``; None takes bias-bench's gender prefix, λ = 50, ε = 0.01."""
        import copy

        from cdsbias.scoring.self_debias import DECAY_CONSTANT, EPSILON, GENDER_PREFIX, SelfDebias

        scorer = copy.copy(self)
        scorer.self_debias = SelfDebias(
            GENDER_PREFIX if prefix is None else prefix,
            DECAY_CONSTANT if decay_constant is None else decay_constant,
            EPSILON if epsilon is None else epsilon,
        )
        return scorer

    def target_log_probs(
        self,
        sentences: Sequence[str],
        targets: Sequence[str],
        slots: int | Sequence[int] = 0,
    ) -> np.ndarray:
        """``ln P(target | sentence)`` with the target in mask slot ``slot``.

        Other slots stay masked. A multi-piece target is scored by the chain rule, left to
        right (see the module docstring).

        Args:
            sentences: Sentences with one or more mask placeholders.
            targets: One target word (or phrase) per sentence.
            slots: The slot index (0-based, left to right) per sentence, or one for all.

        Returns:
            Natural-log probabilities, float64, one per sentence.

        Warns:
            LowercaseSentenceStartWarning: Once per call, when lower-case targets fill
                sentence-initial slots of a cased model.
        """
        if len(sentences) != len(targets):
            raise CdsbiasError(f"{len(sentences)} sentences but {len(targets)} targets.")
        slot_list = [slots] * len(sentences) if isinstance(slots, int) else list(slots)
        if len(slot_list) != len(sentences):
            raise CdsbiasError(f"{len(sentences)} sentences but {len(slot_list)} slots.")
        cache: dict[tuple[str, str, int], EncodedTarget] = {}
        encoded = []
        for sentence, target, slot in zip(sentences, targets, slot_list):
            key = (sentence, target, slot)
            if key not in cache:
                cache[key] = self.encode_target(sentence, target, slot)
            encoded.append(cache[key])
        self.warn_lowercase_sentence_starts(cache, stacklevel=2)
        return self.encoded_log_probs(encoded)

    def encoded_log_probs(self, encoded: Sequence[EncodedTarget]) -> np.ndarray:
        """Chain-rule log-probabilities of already located targets (see :meth:`encode_target`)."""
        inputs: list[tuple[int, ...]] = []
        positions: list[int] = []
        target_ids: list[int] = []
        owner: list[int] = []
        for row, item in enumerate(encoded):
            ids = list(item.input_ids)
            for position, token in zip(item.positions, item.target_ids):
                inputs.append(tuple(ids))
                positions.append(position)
                target_ids.append(token)
                owner.append(row)
                ids[position] = token  # shown for the pieces to its right
        piece_scores = self.token_log_probs(inputs, positions, target_ids)
        totals = np.zeros(len(encoded), dtype=np.float64)
        np.add.at(totals, np.asarray(owner, dtype=np.int64), piece_scores)
        return totals

    def masked_token_log_probs(
        self,
        sequences: Sequence[Sequence[int]],
        positions: Sequence[Sequence[int]] | None = None,
    ) -> list[np.ndarray]:
        """Masks each listed position of each sequence *one at a time* and scores its token.

        This is the building block of pseudo-log-likelihood scoring (Salazar et al. 2020,
        "Masked Language Model Scoring"): ``PLL(s) = sum_t ln P(s_t | s without s_t)``.

        Args:
            sequences: Token ids including special tokens.
            positions: Positions to score per sequence; defaults to every non-special token.

        Returns:
            One float64 array per sequence with ``ln P(token | rest)`` per scored position.
        """
        inputs: list[tuple[int, ...]] = []
        read_at: list[int] = []
        target_ids: list[int] = []
        sizes: list[int] = []
        for index, sequence in enumerate(sequences):
            ids = list(sequence)
            if positions is None:
                chosen = [i for i, token in enumerate(ids) if token not in self._frame_ids]
            else:
                chosen = list(positions[index])
            sizes.append(len(chosen))
            for p in chosen:
                masked = ids.copy()
                masked[p] = self.mask_id
                inputs.append(tuple(masked))
                read_at.append(p)
                target_ids.append(ids[p])
        scores = self.token_log_probs(inputs, read_at, target_ids)
        return list(np.split(scores, np.cumsum(sizes)[:-1])) if sizes else []

    # ----------------------------------------------------------------- token level
    def token_log_probs(
        self,
        inputs: Sequence[Sequence[int]],
        positions: Sequence[int],
        target_ids: Sequence[int],
    ) -> np.ndarray:
        """``ln softmax(logits(inputs[i]))[positions[i], target_ids[i]]`` for every i.

        Identical inputs are run once; only the requested positions are projected to the
        vocabulary.

        Returns:
            float64 array of natural-log probabilities.
        """
        import torch

        out = np.empty(len(inputs), dtype=np.float64)
        targets = torch.as_tensor(list(target_ids), dtype=torch.long)
        for request_rows, log_probs in self._log_softmax_at(inputs, positions):
            # One gather per batch: reading every position of every input (ABC, CrowS-Pairs)
            # means ~10^5 rows, too many to index one at a time from Python.
            rows = [row for row, requests in enumerate(request_rows) for _ in requests]
            requests = [r for group in request_rows for r in group]
            index = torch.as_tensor(requests, dtype=torch.long)
            values = log_probs[torch.as_tensor(rows, dtype=torch.long), targets[index]]
            out[requests] = values.double().cpu().numpy()
        return out

    def vocab_log_probs(self, inputs: Sequence[Sequence[int]], positions: Sequence[int]) -> Any:
        """Full ``ln softmax`` over the vocabulary at each (input, position): a float32
        tensor of shape ``[len(inputs), vocab_size]``. Meant for few rows (top-k probes)."""
        import torch

        result = None
        for request_rows, log_probs in self._log_softmax_at(inputs, positions):
            if result is None:
                result = torch.empty((len(inputs), log_probs.shape[-1]), dtype=torch.float32)
            for row_index, requests in enumerate(request_rows):
                result[requests] = log_probs[row_index].cpu()
        if result is None:
            return torch.empty((0, 0))
        return result

    def _log_softmax_at(
        self, inputs: Sequence[Sequence[int]], positions: Sequence[int]
    ) -> Iterator[tuple[list[list[int]], Any]]:
        """Yields ``(request_rows, log_probs)`` per batch.

        ``log_probs`` is a ``[M, vocab]`` float32 tensor, one row per distinct
        (input, position) pair of the batch; ``request_rows[m]`` lists the request indices
        that row answers.
        """
        import torch

        if len(inputs) != len(positions):
            raise CdsbiasError(f"{len(inputs)} inputs but {len(positions)} positions.")
        distinct: dict[tuple[int, ...], int] = {}
        wanted: list[dict[int, list[int]]] = []
        for request, (ids, position) in enumerate(zip(inputs, positions)):
            key = tuple(ids)
            index = distinct.setdefault(key, len(distinct))
            if index == len(wanted):
                # Raw-id callers (PLL, StereoSet, top-k) bypass encode_target's check.
                self.check_length(len(key))
                wanted.append({})
            if not 0 <= position < len(key):
                raise CdsbiasError(f"Position {position} is outside a {len(key)}-token input.")
            wanted[index].setdefault(position, []).append(request)
        sequences = list(distinct)
        debias = self.self_debias if self.self_debias and not self.self_debias.is_identity else None
        if debias is not None:
            # The prefixed partner of each distinct input, built (and checked) before any
            # forward pass; it keeps its partner's place in the length order and batch.
            from cdsbias.scoring.self_debias import debias_log_probs, prefixed_inputs

            partners, moved = prefixed_inputs(self, sequences, [list(w) for w in wanted])
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        vocab = self._vocab_size
        read_rows = [len(positions_of) for positions_of in wanted]
        # Padded tokens are capped in the longer of the two passes (Self-Debias's partners).
        lengths = [len(sequence) for sequence in (partners if debias is not None else sequences)]
        tokens = max_batch_tokens(self.model)
        batches = list(capped_batches(order, read_rows, self.batch_size, vocab, lengths, tokens))
        iterator: Any = batches
        if self.progress:
            from tqdm.auto import tqdm

            iterator = tqdm(batches, desc="scoring", unit="batch", leave=False)
        with torch.inference_mode():
            for batch in iterator:
                request_rows = [requests for i in batch for requests in wanted[i].values()]
                reads = [list(wanted[i]) for i in batch]
                log_probs = self._batch_log_softmax([sequences[i] for i in batch], reads)
                if debias is not None:
                    log_q = self._batch_log_softmax(
                        [partners[i] for i in batch], [moved[i] for i in batch]
                    )
                    log_probs = debias_log_probs(
                        log_probs, log_q, debias.decay_constant, debias.epsilon
                    )
                yield request_rows, log_probs

    def _batch_log_softmax(
        self, sequences: Sequence[Sequence[int]], reads: Sequence[Sequence[int]]
    ) -> Any:
        """One padded forward pass: ``ln softmax`` rows ``[sum of len(reads), vocab]``, in
        the order of ``reads`` (per sequence, its positions)."""
        import torch

        width = max(len(sequence) for sequence in sequences)
        input_ids = torch.full((len(sequences), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(sequences), width), dtype=torch.long)
        columns = max(len(read) for read in reads)
        gather = torch.zeros((len(sequences), columns), dtype=torch.long)
        keep: list[int] = []
        for row, (sequence, read) in enumerate(zip(sequences, reads, strict=True)):
            input_ids[row, : len(sequence)] = torch.as_tensor(sequence)
            attention[row, : len(sequence)] = 1
            for column, position in enumerate(read):
                gather[row, column] = position
                keep.append(row * columns + column)
        logits = self._logits_at(input_ids, attention, gather)
        flat = logits.reshape(-1, logits.shape[-1])
        if len(keep) < flat.shape[0]:  # drop padding columns (indexing copies every row)
            flat = flat[torch.as_tensor(keep)]
        self.sequences_run += len(sequences)
        return torch.log_softmax(flat.float(), dim=-1)

    def _logits_at(self, input_ids: Any, attention: Any, gather: Any) -> Any:
        """Logits ``[batch, columns, vocab]`` at the positions in ``gather``, computed on
        the scorer's device (:func:`~cdsbias.scoring.batching.logits_at`)."""
        device = self.device
        return logits_at(self.model, input_ids.to(device), attention.to(device), gather.to(device))
