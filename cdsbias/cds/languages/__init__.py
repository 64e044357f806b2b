"""The CDS languages: a registry of code -> the module and class that hold its rules.

``get_language("da")`` builds a language; an unknown code is a one-line error with a
did-you-mean. Modules are imported only when their language is asked for, so a language's
word lists load (and can fail, naming the file) only when it is used. Adding a language is
one line in ``LANGUAGES`` plus its module and data (see base.py).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Iterable
from typing import Any

from cdsbias.cds.languages.base import LETTERS, Language, Skip
from cdsbias.errors import CdsbiasError, unknown_name_error

#: Language code -> ``"module:Class"``.
LANGUAGES: dict[str, str] = {
    "en": "cdsbias.cds.languages.en:English",
    "de": "cdsbias.cds.languages.de:German",
    "da": "cdsbias.cds.languages.da:Danish",
}
DEFAULT_LANGUAGE = "en"

#: Codes people type for a language cdsbias has that are not its ISO 639-1 code, and why:
#: a country's ISO 3166 code where it differs from its language's (Denmark DK, Danish da),
#: the ISO 639-2 codes and the languages' names. Spelling alone would miss them: "dk" is as
#: close to "de" as to "da".
CODE_ALIASES: dict[str, tuple[str, str]] = {
    "dk": ("da", "'dk' is Denmark's country code; Danish is 'da'"),
    "dan": ("da", "'dan' is the three-letter code of Danish; cdsbias uses 'da'"),
    "danish": ("da", "Danish is 'da'"),
    "dansk": ("da", "Danish is 'da'"),
    "at": ("de", "'at' is Austria's country code; German is 'de'"),
    "deu": ("de", "'deu' is the three-letter code of German; cdsbias uses 'de'"),
    "ger": ("de", "'ger' is the three-letter code of German; cdsbias uses 'de'"),
    "german": ("de", "German is 'de'"),
    "deutsch": ("de", "German is 'de'"),
    "gb": ("en", "'gb' is the United Kingdom's country code; English is 'en'"),
    "uk": ("en", "'uk' is short for the United Kingdom (and Ukrainian's code); English is 'en'"),
    "us": ("en", "'us' is the United States' country code; English is 'en'"),
    "eng": ("en", "'eng' is the three-letter code of English; cdsbias uses 'en'"),
    "english": ("en", "English is 'en'"),
}

__all__ = [
    "CODE_ALIASES",
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "Language",
    "Skip",
    "alias_hint",
    "check_language",
    "get_language",
    "language_class",
    "unknown_language_error",
]


def language_class(code: str) -> type[Language]:
    """The class of language ``code`` (imports its module).

    Raises:
        CdsbiasError: An unknown code (with the nearest known one), or a module whose word
            lists cannot be read (naming the file).
    """
    if code not in LANGUAGES:
        raise unknown_language_error("CDS language", str(code), LANGUAGES)
    module_name, class_name = LANGUAGES[code].split(":")
    try:
        module = importlib.import_module(module_name)
    except CdsbiasError:
        raise
    except (OSError, UnicodeError, ValueError) as exc:
        raise CdsbiasError(f"could not load the '{code}' CDS word lists: {exc}") from None
    return getattr(module, class_name)


def alias_hint(code: str, available: Iterable[str]) -> str:
    """``"Did you mean 'da'? ('dk' is Denmark's country code; Danish is 'da'.)"`` when
    ``code`` is one of :data:`CODE_ALIASES` for a code in ``available``, else ``""``."""
    alias = CODE_ALIASES.get(str(code).strip().lower())
    if alias is None or alias[0] not in set(available):
        return ""
    return f"Did you mean '{alias[0]}'? ({alias[1]}.)"


def unknown_language_error(kind: str, code: str, available: Iterable[str]) -> CdsbiasError:
    """:func:`~cdsbias.errors.unknown_name_error` for a language code, aware of the codes
    of :data:`CODE_ALIASES` (``dk`` suggests ``da``, with the reason).

    Args:
        kind: What was looked up, e.g. ``"CDS language"``.
        code: The code the user gave.
        available: The valid codes.
    """
    names = sorted(available)
    hint = alias_hint(code, names)
    if not hint:
        return unknown_name_error(kind, code, names)
    return CdsbiasError(f"Unknown {kind} '{code}'. {hint} Available: {', '.join(names)}")


def get_language(code: str = DEFAULT_LANGUAGE, *, names: bool = True, **options: Any) -> Language:
    """Builds language ``code``'s rules.

    Args:
        code: ``en``, ``da``, ... (``LANGUAGES``).
        names: Whether first names are swapped.
        **options: Passed to the language (English takes ``wordlists`` and ``analyzer``).

    Raises:
        CdsbiasError: As :func:`language_class`, or word lists that fail to load.
    """
    cls = language_class(code)
    try:
        return cls(names=names, **options)
    except CdsbiasError:
        raise
    except (OSError, UnicodeError, ValueError) as exc:
        raise CdsbiasError(f"could not load the {cls.name} CDS word lists: {exc}") from None


#: Words of a corpus sample the language check reads, and how rare the chosen language's
#: marker words must be beside another's before it warns.
CHECK_WORDS = 20_000
_MIN_OTHER_RATE = 0.002
_RATIO = 5.0


def check_language(texts: Iterable[str], code: str, *, option: str = "cds_language") -> str | None:
    """Warns when a corpus looks like another language than the one chosen for CDS.

    Counts, in the first ``CHECK_WORDS`` words, each registered language's
    ``marker_words`` (its third-person pronouns). If another language's markers are at
    least 0.2 % of the words and five times as frequent as the chosen language's, the
    chosen rules would change almost nothing: a ``UserWarning`` names ``option``.

    Args:
        texts: Documents (only the first few thousand words are read).
        code: The chosen language.
        option: How the user sets the language (``cds_language`` or ``--language``).

    Returns:
        The warning's text, or None.
    """
    words: list[str] = []
    for text in texts:
        words.extend(word.lower() for word in LETTERS.findall(text))
        if len(words) >= CHECK_WORDS:
            break
    if not words:
        return None
    words = words[:CHECK_WORDS]
    rates = {}
    for other in LANGUAGES:
        markers = language_class(other).marker_words
        if markers:
            rates[other] = sum(word in markers for word in words) / len(words)
    chosen = rates.get(code, 0.0)
    best = max((c for c in rates if c != code), key=rates.__getitem__, default=None)
    if best is None or rates[best] < _MIN_OTHER_RATE or rates[best] < _RATIO * chosen:
        return None
    chosen_name, best_name = language_class(code).name, language_class(best).name
    message = (
        f"the corpus looks {best_name}, not {chosen_name}: {rates[best]:.1%} of its first "
        f"{len(words):,} words are {best_name} gendered pronouns against {chosen:.1%} "
        f"{chosen_name} ones, so {chosen_name} CDS changes almost nothing; set "
        f"{option}{' ' if option.startswith('-') else ': '}{best} if it is {best_name}"
    )
    warnings.warn(message, UserWarning, stacklevel=2)
    return message
