"""A ``posthoc_apply: hook`` model outside its run: loaded by hub id it gets its hook (the
map fetched with huggingface_hub; offline, the cache or a warning), and training on it is
refused with the fix (a hook is not weights). The hub is a local folder here: no network."""

from __future__ import annotations

import warnings

import pytest
import torch
from tests_helpers import fine_tune
from transformers import AutoModelForMaskedLM, AutoTokenizer

from cdsbias.errors import CdsbiasError
from cdsbias.methods.erasure import ERASURE_FILE, ERASURE_RECORD
from cdsbias.scoring import load_masked_lm

pytestmark = [
    pytest.mark.usefixtures("one_thread"),
    pytest.mark.filterwarnings("ignore:model_config, tokenizer_vocab_size only shape"),
]
PRONOUNS = ["posthoc_word_pairs=pronoun_pairs.json", "posthoc_min_sentences_per_class=5"]


def posthoc_only(tmp_path_factory, becpro, base, method, apply):
    out = tmp_path_factory.mktemp(apply) / "run"
    return fine_tune(out, becpro, base, f"posthoc_method={method}", f"posthoc_apply={apply}",
                     "posthoc_only=true", *PRONOUNS)  # fmt: skip


@pytest.fixture(scope="module")
def hook_run(tmp_path_factory, becpro, base):
    return posthoc_only(tmp_path_factory, becpro, base, "leace", "hook")


@pytest.fixture(scope="module")
def fold_run(tmp_path_factory, becpro, base):
    return posthoc_only(tmp_path_factory, becpro, base, "leace", "fold")


def logits(model, tokenizer):
    batch = tokenizer(["my [MASK] is a nurse .", "he works as a mason ."], return_tensors="pt",
                      padding=True)  # fmt: skip
    with torch.no_grad():
        return model(**batch).logits


@pytest.fixture
def hub(monkeypatch, tmp_path):
    """A stand-in hub: ``repos[repo_id]`` is a published folder. The model loads from it,
    ``hf_hub_download`` answers from it (404 for an absent file) and records each request;
    ``offline`` makes it fail as huggingface_hub does without network and cache."""
    import httpx2
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError, RemoteEntryNotFoundError

    from cdsbias.cli import main as cli
    from cdsbias.scoring import loading

    class Hub:
        def __init__(self):
            self.repos, self.requests, self.offline = {}, [], False

        def publish(self, run, repo_id):
            out = tmp_path / repo_id.replace("/", "--")
            assert cli(["publish", str(run), "--repo-id", repo_id, "--dry-run", "--out",
                        str(out)]) == 0  # fmt: skip
            self.repos[repo_id] = out
            return out

    stand_in = Hub()

    def download(repo_id, filename, revision=None, **_):
        stand_in.requests.append((repo_id, filename))
        if stand_in.offline:
            raise LocalEntryNotFoundError("offline and not in the cache")
        path = stand_in.repos[repo_id] / filename
        if not path.is_file():
            url = f"https://huggingface.co/{repo_id}/resolve/main/{filename}"
            response = httpx2.Response(404, request=httpx2.Request("HEAD", url))
            raise RemoteEntryNotFoundError(f"404: {filename}", response=response)
        return str(path)

    real_load = loading._load_model
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", download)
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: None)

    def load_model(name, **options):
        return real_load(str(stand_in.repos.get(name, name)), **options)

    monkeypatch.setattr(loading, "_load_model", load_model)
    monkeypatch.chdir(tmp_path)  # no local folder is named like the repo ids
    return stand_in


def test_a_hooked_model_loaded_by_hub_id_gets_its_hook(hook_run, hub):
    out = hub.publish(hook_run, "org/hooked")
    model, tokenizer = load_masked_lm("org/hooked", progress=False)
    expected, _ = load_masked_lm(hook_run, progress=False)
    assert torch.equal(logits(model, tokenizer), logits(expected, tokenizer))
    plain = AutoModelForMaskedLM.from_pretrained(out).eval()  # the weights alone differ
    assert float((logits(plain, tokenizer) - logits(model, tokenizer)).abs().max()) > 1e-4
    assert hub.requests == [("org/hooked", ERASURE_RECORD), ("org/hooked", ERASURE_FILE)]


def test_a_folded_or_plain_hub_model_gets_no_hook(fold_run, base, hub):
    """A folded map is in the weights: no hook. Its file is fetched so that sentence
    encodings (SEAT) are read through it, as from the run folder; a plain model costs one
    request and records nothing."""
    from cdsbias.methods.head_fold import applied_erasure

    out = hub.publish(fold_run, "org/folded")
    assert (out / ERASURE_RECORD).is_file()  # the record is published, but says "fold"
    model, tokenizer = load_masked_lm("org/folded", progress=False)
    folded = AutoModelForMaskedLM.from_pretrained(out).eval()
    assert torch.equal(logits(model, tokenizer), logits(folded, tokenizer))
    assert hub.requests == [("org/folded", ERASURE_RECORD), ("org/folded", ERASURE_FILE)]
    assert applied_erasure(model)[1] == "fold"
    from_run, _ = load_masked_lm(fold_run, progress=False)
    assert (applied_erasure(model)[0].projection == applied_erasure(from_run)[0].projection).all()
    hub.repos["org/plain"] = base
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to say about a repository without a hook
        load_masked_lm("org/plain", progress=False)
    assert hub.requests[-1] == ("org/plain", ERASURE_RECORD)
    assert applied_erasure(load_masked_lm(base, progress=False)[0]) is None


def test_a_local_folder_costs_no_hub_request(hook_run, hub):
    load_masked_lm(hook_run, progress=False)
    assert hub.requests == []


def test_offline_without_a_cached_map_warns_naming_the_fix(hook_run, hub, monkeypatch):
    import huggingface_hub

    hub.publish(hook_run, "org/hooked")
    hub.offline = True
    expected = (r"Could not check whether org/hooked holds a method to attach .*"
                r"\(INLP, LEACE, SentenceDebias: posthoc_fit.json; the hub is unreachable.*"
                r"`hf download org/hooked`")  # fmt: skip
    with pytest.warns(UserWarning, match=expected):
        model, tokenizer = load_masked_lm("org/hooked", progress=False)
    plain = AutoModelForMaskedLM.from_pretrained(hub.repos["org/hooked"]).eval()
    assert torch.equal(logits(model, tokenizer), logits(plain, tokenizer))
    # Known absent in the cache (an earlier lookup found no such file): nothing to say.
    monkeypatch.setattr(huggingface_hub, "try_to_load_from_cache", lambda *a, **k: object())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_masked_lm("org/hooked", progress=False)


FIX = (r"holds a LEACE applied on top of its weights \(posthoc_fit.json, "
       r"posthoc_erasure.safetensors: a forward hook, not weights\), so a run on it would "
       r"train under the hook and save weights without it; re-run its fit with "
       r"posthoc_apply: fold")  # fmt: skip


def test_training_on_a_hooked_model_is_refused_naming_the_fix(hook_run, becpro, hub, tmp_path):
    out = tmp_path / "run"
    with pytest.raises(CdsbiasError, match=FIX):
        fine_tune(out, becpro, hook_run, "max_steps=1")
    assert not out.exists()  # refused before anything was written
    hub.publish(hook_run, "org/hooked")
    with pytest.raises(CdsbiasError, match="org/hooked " + FIX):
        load_masked_lm("org/hooked", progress=False, for_training=True)
    # Its weights alone (a copy without the hook's files) train as any model.
    tokenizer = AutoTokenizer.from_pretrained(hook_run)
    weights = tmp_path / "weights"
    AutoModelForMaskedLM.from_pretrained(hook_run).save_pretrained(weights)
    tokenizer.save_pretrained(weights)
    model, _ = load_masked_lm(weights, progress=False, for_training=True)
    assert not model._forward_hooks and not model.base_model._forward_hooks
