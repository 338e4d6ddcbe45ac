"""A token file or tokens file that others may read or write is refused, as ssh refuses such
a private key: ``serve`` exits 2 naming the file, its mode and the ``chmod`` that fixes it.

Run as root the test still means something: the check reads the file's mode bits, which is
what ssh does, not whether this process could read the file.
"""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import pytest

from adapter.cli import parser, run

OPEN = [0o644, 0o640, 0o604, 0o660, 0o606, 0o666, 0o620]
PRIVATE = [0o600, 0o400, 0o700]


def serve_config_only(argv: list[str]) -> tuple[int, str]:
    """``serve`` on a loopback port already taken: a refused setting exits 2 before anything
    else; accepted settings get as far as the bind, which fails (exit 4)."""
    err = io.StringIO()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        args = parser().parse_args(["serve", "--port", port, "--host", "127.0.0.1", *argv])
        code = run(args, io.StringIO(), err)
    return code, err.getvalue()


def written(path: Path, text: str, mode: int) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def tokens_file(tmp_path: Path, mode: int) -> Path:
    return written(tmp_path / "worlds.json", json.dumps({"worldA": "token-of-a"}), mode)


@pytest.mark.parametrize("mode", OPEN, ids=[f"{m:04o}" for m in OPEN])
def test_a_tokens_file_open_to_others_is_refused_with_its_mode_and_the_fix(tmp_path: Path, mode: int) -> None:
    path = tokens_file(tmp_path, mode)
    code, err = serve_config_only(["--db", str(tmp_path / "x.db"), "--token", "t", "--tokens-file", str(path)])
    assert code == 2
    assert f"the tokens file {path} is open to others (mode {mode:04o})" in err and f"chmod 600 {path}" in err, err
    assert "token-of-a" not in err


@pytest.mark.parametrize("mode", OPEN, ids=[f"{m:04o}" for m in OPEN])
def test_a_stored_token_file_open_to_others_is_refused_and_its_token_not_shown(tmp_path: Path, mode: int) -> None:
    db = tmp_path / "game.db"
    written(tmp_path / "game.token", "stored-secret-token\n", mode)
    code, err = serve_config_only(["--db", str(db)])
    assert code == 2
    assert f"the token file {tmp_path / 'game.token'} is open to others (mode {mode:04o})" in err, err
    assert "stored-secret-token" not in err


@pytest.mark.parametrize("mode", PRIVATE, ids=[f"{m:04o}" for m in PRIVATE])
def test_private_token_files_are_accepted(tmp_path: Path, mode: int) -> None:
    """The opposite case: the refusal is about the mode (these start, up to the taken port)."""
    db = tmp_path / "game.db"
    written(tmp_path / "game.token", "stored-secret-token\n", mode)
    code, err = serve_config_only(["--db", str(db), "--tokens-file", str(tokens_file(tmp_path, mode))])
    assert code == 4 and "open to others" not in err, err
