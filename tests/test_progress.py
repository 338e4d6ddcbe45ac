"""Long runs show progress on a terminal and stay quiet when their output is piped."""

from __future__ import annotations

import io
from pathlib import Path

from adapter.cli import parser, run
from adapter.progress import on_terminal

RECORDING = Path(__file__).parent / "recordings" / "storyteller" / "ST-E2-interrupt-before-larry.jsonl"


class Terminal(io.StringIO):
    """A stream that says it is a terminal (as a tty would)."""

    def isatty(self) -> bool:
        return True


def replay(stdout: io.StringIO, stderr: io.StringIO) -> int:
    return run(parser().parse_args(["replay", str(RECORDING)]), stdout, stderr)


def test_replay_piped_prints_its_output_and_no_progress() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    assert replay(stdout, stderr) == 0
    assert stderr.getvalue() == ""
    assert stdout.getvalue().count('"type":"ack"') == 14


def test_replay_on_a_terminal_draws_a_progress_bar_on_stderr() -> None:
    stdout, stderr = Terminal(), Terminal()
    assert replay(stdout, stderr) == 0
    assert "replaying" in stderr.getvalue() and "15/15" in stderr.getvalue()
    assert "replaying" not in stdout.getvalue()


def test_a_terminal_for_errors_but_a_pipe_for_output_is_not_a_terminal() -> None:
    assert not on_terminal(io.StringIO(), Terminal())
    assert not on_terminal(Terminal(), io.StringIO())
    assert on_terminal(Terminal(), Terminal())


def test_export_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    from adapter.store import Store

    store = Store(tmp_path / "s.db")
    store.add_session("w", 0, {"world": "w", "ruleset": "foundry-core", "gm_users": []})
    for seq in range(1, 4):
        store.append("w", seq, "hook", {"seq": seq})
    store.close()
    args = parser().parse_args(["export", "--world", "w", "--db", str(tmp_path / "s.db")])
    piped_out, piped_err = io.StringIO(), io.StringIO()
    assert run(args, piped_out, piped_err) == 0
    assert piped_err.getvalue() == "" and len(piped_out.getvalue().splitlines()) == 4
    tty_out, tty_err = Terminal(), Terminal()
    assert run(args, tty_out, tty_err) == 0
    assert "exporting" in tty_err.getvalue() and "4/4" in tty_err.getvalue()
    assert len(tty_out.getvalue().splitlines()) == 4
