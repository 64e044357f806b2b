"""Loading a masked LM (or an adapter onto its base) from the hub or a local folder, with clear
errors."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cdsbias.errors import CdsbiasError
from cdsbias.io import check_json_files, check_safetensors
from cdsbias.methods import (
    Method,
    attached_methods,
    attaching_methods,
    saved_method,
    saved_methods,
)
from cdsbias.methods.head_fold import records_folded_fit, remember_folded

#: What to do about a damaged weights file of a local model folder.
DAMAGED_WEIGHTS_FIX = "copy the folder again from where it was saved, or save the model again"


def resolve_device(device: str | None = None) -> Any:
    """Returns the ``torch.device`` to score on: the one asked for, else CUDA, MPS or CPU."""
    import torch

    if device:
        try:
            return torch.device(device)
        except RuntimeError as exc:
            raise CdsbiasError(f"Unknown device '{device}': {exc}") from None
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


@contextmanager
def progress_bars(enabled: bool) -> Iterator[None]:
    """Shows (``True``) or hides transformers' and huggingface_hub's progress bars
    ("Loading weights", downloads, "Writing model shards") inside the block, then restores
    what was set before."""
    from transformers.utils import logging as hf_logging

    if enabled or not hf_logging.is_progress_bar_enabled():
        yield
        return
    import huggingface_hub.utils as hub_utils

    hub_was_disabled = hub_utils.are_progress_bars_disabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.enable_progress_bar()
        if hub_was_disabled:
            hub_utils.disable_progress_bars()


def _missing_head_keys(model: Any, missing_keys: list[str]) -> list[str]:
    """Missing checkpoint keys that belong to the LM head rather than the encoder."""
    prefix = getattr(model, "base_model_prefix", "")
    return [key for key in missing_keys if not (prefix and key.startswith(prefix + "."))]


def load_masked_lm(
    name_or_path: str | os.PathLike,
    *,
    revision: str | None = None,
    dtype: Any = None,
    progress: bool = True,
    config_overrides: dict[str, Any] | None = None,
    base_model: str | os.PathLike | None = None,
    for_training: bool = False,
) -> tuple[Any, Any]:
    """Loads ``(model, tokenizer)`` for masked-LM scoring.

    Refuses, with one readable line, what would otherwise give silent garbage: a
    checkpoint whose MLM head weights are absent (``transformers`` would initialise
    them at random and only warn), an architecture without a masked-LM class, a
    tokenizer without a mask token.

    ``name_or_path`` may also be a folder that a debiasing method saved instead of full
    weights, e.g. an adapter (:func:`cdsbias.methods.saved_method` tells which method): the
    method attaches it to its base (:meth:`~cdsbias.methods.Method.attach`, not merged, so
    scores equal those of the training run bit for bit). The base comes from the folder's
    config, or is the folder's own full weights (:meth:`~cdsbias.methods.Method.saved_base`);
    the tokenizer comes from the folder when it has one. A folder that holds a method to
    attach on top of its model (the forward hook of a ``posthoc_apply: hook`` run,
    :func:`cdsbias.methods.attached_methods`) gets it attached; so does a hub repository
    that holds one (its files fetched with ``huggingface_hub``: one more request per hub
    model, none for a local folder; offline, the cached files, else a warning that names
    the fix). A folder or repository whose map is folded into the head records the map on
    the model (its file fetched too), so that sentence encodings are read through it
    (:func:`cdsbias.methods.head_fold.remember_folded`).

    Args:
        name_or_path: A hub model id, a local folder or a local adapter folder.
        revision: Hub revision (branch, tag or commit).
        dtype: Optional ``torch.dtype`` for the weights.
        progress: Show transformers' progress bars (downloads, "Loading weights").
        config_overrides: Config values to load the model with (e.g. training dropout);
            each must be a setting of the model's config.
        base_model: For an adapter folder, the base to load it onto instead of the one its
            config names (e.g. a local copy of that hub model); ignored for a model.
        for_training: The model is to be trained (``train.py``): a model with a method to
            attach on top (a hook, not weights) is refused with the fix, since training
            would train under it and save weights without it.

    Returns:
        The model in eval mode and its tokenizer.

    Raises:
        CdsbiasError: If the model cannot be loaded or has no usable MLM head, or an
            adapter's base model is missing, or (``for_training``) it has a method attached.
    """
    folder = Path(str(name_or_path))
    options = {"dtype": dtype, "progress": progress, "config_overrides": config_overrides}
    if folder.is_dir():  # a cut-short weights file is named, not a traceback of the loader
        check_safetensors(folder, fix=DAMAGED_WEIGHTS_FIX)
    method = saved_method(folder) if folder.is_dir() else None
    if method is not None:
        loaded = _load_saved(folder, method, options, base_model)
        return _attach_saved(folder, *loaded, for_training=for_training)
    try:
        loaded = _load_model(str(name_or_path), revision=revision, **options)
    except CdsbiasError:
        # A hub repository of an adapter (what `cdsbias publish` uploads for adapter runs)
        # has no config.json; look for one only after a model failed, so loading a model
        # costs no extra request.
        found = _hub_saved_snapshot(str(name_or_path), revision)
        if found is None:
            raise
        loaded = _load_saved(found[0], found[1], options, base_model)
        return _attach_saved(found[0], *loaded, for_training=for_training)
    if not folder.is_dir():  # a hub repository: its attached files, if it has any
        folder = _hub_attached_snapshot(str(name_or_path), revision) or folder
    return _attach_saved(folder, *loaded, for_training=for_training, shown=str(name_or_path))


def _attach_saved(
    folder: Path, model: Any, tokenizer: Any, *, for_training: bool = False, shown: str = ""
) -> tuple[Any, Any]:
    """The loaded model with what ``folder`` saved to act on top of it (e.g. the forward
    hook of a ``posthoc_apply: hook`` run: :func:`cdsbias.methods.attached_methods`), so the
    folder scores what its run scored; ``for_training`` refuses such a folder. A folded fit
    (``posthoc_apply: fold``) is in the weights already; the model only records its map, so
    that sentence encodings are read through it as the run read them
    (:func:`cdsbias.methods.head_fold.remember_folded`; not for training, whose encoder
    would change under it)."""
    if folder.is_dir():
        if not for_training:
            model = remember_folded(model, folder)
        for method in attached_methods(folder):
            if for_training:
                raise CdsbiasError(
                    f"{shown or folder} holds a {method.title} applied on top of its weights "
                    f"({', '.join(method.attached_files)}: a forward hook, not weights), so a "
                    "run on it would train under the hook and save weights without it; "
                    f"{method.attached_fix or 'apply it to the weights first'}, or train on "
                    "a copy of the folder without those files (its weights alone)."
                )
            try:
                model = method.attach(model, folder)
            except CdsbiasError as exc:
                raise CdsbiasError(
                    f"Cannot attach the {method.title} saved in {folder}: {exc}"
                ) from None
    return model, tokenizer


def _hub_attached_snapshot(name: str, revision: str | None) -> Path | None:
    """The local snapshot folder of hub repository ``name`` with the files of a method to
    attach on top of its model (:attr:`Method.attached_files`), fetched now; None when it
    holds none. Offline or unreachable, the cached files; when nothing is cached and the
    hub cannot say whether the repository has such files, a warning names the fix."""
    import warnings

    from cdsbias.hub import is_repo_id

    if Path(name).exists() or not is_repo_id(name):
        return None
    import huggingface_hub
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    for files in dict.fromkeys(cls.attached_files for cls in attaching_methods()):
        try:  # the first file says whether the method acts (a fit record), then the rest
            folder = Path(huggingface_hub.hf_hub_download(name, files[0], revision=revision))
            folder = folder.parent
            # A folded map acts in the weights already; its file is fetched all the same,
            # so that sentence encodings are read through it (remember_folded).
            acts = any(cls.attaches(folder) for cls in attaching_methods(files))
            if not acts and not records_folded_fit(folder):
                continue
            for other in files[1:]:
                huggingface_hub.hf_hub_download(name, other, revision=revision)
        except LocalEntryNotFoundError:  # offline, or the hub did not answer: not cached
            cached = huggingface_hub.try_to_load_from_cache(name, files[0], revision=revision)
            if cached is None:  # never looked up (a cached "absent" is not None)
                titles = ", ".join(cls.title for cls in attaching_methods(files))
                warnings.warn(
                    f"Could not check whether {name} holds a method to attach on top of its "
                    f"weights ({titles}: {files[0]}; the hub is unreachable and it is not "
                    "cached), so it is scored without one. If it was published with a forward "
                    f"hook, load it once online or download it (`hf download {name}`) and "
                    "pass the folder.",
                    stacklevel=3,
                )
            continue
        except (HfHubHTTPError, OSError, ValueError):  # no such file in the repository
            continue
        return folder
    return None


def _hub_saved_snapshot(name: str, revision: str | None) -> tuple[Path, type[Method]] | None:
    """The local snapshot of hub repository ``name`` if a method saved it, and the method."""
    from cdsbias.hub import is_repo_id

    if Path(name).exists() or not is_repo_id(name):
        return None
    from huggingface_hub import hf_hub_download, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    for method in saved_methods():
        try:
            hf_hub_download(name, method.files()[0], revision=revision)
        except (HfHubHTTPError, LocalEntryNotFoundError, OSError, ValueError):
            continue
        return Path(snapshot_download(name, revision=revision)), method
    return None


def _load_saved(
    folder: Path,
    method: type[Method],
    options: dict[str, Any],
    base_model: str | os.PathLike | None = None,
) -> tuple[Any, Any]:
    """A folder a method saved: its base (``base_model``, else what the method names), the
    method's files attached, the tokenizer."""
    from transformers import AutoTokenizer

    config_file = method.files()[0]
    settings = method.saved_config(folder)
    base = str(base_model) if base_model is not None else method.saved_base(folder)
    if not base:
        raise CdsbiasError(
            f"The adapter in '{folder}' does not name its base model; set "
            f"base_model_name_or_path in {folder / config_file}."
        )
    try:
        model, tokenizer = _load_model(base, revision=settings.get("revision"), **options)
    except CdsbiasError as exc:
        raise CdsbiasError(
            f"The adapter in '{folder}' needs its base model '{base}' (base_model_name_or_path "
            f"in {config_file}), which cannot be loaded: {exc}"
        ) from None
    try:
        model = method.attach(model, folder)
    except CdsbiasError as exc:
        raise CdsbiasError(f"{exc} (base model '{base}')") from None
    if (folder / "tokenizer_config.json").is_file():
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(folder))
        except (OSError, ValueError) as exc:
            check_json_files(folder, fix=DAMAGED_WEIGHTS_FIX)
            raise CdsbiasError(f"Cannot load the tokenizer of '{folder}': {exc}") from None
    model.eval()
    return model, tokenizer


def _load_model(
    name: str,
    *,
    revision: str | None,
    dtype: Any,
    progress: bool,
    config_overrides: dict[str, Any] | None,
) -> tuple[Any, Any]:
    """:func:`load_masked_lm` for a model (hub id or folder of full weights)."""
    import transformers
    from safetensors import SafetensorError
    from transformers import AutoConfig, AutoModelForMaskedLM, AutoTokenizer

    local = Path(name).exists()
    if not local and (name.startswith((".", "/", "~")) or name.count("/") > 1):
        raise CdsbiasError(f"Model folder '{name}' does not exist.")
    unused: dict[str, Any] = {}
    try:
        with progress_bars(progress):
            if config_overrides:
                config, unused = AutoConfig.from_pretrained(
                    name, revision=revision, return_unused_kwargs=True, **config_overrides
                )
            else:
                config = AutoConfig.from_pretrained(name, revision=revision)
    except (OSError, ValueError) as exc:
        if local:  # a damaged config.json is named, not taken for a missing hub model
            check_json_files(name, fix=DAMAGED_WEIGHTS_FIX)
        offline = os.environ.get("HF_HUB_OFFLINE") == "1"
        where = "is not a local folder and could not be fetched from the Hugging Face hub"
        fix = (
            "download it on a connected machine (huggingface-cli download) and pass the folder"
            if offline
            else "check the id, your network, or pass a local folder"
        )
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CdsbiasError(f"Cannot load model '{name}': it {where} ({detail}); {fix}.") from None

    if unused:  # a setting this config does not have would be set silently and do nothing
        raise CdsbiasError(
            f"Model '{name}' (model_type '{config.model_type}') has no setting "
            f"{', '.join(sorted(unused))}; its config cannot take these overrides."
        )
    mapping = transformers.MODEL_FOR_MASKED_LM_MAPPING
    if type(config) not in mapping:
        raise CdsbiasError(
            f"Model '{name}' (model_type '{config.model_type}') has no masked-LM head class in "
            "transformers; bias scoring needs a *ForMaskedLM model such as bert-base-uncased."
        )
    kwargs: dict[str, Any] = {"revision": revision, "output_loading_info": True}
    # The loading report would print a table of missing head weights; we judge them below.
    previous = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    if dtype is not None:
        kwargs["dtype"] = dtype
    if config_overrides:
        kwargs["config"] = config
    try:
        with progress_bars(progress):
            model, info = AutoModelForMaskedLM.from_pretrained(name, **kwargs)
    except (OSError, ValueError, SafetensorError) as exc:
        raise CdsbiasError(f"Cannot load the weights of '{name}': {exc}") from None
    finally:
        transformers.logging.set_verbosity(previous)
    head_missing = _missing_head_keys(model, list(info.get("missing_keys", [])))
    unexpected = list(info.get("unexpected_keys", []))
    if (
        head_missing
        and config.model_type in ("deberta", "deberta-v2")
        and any(key.startswith("lm_predictions.") for key in unexpected)
    ):
        # Hub DeBERTa checkpoints keep their MLM head as lm_predictions.lm_head.*, which
        # transformers loads only with config.legacy = False; the default (True) builds the
        # cls.predictions.* head instead and would leave it random.
        where = (
            f"{name}/config.json"
            if local
            else f"the config.json of a local copy (huggingface-cli download {name} "
            "--local-dir DIR) and pass DIR"
        )
        raise CdsbiasError(
            f"Model '{name}' is a DeBERTa checkpoint whose masked-LM head is stored as "
            'lm_predictions.*, but its config does not say "legacy": false, so transformers '
            "would build the legacy head (cls.predictions.*) with random weights. Add "
            f'"legacy": false to {where}.'
        )
    if head_missing:
        shown = ", ".join(sorted(head_missing)[:3])
        raise CdsbiasError(
            f"Model '{name}' has no trained masked-LM head (missing weights: {shown}"
            f"{', ...' if len(head_missing) > 3 else ''}); it was saved as a bare encoder or for "
            "another task, so its fill-in probabilities would be random. Use a *ForMaskedLM "
            "checkpoint."
        )
    try:
        with progress_bars(progress):
            tokenizer = AutoTokenizer.from_pretrained(name, revision=revision)
    except (OSError, ValueError) as exc:
        if local:
            check_json_files(name, fix=DAMAGED_WEIGHTS_FIX)
        raise CdsbiasError(f"Cannot load the tokenizer of '{name}': {exc}") from None
    model.eval()
    return model, tokenizer
