"""Fill-in-the-blank probes: what a masked LM puts at one ``[MASK]``.

:func:`fill` answers "how likely are *he* and *she* here, and what else would the model
say?": the probability of given words at the mask (multi-piece words by the chain rule, see
:mod:`cdsbias.scoring.scorer`), their difference and ratio, and the top-k single tokens.
Target pieces and top-k tokens are shown the same way, by :func:`readable_token`:
"Ġphilippines" prints as "philippines", not as spaced-out characters; a byte-level piece
that is only part of a character prints as its bytes ("<0xE2>"), never as "�".

The two-sentence log-probability bias score of one attribute word (``cdsbias fill
--attribute``) is the Kurita benchmark's and lives with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MASK_PLACEHOLDER, MaskedLMScorer
from cdsbias.scoring.encoding import shorten
from cdsbias.scoring.readouts import chain_rule_requests, decode_token, log_probs_and_top_k


@dataclass(frozen=True)
class TargetProbability:
    """A given word at the mask.

    Attributes:
        word: The word as given.
        log_prob: ``ln P(word | sentence)`` (chain rule over its pieces).
        prob: ``exp(log_prob)``.
        pieces: The word's tokens in this context, readable (see :func:`readable_token`).
        piece_ids: Their vocabulary ids.
    """

    word: str
    log_prob: float
    prob: float
    pieces: tuple[str, ...]
    piece_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class Prediction:
    """One of the model's top-k tokens at the mask."""

    token: str
    token_id: int
    log_prob: float
    prob: float


@dataclass
class FillResult:
    """What :func:`fill` returns.

    Attributes:
        sentence: The probed sentence.
        targets: The given words, in order.
        top_k: The most probable single tokens at the mask, best first.
        difference: ``P(t1) - P(t2)`` when exactly two targets were given.
        ratio: ``P(t1) / P(t2)`` when exactly two targets were given.
        log_ratio: ``ln P(t1) - ln P(t2)`` (finite even where the ratio underflows).
    """

    sentence: str
    targets: list[TargetProbability] = field(default_factory=list)
    top_k: list[Prediction] = field(default_factory=list)
    difference: float | None = None
    ratio: float | None = None
    log_ratio: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-serialisable view."""
        return {
            "sentence": self.sentence,
            "targets": [
                t.__dict__ | {"pieces": list(t.pieces), "piece_ids": list(t.piece_ids)}
                for t in self.targets
            ],
            "top_k": [p.__dict__ for p in self.top_k],
            "difference": self.difference,
            "ratio": self.ratio,
            "log_ratio": self.log_ratio,
        }


@lru_cache(maxsize=1)
def _byte_level_alphabet() -> dict[str, int]:
    """Character -> byte of byte-level BPE (GPT-2's ``bytes_to_unicode``, inverted)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {char: byte for byte, char in bytes_to_unicode().items()}


def _escape_bytes(raw: bytes) -> str:
    """``raw`` as text, with every byte that is not part of a whole UTF-8 character, and
    every control character, shown as ``<0xNN>``."""
    parts: list[str] = []
    while raw:
        try:
            text, raw = raw.decode("utf-8"), b""
        except UnicodeDecodeError as exc:
            text = raw[: exc.start].decode("utf-8")
            invalid, raw = raw[exc.start : exc.end], raw[exc.end :]
        else:
            invalid = b""
        parts.extend(
            c if c.isprintable() or c == " " else "".join(f"<0x{b:02X}>" for b in c.encode())
            for c in text
        )
        parts.extend(f"<0x{byte:02X}>" for byte in invalid)
    return "".join(parts)


def readable_token(tokenizer: Any, token_id: int) -> str:
    """One vocabulary entry as a reader should see it, for target pieces and top-k alike.

    The id is decoded on its own (``Ġhe`` -> ``he``, ``▁she`` -> ``she``, ``##s`` stays
    ``##s``), except where decoding loses the piece: a byte-level piece that is only part of
    a UTF-8 character (which decodes to U+FFFD) or a control character shows its bytes,
    e.g. ``<0xE2>``, and a piece that is only a word-boundary marker (``▁``, ``Ġ``, which
    decode to nothing) shows as itself.
    """
    text = decode_token(tokenizer, int(token_id))
    piece = tokenizer.convert_ids_to_tokens(int(token_id))
    if "\ufffd" not in piece and (not text or "\ufffd" in text or not text.isprintable()):
        alphabet = _byte_level_alphabet()
        if all(char in alphabet for char in piece):
            text = _escape_bytes(bytes(alphabet[char] for char in piece)).strip()
        else:  # e.g. SentencePiece's byte-fallback pieces, which are spelt "<0xE2>"
            text = piece
    return text or piece


def _single_mask_ids(scorer: MaskedLMScorer, sentence: str) -> tuple[list[int], int]:
    slots = scorer.count_slots(sentence)
    if slots != 1:
        own = scorer.tokenizer.mask_token
        alternative = f" (or this model's own {own})" if own != MASK_PLACEHOLDER else ""
        raise CdsbiasError(
            f"The sentence needs exactly one {MASK_PLACEHOLDER}{alternative}; found {slots} "
            f"in {sentence!r}."
        )
    ids = scorer.encode(sentence)
    if ids.count(scorer.mask_id) != 1:
        raise CdsbiasError(f"The mask of {sentence!r} did not tokenize to one mask token.")
    scorer.check_length(len(ids), shorten(sentence))
    return ids, ids.index(scorer.mask_id)


def fill(
    scorer: MaskedLMScorer,
    sentence: str,
    targets: Sequence[str] = (),
    top_k: int = 10,
) -> FillResult:
    """Probabilities of ``targets`` and the top-k tokens at the one mask of ``sentence``.

    Args:
        scorer: The shared scorer (``MaskedLMScorer.from_pretrained(model)``).
        sentence: Text with exactly one ``[MASK]`` (the model's own mask token works too).
        targets: Words to score at the mask; a word of several pieces gets as many masks
            and a chain-rule probability.
        top_k: Number of top single-token predictions (0 for none).

    Returns:
        A :class:`FillResult`.

    Raises:
        CdsbiasError: No or several masks, or a target outside the model's vocabulary.

    Warns:
        LowercaseSentenceStartWarning: Once, when lower-case targets fill a
            sentence-initial mask of a cased model.
    """
    ids, position = _single_mask_ids(scorer, sentence)
    result = FillResult(sentence=sentence)
    words = [t.strip() for t in targets if t.strip()]
    scorer.warn_lowercase_sentence_starts([(sentence, word, 0) for word in words])
    # One deduplicated pass: the top-k request and every target piece (a single-piece
    # target reads the very same input as the top-k, so the model runs once).
    inputs: list[tuple[int, ...]] = [tuple(ids)]
    positions: list[int] = [position]
    target_ids: list[int] = [-1]
    owners: list[int] = [-1]
    encoded = [scorer.encode_target(sentence, word) for word in words]
    for index, item in enumerate(encoded):
        piece_inputs, piece_positions, piece_ids = chain_rule_requests(item)
        inputs.extend(piece_inputs)
        positions.extend(piece_positions)
        target_ids.extend(piece_ids)
        owners.extend([index] * len(piece_ids))
    log_probs, top_ids, top_lps = log_probs_and_top_k(
        scorer, inputs, positions, target_ids, max(top_k, 0)
    )
    totals = [0.0] * len(words)
    for request, owner in enumerate(owners):
        if owner >= 0:
            totals[owner] += float(log_probs[request])
    for word, item, lp in zip(words, encoded, totals, strict=True):
        pieces = tuple(readable_token(scorer.tokenizer, i) for i in item.target_ids)
        result.targets.append(
            TargetProbability(word, lp, math.exp(lp), pieces, tuple(item.target_ids))
        )
    if len(result.targets) == 2:
        first, second = result.targets
        result.difference = first.prob - second.prob
        result.log_ratio = first.log_prob - second.log_prob
        result.ratio = math.exp(result.log_ratio) if result.log_ratio < 700 else math.inf
    for token_id, lp in zip(top_ids[0], top_lps[0], strict=True):
        result.top_k.append(
            Prediction(
                readable_token(scorer.tokenizer, int(token_id)),
                int(token_id),
                float(lp),
                math.exp(lp),
            )
        )
    return result
