"""Locating words in tokenized text: mask slots, a target's pieces, input limits, casing.

:class:`TargetEncoding` holds what :class:`~cdsbias.scoring.MaskedLMScorer` does at the
text level, before any forward pass: writing a target into its mask slot and finding the
pieces that spell it (a word-boundary marker the tokenizer split off in front of the word
included: a standalone ``▁``, as DeBERTa-v3 emits before words whose ``▁word`` piece is
not in its vocabulary, or ``Ġ`` in byte-level BPE; the model must not see it while it
predicts the word, and its probability is part of the word's. DeBERTa's tokenizer gives
such a ``▁`` the offsets of the preceding space, so offsets alone would leave it out),
checking lengths against what the model accepts, and warning about lower-case targets at
sentence starts of cased models.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cdsbias.errors import CdsbiasError, InputTooLongError

MASK_PLACEHOLDER = "[MASK]"


#: Pieces that only mark a word boundary: SentencePiece's ``▁`` and byte-level BPE's ``Ġ``
#: (a space). When a tokenizer splits one off a word, it is part of the word: left
#: visible, it would tell the model where the word starts and drop a factor of the chain
#: rule. Real English vocabularies (roberta-base) rarely split it off; tiny ones do.
WORD_BOUNDARY_MARKERS = frozenset({"\u2581", "\u0120"})


#: ``tokenizer.model_max_length`` at or above this is transformers' "no limit" placeholder.
_UNSET_MODEL_MAX_LENGTH = 1_000_000


# Text before a slot that ends a sentence: . ! ? or an ellipsis, then closing quotes or
# brackets; and what may open a sentence before its first word (spaces, quotes, brackets).
_OPENERS = re.compile(r"[\s\"'“‘«‹„(\[{¿¡]*\Z")


_CLOSERS = re.compile(r"[\"'”’»›)\]}]*\Z")


class LowercaseSentenceStartWarning(UserWarning):
    """A lower-case target fills a sentence-initial slot of a cased model.

    A cased model scores ``he`` at the start of a sentence as the rare lower-case spelling,
    not as ``He``. Benchmarks that capitalise their targets never trigger it; filter it with
    ``warnings.filterwarnings("ignore", category=LowercaseSentenceStartWarning)``.
    """


@dataclass(frozen=True)
class EncodedTarget:
    """A target word located in a tokenized sentence.

    Attributes:
        input_ids: Token ids of the sentence with the target's pieces (and every other
            mask slot) replaced by the mask token.
        positions: Positions of the target's pieces in ``input_ids``, left to right.
        target_ids: The target's piece ids, aligned with ``positions``.
    """

    input_ids: tuple[int, ...]
    positions: tuple[int, ...]
    target_ids: tuple[int, ...]


def shorten(text: str, width: int = 60) -> str:
    """``repr(text)``, cut in the middle when longer than ``width`` characters, so an error
    about a long input stays one readable line."""
    if len(text) <= width:
        return repr(text)
    half = width // 2
    return repr(text[:half]) + " ... " + repr(text[-half:])


def _position_offset(model: Any) -> int:
    """Positions the embeddings reserve before the first token (RoBERTa-style models).

    RoBERTa, XLM-R, CamemBERT and kin number positions from ``padding_idx + 1``, so of
    their ``max_position_embeddings`` (514) only 512 hold tokens. They are recognised by
    the ``padding_idx`` of their position embedding; BERT-style ones have none.
    """
    embeddings = getattr(getattr(model, "base_model", model), "embeddings", None)
    positions = getattr(embeddings, "position_embeddings", None)
    padding_idx = getattr(positions, "padding_idx", None)
    return int(padding_idx) + 1 if padding_idx is not None else 0


def input_limit(model: Any, tokenizer: Any) -> int | None:
    """The longest input (special tokens included) ``model`` can take, or None if unknown.

    ``max_position_embeddings`` minus RoBERTa-style position offsets (see
    :func:`_position_offset`), capped by the tokenizer's ``model_max_length`` when that is
    set (transformers uses a huge placeholder when it is not).
    """
    limit = getattr(model.config, "max_position_embeddings", None)
    if isinstance(limit, int) and limit > 0:
        limit -= _position_offset(model)
    else:
        limit = None
    declared = getattr(tokenizer, "model_max_length", None)
    if isinstance(declared, int) and 0 < declared < _UNSET_MODEL_MAX_LENGTH:
        limit = declared if limit is None else min(limit, declared)
    return limit


def _is_cased(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` keeps case: "He" and "he" give different ids (a lower-casing
    normalizer, ``do_lower_case``, makes them equal)."""
    upper = tokenizer("He", add_special_tokens=False)["input_ids"]
    lower = tokenizer("he", add_special_tokens=False)["input_ids"]
    return list(upper) != list(lower)


class TargetEncoding:
    """Text-level methods of the scorer (a mixin of :class:`MaskedLMScorer`).

    Expects ``tokenizer``, ``mask_id``, ``max_length``, ``cased`` and ``_slot_pattern``
    on the instance.
    """

    tokenizer: Any
    mask_id: int
    max_length: int | None
    cased: bool
    _slot_pattern: re.Pattern[str]

    # ------------------------------------------------------------------ text level
    def count_slots(self, sentence: str) -> int:
        """Number of mask placeholders in ``sentence``."""
        return len(self._slot_pattern.findall(sentence))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with the model's special tokens (placeholders become masks)."""
        text = self._slot_pattern.sub(self.tokenizer.mask_token, text)
        # verbose=False: lengths are checked (with a readable error) where inputs are scored.
        return list(self.tokenizer(text, add_special_tokens=True, verbose=False)["input_ids"])

    def check_length(self, n_tokens: int, what: str = "An input") -> None:
        """Refuses an input longer than the model takes, with one readable line.

        Args:
            n_tokens: Length of the input, special tokens included.
            what: How to name the input in the message, e.g. ``repr(sentence)``.

        Raises:
            InputTooLongError: If ``n_tokens`` exceeds :attr:`max_length`.
        """
        if self.max_length is not None and n_tokens > self.max_length:
            raise InputTooLongError(
                f"{what} is {n_tokens} tokens long (special tokens included); the model "
                f"accepts {self.max_length} at most.",
                n_tokens,
                self.max_length,
            )

    def span_pieces(self, text: str, start: int, end: int) -> tuple[list[int], list[int]]:
        """Token ids of ``text`` and the positions of the pieces that spell ``text[start:end]``.

        A piece belongs to the span when its offsets overlap it; a standalone word-boundary
        marker (``▁``, ``Ġ``) directly in front of the span's first piece belongs to it too
        when the tokenizer split it off that piece (see the module docstring). Mask tokens
        are never part of a span.
        """
        encoding = self.tokenizer(
            text, add_special_tokens=True, return_offsets_mapping=True, verbose=False
        )
        ids = list(encoding["input_ids"])
        offsets = encoding["offset_mapping"]
        # Tokens the template adds ([CLS], <s>, ...) have empty offsets and drop out here.
        positions = [
            i
            for i, (s, e) in enumerate(offsets)
            if e > start and s < end and e > s and ids[i] != self.mask_id
        ]
        if positions and positions[0] > 0:
            first, before = positions[0], positions[0] - 1
            marker, head = self.tokenizer.convert_ids_to_tokens([ids[before], ids[first]])
            s, e = offsets[before]
            if (
                marker in WORD_BOUNDARY_MARKERS
                and not head.startswith(marker)  # else the marker is a space of its own
                and s <= e <= start
                and not text[s:e].strip()  # it stands for the space before the span
            ):
                positions.insert(0, before)
        return ids, positions

    def encode_target(self, sentence: str, target: str, slot: int = 0) -> EncodedTarget:
        """Locates ``target`` as it would be tokenized when written into mask slot ``slot``.

        The target is written into the sentence and tokenized *in context*, so the pieces
        are the ones the model would see (RoBERTa's space-prefixed ``Ġword`` after a space,
        a bare ``Word`` at the start, lower-casing, accents, DeBERTa's standalone ``▁``),
        then those pieces are masked. Every other slot stays a single mask token.

        Raises:
            CdsbiasError: No mask slot, a slot index out of range, an empty target, a target
                that maps to the unknown token, or an input longer than the model accepts.
        """
        pieces = self._slot_pattern.split(sentence)
        n_slots = len(pieces) - 1
        if n_slots == 0:
            raise CdsbiasError(f"Sentence has no {MASK_PLACEHOLDER} slot: {sentence!r}")
        if not 0 <= slot < n_slots:
            raise CdsbiasError(f"Slot {slot} does not exist in {sentence!r} ({n_slots} slot(s)).")
        if not target.strip():
            raise CdsbiasError(f"Empty target word for {sentence!r}.")
        mask = self.tokenizer.mask_token
        text = pieces[0]
        start = end = -1
        for index, piece in enumerate(pieces[1:]):
            if index == slot:
                start = len(text)
                text += target
                end = len(text)
            else:
                text += mask
            text += piece
        ids, positions = self.span_pieces(text, start, end)
        if not positions:
            raise CdsbiasError(f"Target {target!r} produced no tokens in {sentence!r}.")
        if ids.count(self.mask_id) != n_slots - 1:
            raise CdsbiasError(
                f"The mask slots of {sentence!r} did not tokenize to single mask tokens."
            )
        target_ids = tuple(ids[p] for p in positions)
        unk = self.tokenizer.unk_token_id
        if unk is not None and unk in target_ids:
            raise CdsbiasError(
                f"Target word {target!r} maps to the unknown token "
                f"{self.tokenizer.unk_token!r} in this model's vocabulary; it cannot be scored."
            )
        self.check_length(len(ids), shorten(sentence))
        for p in positions:
            ids[p] = self.mask_id
        return EncodedTarget(tuple(ids), tuple(positions), target_ids)

    def lowercase_sentence_starts(
        self, requests: Iterable[tuple[str, str, int]]
    ) -> list[tuple[str, str, int]]:
        """The ``(sentence, target, slot)`` requests that write a lower-case target into a
        sentence-initial slot of a cased model (``[]`` for an uncased one).

        A slot is sentence-initial when only spaces, opening quotes or brackets precede it,
        or the text before it ends a sentence with ``.``, ``!``, ``?`` or an ellipsis.
        """
        if not self.cased:
            return []
        found = []
        for sentence, target, slot in requests:
            word = target.strip()
            if not word[:1].islower():
                continue
            slots = list(self._slot_pattern.finditer(sentence))
            if not 0 <= slot < len(slots):
                continue
            before = _OPENERS.sub("", sentence[: slots[slot].start()])
            if not before or _CLOSERS.sub("", before).endswith((".", "!", "?", "…")):
                found.append((sentence, target, slot))
        return found

    def warn_lowercase_sentence_starts(
        self, requests: Iterable[tuple[str, str, int]], stacklevel: int = 2
    ) -> None:
        """One :class:`LowercaseSentenceStartWarning` for all the requests it concerns.

        Callers that score many targets (a benchmark, :meth:`target_log_probs`, a probe)
        call this once per call, so a data set with the problem gets one line, not one per row.
        """
        found = self.lowercase_sentence_starts(requests)
        if not found:
            return

        def capitalised(word: str) -> str:
            return word.strip()[:1].upper() + word.strip()[1:]

        sentence, target, slot = found[0]
        if len({(s, n) for s, _, n in found}) == 1:
            words = list(dict.fromkeys(t for _, t, _ in found))
            one = len(words) == 1
            text = (
                f"The lower-case target{'' if one else 's'} {', '.join(map(repr, words))} "
                f"fill{'s' if one else ''} slot {slot} of {sentence!r}, which starts a sentence, "
                f"and this model is cased, so {'it is' if one else 'they are'} scored as "
                f"lower-case at the start of a sentence; capitalise {'it' if one else 'them'} "
                f"({', '.join(repr(capitalised(w)) for w in words)})."
            )
        else:
            text = (
                f"{len(found)} lower-case targets fill sentence-initial slots (e.g. {target!r} "
                f"in slot {slot} of {sentence!r}) and this model is cased, so they are scored "
                f"as lower-case at the start of a sentence; capitalise them "
                f"(e.g. {capitalised(target)!r})."
            )
        warnings.warn(text, LowercaseSentenceStartWarning, stacklevel=stacklevel + 1)
