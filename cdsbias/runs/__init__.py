"""Run folders and what is done with finished runs: the folder contract (:mod:`.folder`),
evaluated points and curves (:mod:`.points`), ``cdsbias compare`` (:mod:`.summaries`,
:mod:`.compare`), model cards and publishing (:mod:`.card`, :mod:`.publish`)."""

from cdsbias.runs.folder import RunFolder

__all__ = ["RunFolder"]
