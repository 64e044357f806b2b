"""Every command's --help reads as written (issue 36): argparse's ``%`` escaping never shows,
and the front page names what cdsbias measures."""

from __future__ import annotations

import argparse

import pytest

from cdsbias.axes import AXES
from cdsbias.cli import build_parser, main


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subparsers.choices)


@pytest.mark.parametrize("command", sorted(_commands()))
def test_help_shows_no_argparse_escapes(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: cdsbias ")  # an alias prints its command's usage
    assert "%%" not in text and "%(" not in text


def test_front_page_names_every_registered_axis(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "gender bias" not in text
    assert all(axis.split("@")[0] in text for axis in AXES)
    assert all(f"AXIS@{axis.split('@')[1]}" in text for axis in AXES if "@" in axis)
    assert "of your own" in text


def test_train_py_help_shows_no_argparse_escapes(capsys):
    from cdsbias.downstream.after_training import main as train_main

    with pytest.raises(SystemExit) as exit_:
        train_main(["--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: ") and "%%" not in text and "%(" not in text
