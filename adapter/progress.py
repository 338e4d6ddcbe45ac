"""Progress of long ``replay``, ``export`` and ``bench`` runs: a transient ``rich`` bar on
stderr, only when both the output and the error stream are terminals (piped output gets
nothing more); ``rich`` is imported only when a bar is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import count
from typing import TYPE_CHECKING, TextIO, TypeVar

if TYPE_CHECKING:
    from rich.progress import Progress

T = TypeVar("T")


def on_terminal(stdout: TextIO, stderr: TextIO) -> bool:
    return all(callable(getattr(s, "isatty", None)) and s.isatty() for s in (stdout, stderr))


def _bar(stderr: TextIO) -> Progress:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(file=stderr), transient=True,
    )


def tracked(items: Iterable[T], total: int, what: str, stdout: TextIO, stderr: TextIO) -> Iterator[T]:
    """``items`` as they are, with a bar on ``stderr`` if on a terminal."""
    if not on_terminal(stdout, stderr):
        yield from items
        return
    with _bar(stderr) as bar:
        yield from bar.track(items, total=total, description=what)


@contextmanager
def steps(total: int, what: str, stdout: TextIO, stderr: TextIO) -> Iterator[Callable[[str], None]]:
    """A ``say(text)`` that advances one step and names it; silent off a terminal."""
    if not on_terminal(stdout, stderr):
        yield lambda text: None
        return
    with _bar(stderr) as bar:
        task = bar.add_task(what, total=total)
        finished = count()  # the steps before the one named

        def say(text: str) -> None:
            bar.update(task, completed=next(finished), description=f"{what}: {text}")

        yield say
