"""Progress bars written to a log print a few plain lines, not carriage-return redraws
(issue 36); on a terminal they are drawn as tqdm draws them."""

from __future__ import annotations

import io

from test_cli_evaluate import small_becpro
from tqdm import tqdm
from tqdm.std import tqdm as std_tqdm

from cdsbias.cli import main
from cdsbias.progress import plain_progress_lines


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _bars(out) -> None:
    # mininterval=0: tqdm redraws at every update, the worst case for a log.
    for _ in tqdm(range(100), desc="scoring", unit="batch", file=out, mininterval=0):
        pass
    bar = tqdm(total=8, desc="encoding", file=out, mininterval=0, leave=False)
    for i in range(8):
        bar.update()
        if i == 3:
            tqdm.write("warning: a warning while a bar runs", file=out)
    bar.close()


def test_a_log_gets_one_line_per_quarter_and_the_end():
    out = io.StringIO()
    with plain_progress_lines():
        _bars(out)
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    scoring = [line.split("[")[0].strip() for line in lines if line.startswith("scoring")]
    assert scoring == [f"scoring: {p:3d}% {n}/100" for p, n in
                       ((0, 0), (25, 25), (50, 50), (75, 75), (100, 100))]  # fmt: skip
    encoding = [line for line in lines if line.startswith("encoding")]
    assert encoding[0].startswith("encoding:   0%") and encoding[-1].startswith("encoding: 100%")
    assert len(encoding) <= 6  # start, quarters, the end: a few lines, not one per update
    assert "warning: a warning while a bar runs" in lines


def test_a_terminal_gets_tqdm_bars_and_the_block_restores_tqdm():
    display = std_tqdm.display
    screen = Terminal()
    with plain_progress_lines():
        _bars(screen)
    assert screen.getvalue().count("\r") > 50  # redrawn in place, as tqdm does
    assert std_tqdm.display is display
    log = io.StringIO()
    _bars(log)  # outside the block: tqdm's own drawing again
    assert "\r" in log.getvalue()


def test_a_captured_evaluate_writes_plain_progress_lines(real_vocab_bert, tmp_path, capsys):
    data = small_becpro(tmp_path / "small.tsv", n_per_group=1)
    code = main(["evaluate", str(real_vocab_bert), "--benchmark", "becpro", "--data", str(data),
                 "--out", str(tmp_path / "out"), "--batch-size", "4",
                 "--option", "n_resamples=10"])  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    assert any(line.startswith("scoring: 100%") for line in err.splitlines())


def test_a_bar_without_a_total_prints_its_start_end_and_a_line_per_interval(monkeypatch):
    from cdsbias import progress

    def run() -> list[str]:
        out = io.StringIO()
        with plain_progress_lines():
            bar = tqdm(desc="reading", unit="doc", file=out, mininterval=0)
            for _ in range(5):
                bar.update()
            bar.close()
        assert "\r" not in out.getvalue()
        return [line.split(" [")[0] for line in out.getvalue().splitlines()]

    monkeypatch.setattr(progress, "INTERVAL_S", 1e9)
    assert run() == ["reading: 0doc", "reading: 5doc"]
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    assert run()[:6] == [f"reading: {n}doc" for n in range(6)]
