"""Studies: a grid of ordinary training runs from one spec, run, resumed and tabled.

:mod:`.spec` (the YAML spec), :mod:`.cells` (the grid and each cell's keys), :mod:`.state`
(the lock and each cell's status), :mod:`.job` and :mod:`.executors` (where a cell runs),
:mod:`.runner` (the driver), :mod:`.table`, :mod:`.stats` and :mod:`.outputs` (the table).
``cdsbias study`` (cdsbias/commands/study.py) is the command; docs/studies.md the page.
"""
