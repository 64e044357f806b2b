"""The one "Did you mean" rule behind every unknown-name error."""

from __future__ import annotations

from cdsbias.errors import did_you_mean, unknown_name_error
from cdsbias.options import unknown_key_error


def test_did_you_mean_names_the_closest_names_best_first():
    assert did_you_mean("bec-pro", ["kurita", "becpro", "abc"]) == "Did you mean 'becpro'?"
    # difflib ratio of "learning_rat" to "learning_rate" is 24/25; to "warmup_ratio" 12/24.
    names = ["learning_rate", "warmup_ratio", "seed"]
    assert did_you_mean("learning_rat", names, n=3) == "Did you mean 'learning_rate'?"
    several = did_you_mean("layer.1.output", ["layer.1.outputs", "layer.2.output", "pooler"], n=3)
    assert several == "Did you mean 'layer.1.outputs' or 'layer.2.output'?"
    assert did_you_mean("zzz", ["becpro", "kurita"]) == ""


def test_unknown_name_and_unknown_key_errors_share_the_sentence():
    error = unknown_name_error("benchmark", "bec-pro", ["kurita", "becpro"])
    assert (
        str(error)
        == "Unknown benchmark 'bec-pro'. Did you mean 'becpro'? Available: becpro, kurita"
    )
    error = unknown_name_error("benchmark", "zzz", ["kurita", "becpro"])
    assert str(error) == "Unknown benchmark 'zzz'. Available: becpro, kurita"
    error = unknown_key_error("n_resample", ["n_resamples", "seed"], "becpro option")
    assert str(error) == "Unknown becpro option 'n_resample'. Did you mean 'n_resamples'?"
    error = unknown_key_error("colour", ["n_resamples", "seed"], "becpro option")
    assert str(error) == "Unknown becpro option 'colour'; valid: n_resamples, seed."


def test_suggestions_need_a_ratio_of_at_least_0_6():
    assert did_you_mean("abcd", ["abxy"]) == ""  # ratio 2 * 2 / 8 = 0.5
    assert did_you_mean("abcd", ["abcx"]) == "Did you mean 'abcx'?"  # 2 * 3 / 8 = 0.75
