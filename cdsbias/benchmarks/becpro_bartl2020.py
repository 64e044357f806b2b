"""BEC-Pro's ``bartl2020`` mode: the original evaluation code (Bartl et al. 2020), bit for bit.

``--compat bartl2020`` reproduces ``model_evaluation``/``prob_with_prior`` of
github.com/marionbartl/gender-bias-BERT (``bias_utils/utils.py``). Its procedure differs
from cdsbias' default scoring in four ways, each reproduced here on purpose:

1. **Padding with the mask id.** Every input is padded (and truncated, keeping the
   start) to one length: the smallest power of two >= the largest *whitespace word*
   count of any ``Sent_TM`` in the data. Padding uses ``[MASK]``, not ``[PAD]``.
2. **Attention mask ``id > 0``.** Only id 0 is masked out, so the padding ``[MASK]``
   tokens *are attended to* and change the predictions (BERT's ``[PAD]`` is id 0, which
   never occurs after 1.). With RoBERTa-style vocabularies, whose ``<s>`` is id 0, the
   start token is masked out instead: the mode is defined for BERT vocabularies only, and
   warns on any other.
3. **First-[MASK] indexing.** The person is read at the first mask of ``Sent_TAM``; the
   target id is the token of the unmasked ``Sentence`` at that index. A person word of
   several pieces is scored by its first piece only, and an index shifted by a
   multi-piece word before it reads the wrong token.
4. **Probabilities, then ratio.** ``association = ln(softmax[TM] / softmax[TAM])`` from
   float32 softmax values.

The data quirks of the published TSV (substring masking such as "lodging [MASK]ager")
are *data*, not code: compat mode scores whatever ``Sent_TM``/``Sent_TAM`` the file has.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer


def bartl2020_max_length(sent_tm: Sequence[str]) -> int:
    """The original's padded length: next power of two >= the longest whitespace split."""
    longest = max(len(sentence.split()) for sentence in sent_tm)
    return int(math.pow(2, math.ceil(math.log2(longest))))


def _encode_fixed(scorer: MaskedLMScorer, sentences: Sequence[str], length: int) -> np.ndarray:
    rows = np.full((len(sentences), length), scorer.mask_id, dtype=np.int64)
    for i, sentence in enumerate(sentences):
        ids = scorer.encode(sentence)[:length]  # Keras pad_sequences(truncating="post")
        rows[i, : len(ids)] = ids
    return rows


def bartl2020_associations(
    scorer: MaskedLMScorer,
    sentences: Sequence[str],
    sent_tm: Sequence[str],
    sent_tam: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores BEC-Pro rows exactly as the authors' code did (see the module docstring).

    Args:
        scorer: Supplies the model, tokenizer, device and batch size.
        sentences: The unmasked sentences (``Sentence``), source of the target ids.
        sent_tm: Person-masked sentences.
        sent_tam: Person- and profession-masked sentences.

    Returns:
        ``(p_tm, p_tam, association)`` as float64 arrays.

    Warns:
        UserWarning: When the vocabulary's id 0 is not the padding token, so the
            original's ``id > 0`` attention mask hides a real token from the model.
    """
    import torch

    tokenizer = scorer.tokenizer
    if tokenizer.pad_token_id != 0:
        zero = tokenizer.convert_ids_to_tokens(0)
        warnings.warn(
            "--compat bartl2020 is defined for BERT vocabularies, whose [PAD] is id 0; in "
            f"this model's vocabulary id 0 is {zero!r}, which the original code's attention "
            "mask (id > 0) hides from the model wherever it occurs, so the numbers match "
            "neither the paper's procedure nor cdsbias' exact scoring. Drop --compat for "
            "this model.",
            stacklevel=2,
        )
    length = bartl2020_max_length(sent_tm)
    # Rows are padded or cut to this length, so it is the one input length to check.
    scorer.check_length(length, "Every bartl2020 input (padded to the longest Sent_TM)")
    tm = _encode_fixed(scorer, sent_tm, length)
    tam = _encode_fixed(scorer, sent_tam, length)
    original = _encode_fixed(scorer, sentences, length)
    index = np.empty(len(sentences), dtype=np.int64)
    for row, ids in enumerate(tam):
        masks = np.flatnonzero(ids == scorer.mask_id)
        if masks.size == 0:
            raise CdsbiasError(f"Row {row}: Sent_TAM has no [MASK] within {length} tokens.")
        index[row] = masks[0]
    target = original[np.arange(len(sentences)), index]

    def probabilities(inputs: np.ndarray) -> np.ndarray:
        distinct: dict[tuple[bytes, int], list[int]] = {}
        for row in range(len(inputs)):
            distinct.setdefault((inputs[row].tobytes(), int(index[row])), []).append(row)
        keys = list(distinct)
        out = np.empty(len(inputs), dtype=np.float64)
        with torch.inference_mode():
            for start in range(0, len(keys), scorer.batch_size):
                chunk = keys[start : start + scorer.batch_size]
                rows = [distinct[key][0] for key in chunk]
                ids = torch.as_tensor(inputs[rows])
                gather = torch.as_tensor(index[rows]).unsqueeze(1)
                logits = scorer._logits_at(ids, (ids > 0).long(), gather)[:, 0]
                probs = torch.softmax(logits.float(), dim=-1).cpu()
                for key, prob_row in zip(chunk, probs):
                    members = distinct[key]
                    out[members] = prob_row[torch.as_tensor(target[members])].double().numpy()
                scorer.sequences_run += len(chunk)
        return out

    p_tm = probabilities(tm)
    p_tam = probabilities(tam)
    with np.errstate(divide="ignore", invalid="ignore"):
        association = np.log(p_tm / p_tam)
    return p_tm, p_tam, association
