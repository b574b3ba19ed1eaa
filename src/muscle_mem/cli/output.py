"""Where the CLI prints: ``rich`` tables and progress bars when installed, else plain text.

Every text is printed as it is, never read as markup, and its control characters are written as
escapes (see :func:`untrusted.printable`): a stored text cannot send the terminal a command.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TextIO

from muscle_mem.cli.untrusted import printable

try:
    import rich  # noqa: F401

    HAVE_RICH = True
except ImportError:  # the ``cli`` extra is not installed
    HAVE_RICH = False


class Bar(Protocol):
    def advance(self, note: str = "") -> None:
        """One more item done, with a short note on the state of things."""


class Output:
    """Prints tables, lines and progress bars to ``stream`` (rich styling only when ``fancy``)."""

    def __init__(self, stream: TextIO | None = None, *, fancy: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.fancy = HAVE_RICH if fancy is None else fancy and HAVE_RICH
        self._console: Any = None
        if self.fancy:
            self._console = _console(self.stream)

    def line(self, text: str = "", *, style: str | None = None) -> None:
        text = printable(text, lines=True)
        if self._console is not None:
            self._console.print(text, style=style, markup=False)
        else:
            print(text, file=self.stream)

    def table(self, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """A table; columns after the first are right-aligned unless their header ends with ``<``."""
        left = [i == 0 or h.endswith("<") for i, h in enumerate(headers)]
        names = [h.rstrip("<") for h in headers]
        title = printable(title)
        rows = [[printable(str(cell)) for cell in row] for row in rows]
        if self._console is not None:
            from rich.table import Table
            from rich.text import Text

            table = Table(title=Text(title), title_justify="left", title_style="bold")
            for name, is_left in zip(names, left, strict=True):
                table.add_column(name, justify="left" if is_left else "right", overflow="fold")
            for row in rows:
                table.add_row(*(Text(cell) for cell in row))
            self._console.print(table)
            return
        widths = [max(len(str(c)) for c in column) for column in zip(names, *rows, strict=True)]

        def render(cells: Sequence[str]) -> str:
            return "  ".join(
                str(c).ljust(w) if is_left else str(c).rjust(w)
                for c, w, is_left in zip(cells, widths, left, strict=True)
            ).rstrip()

        print(title, file=self.stream)
        print(render(names), file=self.stream)
        print("  ".join("-" * w for w in widths), file=self.stream)
        for row in rows:
            print(render(row), file=self.stream)

    @contextmanager
    def progress(self, label: str, total: int) -> Iterator[Bar]:
        """A progress bar; plain text prints a line at every tenth of the way and at the end."""
        if self._console is not None:
            with _RichBar(self._console, label, total) as bar:
                yield bar
        else:
            yield _PlainBar(self.stream, label, total)


def _console(stream: TextIO) -> Any:
    """A rich console on ``stream`` that leaves a closed pipe to :func:`muscle_mem.cli.main` (rich's own
    handling exits with status 1)."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Console(file=stream, highlight=False, soft_wrap=True, emoji=False)


class _PlainBar:
    def __init__(self, stream: TextIO, label: str, total: int) -> None:
        self.stream = stream
        self.label = label
        self.total = total
        self.done = 0

    def advance(self, note: str = "") -> None:
        self.done += 1
        done, total = self.done, self.total
        if total and (done == total or done * 10 // total != (done - 1) * 10 // total):
            filled = 24 * done // total
            bar = "#" * filled + "." * (24 - filled)
            print(f"{self.label} [{bar}] {done}/{total}  {note}".rstrip(), file=self.stream, flush=True)


class _RichBar:
    def __init__(self, console: Any, label: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[note]}"),
            console=console,
        )
        self.task = self.progress.add_task(label, total=total, note="")

    def __enter__(self) -> _RichBar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def advance(self, note: str = "") -> None:
        self.progress.update(self.task, advance=1, note=note)
