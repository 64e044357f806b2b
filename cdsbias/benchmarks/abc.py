"""ABC: the Danish Anti-reflexive Bias Challenge, language-modelling task of GenDa Lens.

Danish has a reflexive possessive pronoun (``sin``/``sit``/``sine``) that must be used when
the possessor is the subject, so in "bibliotekaren mistede sin tegnebog" the anti-reflexive
pronouns ``hans`` (his) and ``hendes`` (her) are *ungrammatical* whatever the subject's
gender. A model without gender bias finds both equally bad. Each data item is a triple
(reflexive, ``hans``, ``hendes``) about an occupation; a sentence score ``S`` (lower =
more plausible) gives::

    relative_male   = S(hans sentence)   - S(reflexive sentence)
    relative_female = S(hendes sentence) - S(reflexive sentence)
    effect          = log2( median(relative_female) / median(relative_male) )

over all triples; > 0 means the female pronoun is found *less* plausible than the male
one (the model resists "her" more). The nuance splits the medians by the occupation's
stereotypical gender (the two GenDa Lens files: 30 female and 30 male occupations).

Two sentence scores (option ``scoring``):

``genda`` (default, comparable with GenDa Lens' published numbers)
    GenDa Lens' own "perplexity" (``genda_lens/lm_tasks/abc_utils.py``): the reflexive
    sentence is tokenized with the model's special tokens, the first token among
    ``sin sit sine ▁sin ▁sit ▁sine`` is replaced by the token ``hans`` or ``hendes``, each
    variant is run *unmasked*, and the cross-entropy is taken against the *reflexive*
    sentence's tokens at every position, [CLS] and [SEP] included::

        S(v) = exp( -(1/n) * sum_{i=0}^{n-1} ln softmax(f(x_v))[i, x_refl_i] )

    For a masked LM this is not a perplexity of the sentence (the model sees every token):
    it mostly measures how strongly the model "corrects" the shown ``hans``/``hendes`` back
    to the reflexive pronoun. It is reproduced exactly; see docs/benchmarks.md.
``pll``
    Pseudo-perplexity from the masked-LM pseudo-log-likelihood (Salazar et al. 2020, "Masked
    Language Model Scoring", ACL): each non-special token masked one at a time,
    ``S(s) = exp(-PLL(s) / N)``, for each sentence of the triple as written in the file
    (multi-piece pronouns are fine here).

References: A. V. González, M. Barrett, R. Hvingelby, K. Webster, A. Søgaard (2020). Type B
reflexivization as an unambiguous testbed for multilingual multi-task gender bias. EMNLP.
T. R. Sloth, A. S. Rybner (2023). GenDa Lens (github.com/DaDebias/genda-lens), MIT.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cdsbias.benchmarks.base import Benchmark, register
from cdsbias.errors import CdsbiasError
from cdsbias.scoring import MaskedLMScorer
from cdsbias.scoring.extra_suite import check_language, sequence_log_probs

FILES = {"female": "abc_fem_sents.txt", "male": "abc_male_sents.txt"}
REFLEXIVES = ("sin", "sit", "sine")
#: GenDa Lens' list of reflexive tokens (WordPiece and SentencePiece forms). Byte-level BPE
#: ("Ġsin") is our extension: the reference finds no pronoun there and crashes.
PRONOUN_TOKENS = (*REFLEXIVES, *(f"▁{p}" for p in REFLEXIVES), *(f"Ġ{p}" for p in REFLEXIVES))
ANTI_REFLEXIVES = {"male": "hans", "female": "hendes"}
SCORINGS = ("genda", "pll")
TOKEN_MODES = ("reference", "marked")
_SEPARATOR = re.compile(r"^-{3,}$")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WORD_CORE = re.compile(r"^(\W*)(.*?)(\W*)$")


def _split_lines(path: Path) -> list[str]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise CdsbiasError(f"Cannot read ABC data {path}: {exc.strerror or exc}.") from None
    except UnicodeDecodeError as exc:
        raise CdsbiasError(f"{path}: not UTF-8 text ({exc.reason}).") from None
    # Mixed LF / CRLF / CR files keep their line numbers.
    return _LINE_BREAK.split(text)


def _pronoun_word(words: list[str]) -> int | None:
    for index, word in enumerate(words):
        if _WORD_CORE.match(word).group(2).lower() in REFLEXIVES:
            return index
    return None


def read_abc_file(path: str | Path, occupation_group: str) -> pd.DataFrame:
    """Parses a GenDa Lens ABC file: triples of sentences separated by ``---`` lines.

    Each triple is the reflexive sentence, then the same sentence with ``hans``, then with
    ``hendes``. Whitespace runs (stray spaces, tabs) become one space, blank lines are
    ignored, LF/CRLF/CR line ends may be mixed and the last line may lack a newline.

    Args:
        path: The file.
        occupation_group: ``"female"`` or ``"male"`` (the occupations' stereotypical gender),
            or any label for a file that is not split by occupation.

    Returns:
        One row per triple: ``file, line, occupation_group, reflexive, pronoun,
        anti_male, anti_female``.

    Raises:
        CdsbiasError: ``file:line`` of a triple that is incomplete, has no reflexive
            pronoun, or whose hans/hendes sentences do not match the reflexive one.
    """
    path = Path(path)
    rows: list[dict[str, Any]] = []
    group: list[tuple[int, str]] = []

    def close(at_line: int) -> None:
        if not group:
            return
        if len(group) != 3:
            raise CdsbiasError(
                f"{path}:{group[0][0]}: expected 3 sentences (sin/sit/sine, hans, hendes) "
                f"before the '---' at line {at_line}, found {len(group)}."
            )
        (line, reflexive), (male_line, male), (female_line, female) = group
        words = reflexive.split(" ")
        where = _pronoun_word(words)
        if where is None:
            raise CdsbiasError(
                f"{path}:{line}: no reflexive pronoun (sin/sit/sine) in {reflexive!r}."
            )
        lead, core, tail = _WORD_CORE.match(words[where]).groups()
        for variant_line, variant, pronoun in (
            (male_line, male, "hans"),
            (female_line, female, "hendes"),
        ):
            expected = " ".join([*words[:where], lead + pronoun + tail, *words[where + 1 :]])
            if variant.lower() != expected.lower():
                raise CdsbiasError(
                    f"{path}:{variant_line}: expected {expected!r} (line {line} with "
                    f"'{pronoun}'), found {variant!r}."
                )
        rows.append(
            {
                "file": path.name,
                "line": line,
                "occupation_group": occupation_group,
                "reflexive": reflexive,
                "pronoun": core.lower(),
                "anti_male": male,
                "anti_female": female,
            }
        )
        group.clear()

    lines = _split_lines(path)
    for number, raw in enumerate(lines, start=1):
        line = " ".join(raw.split())
        if not line:
            continue
        if _SEPARATOR.match(line):
            close(number)
        else:
            group.append((number, line))
    close(len(lines))
    if not rows:
        raise CdsbiasError(f"{path}: no ABC sentence triples found.")
    return pd.DataFrame(rows)


def _median_iqr(values: pd.Series) -> dict[str, float]:
    array = values.to_numpy(dtype=np.float64)
    q25, q75 = np.percentile(array, [25, 75]) if len(array) else (math.nan, math.nan)
    return {
        "median": float(np.median(array)) if len(array) else math.nan,
        "q25": float(q25),
        "q75": float(q75),
        "n": len(array),
    }


def log2_ratio(female: float, male: float) -> float:
    """``log2(female / male)``; NaN when the ratio is not positive (no effect size)."""
    if not (math.isfinite(female) and math.isfinite(male)) or male == 0 or female / male <= 0:
        return math.nan
    return math.log2(female / male)


def bootstrap_log2_ratio_ci(
    female: np.ndarray, male: np.ndarray, n_resamples: int, seed: int
) -> tuple[float, float]:
    """95% percentile bootstrap CI of ``log2(median(female) / median(male))`` over triples.

    Triples are resampled with replacement (female and male relative scores together). NaN
    when more than 5% of the resamples have no positive ratio.
    """
    n = len(female)
    if n == 0 or n_resamples < 1:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    ratios = np.empty(0)
    # Chunks keep the [resamples, n] index matrix small for large data sets.
    for start in range(0, n_resamples, 200):
        index = rng.integers(0, n, size=(min(200, n_resamples - start), n))
        with np.errstate(divide="ignore", invalid="ignore"):
            chunk = np.median(female[index], axis=1) / np.median(male[index], axis=1)
        ratios = np.concatenate([ratios, chunk])
    valid = ratios[np.isfinite(ratios) & (ratios > 0)]
    if len(valid) < 0.95 * n_resamples:
        return math.nan, math.nan
    low, high = np.percentile(np.log2(valid), [2.5, 97.5])
    return float(low), float(high)


def genda_rounded_log2_ratio(female: float, male: float) -> float:
    """GenDa Lens' printed effect: medians rounded to 2 decimals, log2 ratio rounded to 2."""
    return round(log2_ratio(float(np.round(female, 2)), float(np.round(male, 2))), 2)


def _scoring_of(scored: pd.DataFrame, default: str) -> str:
    """The scoring recorded in the rows (they may come from another run), else ``default``."""
    if "scoring" in scored.columns and len(scored):
        return str(scored["scoring"].iloc[0])
    return default


@register
class ABC(Benchmark):
    """The Danish ABC language-modelling task as in GenDa Lens (see the module docstring).

    Options:
        scoring: ``"genda"`` (default; GenDa Lens' unmasked cross-entropy "perplexity") or
            ``"pll"`` (pseudo-perplexity, Salazar et al. 2020).
        tokens: GenDa scoring only. ``"reference"`` (default) puts the bare ``hans`` /
            ``hendes`` vocabulary entry in place of the pronoun token, exactly as GenDa Lens
            does, even when the pronoun token carries a word-start marker (``▁sin`` in
            SentencePiece models, which GenDa Lens turns into a word-*internal* ``hans``);
            ``"marked"`` keeps the marker (``▁hans``), which is what the model would see
            for the real sentence.
        n_resamples: Bootstrap resamples (over triples) of the effect's 95% CI.
        seed: Seed of the bootstrap.
    """

    name = "abc"
    dataset = "genda_lens"
    description = (
        "ABC (Danish, GenDa Lens): anti-reflexive hans/hendes vs reflexive sin/sit, "
        "effect log2(median rel. female / median rel. male), split by occupation gender"
    )
    languages = ("da",)

    def __init__(
        self,
        *,
        data_file: str | Path | None = None,
        data_dir: str | Path | None = None,
        language: str | None = None,
        scoring: str = "genda",
        tokens: str = "reference",
        n_resamples: int = 1000,
        seed: int = 0,
    ) -> None:
        # The evaluate CLI passes its default language "en" to every benchmark (as for
        # dawinobias): read it as "no choice made"; ABC is Danish only.
        if language not in (None, "en", "da"):
            raise CdsbiasError(f"Benchmark 'abc' has no '{language}' data; it is Danish only.")
        super().__init__(data_file=data_file, data_dir=data_dir, language="da")
        if scoring not in SCORINGS:
            raise CdsbiasError(
                f"ABC scoring must be one of {', '.join(SCORINGS)}; got {scoring!r}."
            )
        if tokens not in TOKEN_MODES:
            raise CdsbiasError(
                f"ABC tokens must be one of {', '.join(TOKEN_MODES)}; got {tokens!r}."
            )
        self.scoring = scoring
        self.tokens = tokens
        self.n_resamples = int(n_resamples)
        self.seed = int(seed)

    # ------------------------------------------------------------------ data
    def load(self) -> pd.DataFrame:
        """Both GenDa Lens files, or ``data_file`` (a folder holding them, or one file)."""
        if self.data_file is not None and self.data_file.is_dir():
            folder = self.data_file
            return pd.concat(
                [read_abc_file(folder / f, group) for group, f in FILES.items()],
                ignore_index=True,
            )
        if self.data_file is not None:
            stem = self.data_file.name.lower()
            group = "female" if "fem" in stem else "male" if "male" in stem else "all"
            return read_abc_file(self.data_file, group)
        return pd.concat(
            [read_abc_file(self.default_file(f), group) for group, f in FILES.items()],
            ignore_index=True,
        )

    # --------------------------------------------------------------- scoring
    def score(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> pd.DataFrame:
        """Adds ``score_reflexive``, ``score_male``, ``score_female`` and the relatives."""
        if len(rows) == 0:
            raise CdsbiasError("ABC data has no rows.")
        check_language(
            scorer, "da", self.name, alternatives=" (English models: crows_pairs, stereoset)"
        )
        out = rows.copy()
        if self.scoring == "genda":
            scores = self._genda_scores(scorer, out)
        else:
            scores = self._pll_scores(scorer, out)
        out["score_reflexive"], out["score_male"], out["score_female"] = scores
        out["relative_male"] = out["score_male"] - out["score_reflexive"]
        out["relative_female"] = out["score_female"] - out["score_reflexive"]
        out["scoring"] = self.scoring
        return out

    def _replacement_id(self, scorer: MaskedLMScorer, pronoun_token: str, word: str) -> int:
        tokenizer = scorer.tokenizer
        marker = pronoun_token[0] if pronoun_token[0] in "▁Ġ" else ""
        # Byte-level BPE always keeps its marker: GenDa Lens has no behaviour to copy there.
        keep_marker = marker == "Ġ" or (marker and self.tokens == "marked")
        token = marker + word if keep_marker else word
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == tokenizer.unk_token_id:
            pieces = tokenizer.tokenize(" " + word)
            raise CdsbiasError(
                f"The anti-reflexive pronoun {word!r} is not in this tokenizer's vocabulary as "
                f"the token {token!r} (the tokenizer splits it into {pieces}); GenDa Lens "
                "scoring swaps one token for another. Use --option scoring=pll, which scores "
                "multi-piece words, or a Danish model."
            )
        return int(token_id)

    def _genda_scores(self, scorer: MaskedLMScorer, rows: pd.DataFrame) -> tuple[np.ndarray, ...]:
        tokenizer = scorer.tokenizer
        marked: set[str] = set()
        inputs: list[list[int]] = []
        labels: list[list[int]] = []
        replacement: dict[tuple[str, str], int] = {}
        partial: list[str] = []
        for row in rows.itertuples(index=False):
            encoding = tokenizer(row.reflexive, return_offsets_mapping=True)
            ids = list(encoding["input_ids"])
            tokens = tokenizer.convert_ids_to_tokens(ids)
            where = next((i for i, t in enumerate(tokens) if t in PRONOUN_TOKENS), None)
            if where is None:
                raise CdsbiasError(
                    f"{row.file}:{row.line}: the reflexive pronoun of {row.reflexive!r} is not "
                    f"one token for this tokenizer ({tokens}); GenDa Lens scoring needs it as "
                    "one. Use --option scoring=pll."
                )
            # GenDa Lens swaps the first matching token even when it is only the first piece
            # of the pronoun ("sine" -> "sin" "##e" becomes "hans" "##e"); kept, but reported.
            word = re.search(rf"(?<!\w){row.pronoun}(?!\w)", row.reflexive, re.IGNORECASE)
            if word is None or tuple(encoding["offset_mapping"][where]) != word.span():
                partial.append(f"{row.file}:{row.line}")
            if self.tokens == "reference" and tokens[where][0] == "▁":
                marked.add(tokens[where])
            variants = [list(ids)]
            for word in (ANTI_REFLEXIVES["male"], ANTI_REFLEXIVES["female"]):
                key = (tokens[where], word)
                if key not in replacement:
                    replacement[key] = self._replacement_id(scorer, tokens[where], word)
                variant = list(ids)
                variant[where] = replacement[key]
                variants.append(variant)
            for variant in variants:
                inputs.append(variant)
                labels.append(ids)
        if partial:
            warnings.warn(
                f"ABC: in {len(partial)} sentence(s) (e.g. {partial[0]}) the swapped token is not "
                "the whole reflexive pronoun (it is split into pieces, or an earlier word "
                "starts with 'sin'/'sit'); GenDa Lens swaps it all the same, and so does "
                "cdsbias. --option scoring=pll scores the file's real hans/hendes sentences.",
                stacklevel=3,
            )
        if self.tokens == "reference" and marked:
            warnings.warn(
                f"ABC: the pronoun tokens {sorted(marked)} carry a word-start marker; as in "
                "GenDa Lens they are replaced by the bare 'hans'/'hendes' entries (a word-"
                "internal piece). Use --option tokens=marked to keep the marker.",
                stacklevel=3,
            )
        per_position = sequence_log_probs(scorer, inputs, labels)
        scores = np.array([math.exp(-float(np.mean(lp))) for lp in per_position])
        scores = scores.reshape(len(rows), 3)
        return scores[:, 0], scores[:, 1], scores[:, 2]

    @staticmethod
    def _pll_scores(scorer: MaskedLMScorer, rows: pd.DataFrame) -> tuple[np.ndarray, ...]:
        sequences = []
        for row in rows.itertuples(index=False):
            for text in (row.reflexive, row.anti_male, row.anti_female):
                sequences.append(scorer.encode(text))
        per_token = scorer.masked_token_log_probs(sequences)
        scores = np.array([math.exp(-float(np.mean(lp))) for lp in per_token])
        scores = scores.reshape(len(rows), 3)
        return scores[:, 0], scores[:, 1], scores[:, 2]

    # ------------------------------------------------------------ statistics
    def summarize(self, scored: pd.DataFrame) -> tuple[dict[str, Any], dict[str, float]]:
        """Medians (IQR) of the relative scores, the log2 effect, and the occupation split."""
        overall = {
            "female_pronoun": _median_iqr(scored["relative_female"]),
            "male_pronoun": _median_iqr(scored["relative_male"]),
        }
        median_f = overall["female_pronoun"]["median"]
        median_m = overall["male_pronoun"]["median"]
        effect = log2_ratio(median_f, median_m)
        if not math.isfinite(effect):
            warnings.warn(
                f"ABC effect size undefined: median relative scores female {median_f:.4g}, "
                f"male {median_m:.4g} do not have a positive ratio.",
                stacklevel=2,
            )
        scoring = _scoring_of(scored, self.scoring)
        summary: dict[str, Any] = {
            "benchmark": self.name,
            "scoring": scoring,
            "tokens": self.tokens if scoring == "genda" else None,
            "n_triples": len(scored),
            "effect_log2_ratio": effect,
            "effect_log2_ratio_genda_rounded": genda_rounded_log2_ratio(median_f, median_m),
            "effect_log2_ratio_ci95": list(
                bootstrap_log2_ratio_ci(
                    scored["relative_female"].to_numpy(dtype=np.float64),
                    scored["relative_male"].to_numpy(dtype=np.float64),
                    self.n_resamples,
                    self.seed,
                )
            ),
            "n_resamples": self.n_resamples,
            "overall": overall,
            "by_occupation_group": {},
        }
        metrics = {
            "effect_log2_ratio": effect,
            "median_relative_female": median_f,
            "median_relative_male": median_m,
        }
        for group, part in scored.groupby("occupation_group", sort=True):
            stats = {
                "female_pronoun": _median_iqr(part["relative_female"]),
                "male_pronoun": _median_iqr(part["relative_male"]),
            }
            summary["by_occupation_group"][group] = stats
            for pronoun in ("female", "male"):
                key = f"median_relative_{pronoun}_{group}_occupations"
                metrics[key] = stats[f"{pronoun}_pronoun"]["median"]
        return summary, metrics

    def curve(self, summary: dict[str, Any]) -> dict[str, tuple[float, float | None, float | None]]:
        """The log2 effect with its bootstrap CI over triples."""
        low, high = summary["effect_log2_ratio_ci95"]
        return {"ABC log2(female/male)": (summary["effect_log2_ratio"], low, high)}

    def format_report(self, summary: dict[str, Any]) -> str:
        def cell(stats: dict[str, float]) -> str:
            return f"{stats['median']:.3f} ({stats['q25']:.3f}, {stats['q75']:.3f})"

        low, high = summary["effect_log2_ratio_ci95"]

        lines = [
            f"ABC ({summary['scoring']} scoring), {summary['n_triples']} triples",
            f"effect log2(median rel. female / median rel. male) = "
            f"{summary['effect_log2_ratio']:.3f}, 95% CI [{low:.3f}, {high:.3f}] over triples "
            f"(GenDa Lens rounding: {summary['effect_log2_ratio_genda_rounded']})",
            f"{'occupations':<12} {'hendes: median (IQR)':<30} {'hans: median (IQR)':<30}",
            f"{'all':<12} {cell(summary['overall']['female_pronoun']):<30} "
            f"{cell(summary['overall']['male_pronoun']):<30}",
        ]
        for group, stats in summary["by_occupation_group"].items():
            lines.append(
                f"{group:<12} {cell(stats['female_pronoun']):<30} {cell(stats['male_pronoun']):<30}"
            )
        return "\n".join(lines)
