"""A rich progress bar for training steps (plain log lines when disabled or not a terminal)."""

from __future__ import annotations


class Progress:
    def __init__(self, total: int, done: int, enabled: bool = True):
        self.total, self.done, self.enabled = total, done, enabled
        self._bar = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as Bar, TextColumn, TimeElapsedColumn, \
                TimeRemainingColumn

            self._bar = Bar(TextColumn("train"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                            TimeElapsedColumn(), TimeRemainingColumn())
            self._bar.__enter__()
            self._task = self._bar.add_task("train", total=self.total, completed=self.done, info="")
        return self

    def update(self, step: int, loss: float, examples: int) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=step, info=f"loss {loss:.3f} | {examples} ex")

    def log(self, line: str) -> None:
        if self._bar is not None:
            self._bar.console.log(line)
        else:
            print(line, flush=True)

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
