"""The model card of a published checkpoint: what it is, what acted on it, how to load it,
and every benchmark's bias before and after.

The card is a ``huggingface_hub.ModelCard``. Everything it says about training comes from
the run's own records, read through :class:`~cdsbias.runs.folder.RunFolder`: the method
plan rebuilt from the effective recipe (each method writes its own sentence, tags and
citation, :mod:`cdsbias.methods`), the corpus treatment (:mod:`cdsbias.cds.treatment`),
and each benchmark's own section and hub ``EvalResult``\\ s.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from cdsbias.axes import DEFAULT_AXIS
from cdsbias.cds.treatment import CorpusTreatment
from cdsbias.errors import CdsbiasError
from cdsbias.methods import Method, MethodPlan, attached_methods
from cdsbias.runs.axes_matrix import axis_changes, card_axes_section
from cdsbias.runs.card_recipe import untrained_recipe
from cdsbias.runs.downstream_results import card_section as downstream_card_section
from cdsbias.runs.downstream_results import read_downstream
from cdsbias.runs.folder import CURVE_FILE, RunFolder, axis_name, axis_record
from cdsbias.runs.published_folder import base_hub_id, checkpoint_method

if TYPE_CHECKING:
    from huggingface_hub import ModelCard

BASE_TAGS = ["cdsbias", "gender-bias", "debiasing"]


def _count(n: int) -> str:
    """Exact below 100,000 (``46,304``), else rounded: ``295k``, ``7.7M``, ``110M``."""
    if n < 100_000:
        return f"{n:,}"
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            value = n / size
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return str(n)


def _share(share: float) -> str:
    if share >= 1.0:
        return "100%"
    return f"{share:.2%}" if share < 0.01 else f"{share:.1%}"


def method_statement(
    recorded: dict[str, Any] | None,
    plan: MethodPlan,
    saved: type[Method] | None,
    merged: bool,
    *,
    posthoc: bool = True,
) -> list[str]:
    """The card's lines on what was trained, how much of the model, by which methods, and
    what the repository holds. A ``posthoc_only`` run trained nothing: its lines name the
    post-hoc method alone and claim no trained parameters.

    Args:
        recorded: ``run_info.json["method"]`` (None when the run did not record it).
        plan: The method plan rebuilt from the run's recipe.
        saved: The method whose own files the checkpoint holds (None: full weights).
        merged: Whether those files are published merged into the base weights.
        posthoc: Whether the post-hoc method acted on what is published (false for a
            checkpoint saved during training, before it acted).
    """
    acted = plan.acted(posthoc=posthoc)
    if plan.posthoc_only:
        lines = [f"**Method**: {plan.label()}: the post-hoc method acted on the model as "
                 "loaded.", ""]  # fmt: skip
        return [*lines, *[f"- **{m.title}**: {m.card_text()}." for m in acted], ""]
    label = (recorded or {}).get("label") or plan.label()
    if plan.posthoc is not None and not posthoc:  # the recorded label ends with it
        label = label.removesuffix(f" + {plan.posthoc.label()}")
    if recorded is not None:
        trained = (
            f"{label}: {_count(recorded['trainable_parameters'])} of "
            f"{_count(recorded['total_parameters'])} parameters "
            f"({_share(recorded['trainable_share'])}) trained"
        )
    else:
        trained = label
    if merged:
        published = f"; {saved.card_merged}"
    elif saved is not None:
        published = (
            "; the base model's weights stayed frozen, and this repository holds only the adapter."
        )
    else:
        published = "."
    lines = [f"**Training method**: {trained}{published}", ""]
    lines += [f"- **{m.title}**: {m.card_text()}." for m in acted]
    return [*lines, ""]


def origin_text(
    saved: type[Method] | None, merged: bool, base: str | None, posthoc_only: Method | None = None
) -> str:
    """The card's first words: what this repository is and which model it comes from
    (``posthoc_only``: the post-hoc method of a run that trained nothing)."""
    link = f"[`{base}`](https://huggingface.co/{base})" if base else None
    if posthoc_only is not None:
        return f"{link or 'A masked language model'} with {posthoc_only.title} applied"
    if merged:
        return (
            f"{link} with a {saved.title} adapter merged into its weights"
            if link
            else f"A masked language model with a {saved.title} adapter merged into its weights"
        )
    if saved is not None:
        return f"{saved.card_origin or 'A ' + saved.title} for {link}"
    return f"A fine-tuned version of {link}" if link else "A masked language model"


def card_metadata(saved: type[Method] | None, merged: bool, base: str | None) -> dict[str, Any]:
    """``ModelCardData`` fields that depend on what is published.

    An adapter is related to its base explicitly, so the hub lists it among the base's
    adapters (the hub recognises only some libraries' adapters by their files).
    """
    if merged or saved is None:
        return {"library_name": "transformers"}
    relation = {"base_model_relation": saved.publishes} if base else {}
    library = {"library_name": saved.card_library} if saved.card_library else {}
    return {**library, **relation}


def usage_lines(
    saved: type[Method] | None,
    merged: bool,
    repo_id: str,
    base: str | None,
    has_tokenizer: bool,
    attached: list[type[Method]] | None = None,
) -> list[str]:
    """The card's "How to use" section: the code that loads what this repository holds,
    continued by the code of each method ``attached`` on top of it (a forward hook)."""
    tokenizer_from = repo_id if has_tokenizer or merged or saved is None else base
    lines = ["## How to use", ""]
    if merged or saved is None:
        lines += [
            "```python",
            "from transformers import AutoModelForMaskedLM, AutoTokenizer",
            "",
            f'model = AutoModelForMaskedLM.from_pretrained("{repo_id}")',
            f'tokenizer = AutoTokenizer.from_pretrained("{tokenizer_from}")',
            "```",
        ]
    else:
        lines += saved.usage(repo_id, base, tokenizer_from)
    for method in attached or []:  # inside the same code block, before its closing fence
        end = len(lines) - 1 - lines[::-1].index("```")
        lines[end:end] = method.usage(repo_id, base, tokenizer_from)
    return [*lines, ""]


def model_card(checkpoint: Path, repo_id: str, *, merge: bool = False) -> ModelCard:
    """The hub model card (metadata with ``model-index`` results + evidence) of ``checkpoint``.

    Every benchmark scored during training writes its own section and its own
    ``EvalResult`` entries, before (the first evaluated step) and after (this checkpoint).
    The card says what acted on the model (each method of the plan and the corpus
    treatment, with their citations), what the repository holds (full weights, an
    adapter, or an adapter merged with ``merge``) and how to load it.
    """
    from huggingface_hub import ModelCard, ModelCardData

    run = RunFolder.of(checkpoint)
    points = run.points()
    if not points:
        raise CdsbiasError(f"{run.metrics_file} has no evaluation points.")
    step = RunFolder.step_of(checkpoint)
    # The run's own folder holds its final model: its last point (after a post-hoc method,
    # if one acted). A checkpoint holds the trained model: its step's plain point.
    by_step = {p["step"]: p for p in points if not p.get("posthoc")}
    if step is not None and step not in by_step:
        raise CdsbiasError(f"No bias evaluation was recorded for step {step} of {run.path}.")
    before, after = points[0], points[-1] if step is None else by_step[step]
    step = after["step"]
    # A card states only what the run folder shows: without the effective recipe it would
    # state the defaults (CDS p=0.5, full fine-tuning) whatever the run did.
    recipe, info = run.require_recipe(), run.run_info()
    plan, treatment = run.plan(), CorpusTreatment(recipe)
    plan.read_run(run.path)
    posthoc = bool(after.get("posthoc"))  # a checkpoint precedes the post-hoc method
    saved = checkpoint_method(checkpoint)
    merged = merge and saved is not None and saved.mergeable
    base = base_hub_id(checkpoint, saved, info)
    corpus = info.get("corpus", {})

    sections, eval_results, benchmark_citations = _benchmark_sections(run, before, after, step)
    tags = [*BASE_TAGS, *treatment.tags]
    for method in plan.acted(posthoc=posthoc):
        if not (merged and method is plan.weights):
            tags += [t for t in method.card_tags if t not in tags]
    data = ModelCardData(
        license=recipe.get("license", "apache-2.0"),
        pipeline_tag="fill-mask",
        datasets=corpus.get("datasets") or None,
        base_model=base or None,
        model_name=repo_id.split("/")[-1],
        eval_results=eval_results or None,
        tags=tags,
        **card_metadata(saved, merged, base),
    )
    has_tokenizer = (checkpoint / "tokenizer_config.json").is_file()
    citations = [*treatment.citations, *plan.citations(posthoc=posthoc)]
    citations += [c for c in benchmark_citations if c not in citations]
    lines = [
        f"# {repo_id.split('/')[-1]}",
        "",
        f"{origin_text(saved, merged, base, plan.posthoc if plan.posthoc_only else None)}, "
        f"{treatment.card_text(corpus.get('description') or 'its training text')}. "
        f"Checkpoint: step {step}. Produced with [cdsbias](https://pypi.org/project/cdsbias/).",
        "",
        *method_statement(info.get("method"), plan, saved, merged, posthoc=posthoc),
        *usage_lines(saved, merged, repo_id, base, has_tokenizer, attached_methods(checkpoint)),
        *_axes_lines(recipe, info, before, after),
        f"## Bias before (step {before['step']}) and after (step {step}"
        f"{', post-hoc' if after.get('posthoc') else ''})",
        "",
        *sections,
    ]
    if "heldout_loss" in before and "heldout_loss" in after:
        change = (after["heldout_loss"] - before["heldout_loss"]) / before["heldout_loss"]
        lines += [
            "## Language-modelling cost",
            "",
            f"Held-out MLM loss on original (unswapped) text: {before['heldout_loss']:.4f} "
            f"before, {after['heldout_loss']:.4f} after ({change:+.1%}).",
            "",
        ]
    shown_recipe = info.get("card_recipe", {})
    if plan.posthoc_only:  # as recorded before untrained runs left out their training keys
        shown_recipe = untrained_recipe(shown_recipe)
    # Downstream results are of the final model: a checkpoint's card does not claim them.
    if Path(checkpoint).resolve() == Path(run.path).resolve():
        downstream = read_downstream(run.path)
        lines += downstream_card_section(downstream)
        for summary in downstream.values():
            if summary.get("citation") and summary["citation"] not in citations:
                citations.append(summary["citation"])
    if run.curve_file.exists():
        lines += ["## Bias curve", "", f"![bias and held-out loss per step]({CURVE_FILE})", ""]
    lines += [
        "## Recipe" if plan.posthoc_only else "## Training recipe",
        "",
        "The keys that shaped this model (paths and evaluation settings left out):",
        "",
        "```yaml",
        yaml.safe_dump(shown_recipe, sort_keys=True).strip(),
        "```",
        "",
        "## Citation",
        "",
        *[f"{c}\n" for c in citations],
    ]
    return ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines))


def _benchmark_sections(
    run: RunFolder, before: dict[str, Any], after: dict[str, Any], step: int
) -> tuple[list[str], list[Any], list[str]]:
    """Each benchmark's card section, hub results and citation, from the recorded points."""
    from cdsbias.benchmarks import Snapshot, build_benchmark

    sections: list[str] = []
    eval_results: list[Any] = []
    citations: list[str] = []
    for name in sorted(after.get("benchmarks", {})):
        entry = after["benchmarks"][name]
        benchmark = build_benchmark(
            name, {"language": entry.get("language"), **entry.get("options", {})}
        )
        first = before.get("benchmarks", {}).get(name)
        snap_before = (
            Snapshot(before["step"], first["metrics"], run.summary_at(before["step"], name))
            if first is not None and before is not after
            else None
        )
        posthoc = bool(after.get("posthoc"))
        snap_after = Snapshot(step, entry["metrics"], run.summary_at(step, name, posthoc=posthoc))
        sections += [f"### {name}", "", benchmark.description + ".", "",
                     benchmark.card_section(snap_before, snap_after), ""]  # fmt: skip
        sections += _representation_lines(snap_before, snap_after)
        if snap_before is not None:
            eval_results += benchmark.eval_results(snap_before, when="before")
        eval_results += benchmark.eval_results(snap_after, when="after")
        if benchmark.citation and benchmark.citation not in citations:
            citations.append(benchmark.citation)
    return sections, eval_results, citations


def _axes_lines(
    recipe: dict[str, Any], info: dict[str, Any], before: dict[str, Any], after: dict[str, Any]
) -> list[str]:
    """The axis the model was debiased for, with whose word lists CDA and the fits read (as
    the run recorded its axis), and every axis measured, before and after; none for a gender
    run that measured no axis-scoped benchmark (its card as it always was)."""
    debiased = axis_name(recipe)  # a user's file by its name, never its path
    changes = axis_changes([before, after])
    if not changes and debiased == DEFAULT_AXIS:
        return []
    recorded = info.get("bias_axis") or axis_record(recipe.get("bias_axis")) or {}
    return card_axes_section(debiased, changes, word_lists=recorded.get("word_lists"))


def _representation_lines(before: Any, after: Any) -> list[str]:
    """For a benchmark that read hidden states, which ones at each point (the summary's
    ``representation``: the encoder's own, or through a post-hoc map, folded or hooked)."""
    read_after = (after.summary or {}).get("representation")
    if not read_after:
        return []
    read_before = ((before.summary or {}).get("representation") if before else None) or None
    if read_before and read_before != read_after:
        text = f"before: {read_before}; after: {read_after}"
    else:
        text = read_after
    return [f"Hidden states read: {text}.", ""]
