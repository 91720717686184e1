"""What `python -m grader batch` says while it grades: how many uploads are done, how long it
has run, and how long it has left.

Two ways of saying it, chosen by where stderr goes:
- a terminal at least NARROW columns wide: one live line, redrawn in place;
- anything else (a log file, a pipe, Slurm's output, a terminal with no width): a plain line
  every INTERVAL seconds, the interval declared once in the first line, and a last line at the
  end. Nothing waits for an upload to finish: a line comes on time even while every job is busy.

The estimate. The first upload a grader process grades also pays that process's start (torch's
import, the sandbox template): a minute where the next ones take seconds, so a rate counted
from the batch's start overstates the rest several times over. Here:
- a job's first upload is its warm-up, and is kept apart from the others (``first=True``);
- no estimate is given until MIN_STEADY uploads past warm-up have finished;
- the rest is then the mean seconds of those (the "steady" ones) times the uploads left, less
  what the ones in flight have already run, plus the warm-ups still to come (each job after
  TASKS_PER_JOB uploads is replaced, and its successor warms up again), divided by the jobs
  that run side by side.
The clock and the stream are injected: the tests drive it with a fake clock and a StringIO.
"""

import math
import shutil
import sys
import time
from collections import Counter
from typing import Callable, TextIO

INTERVAL = 30.0   # seconds between two lines where there is no terminal
REDRAW = 0.5      # seconds between two redraws of the live line
NARROW = 40       # columns: a terminal narrower than this (or of no width) gets plain lines
MIN_STEADY = 3    # uploads past their job's warm-up finished before an estimate is given
# statuses that are said beside the count (the others are uploads graded, however they were found)
SAID = ("crashed", "interrupted", "busy")
WORDS = {"busy": "skipped (another run has them)"}


def clock_text(seconds: float) -> str:
    """1:02, 12:40, 1:05:09."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def is_live(stream: TextIO) -> bool:
    """A terminal wide enough for a live line. A stream that is no terminal, or a terminal
    that reports no width (0 columns: some CI runners, `script`), gets plain lines."""
    try:
        if not stream.isatty():
            return False
        columns = shutil.get_terminal_size(fallback=(0, 0)).columns
    except (AttributeError, OSError, ValueError):
        return False
    return columns >= NARROW


def planned_starts(total: int, jobs: int, per_job: int) -> int:
    """How many grader processes a batch of ``total`` uploads starts: ``jobs`` side by side,
    each replaced after ``per_job`` uploads (crashes aside)."""
    slots = max(1, min(jobs, total))
    return slots * math.ceil(total / (slots * per_job)) if total else 0


class Progress:
    def __init__(self, total: int, jobs: int, per_job: int, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, live: bool | None = None,
                 interval: float = INTERVAL, width: int | None = None):
        self.total, self.jobs, self.per_job = total, max(1, jobs), max(1, per_job)
        self.stream = sys.stderr if stream is None else stream
        self.clock = clock
        self.live = is_live(self.stream) if live is None else live
        self.interval = interval
        self.width = width
        self.begun = clock()
        self.counts: Counter = Counter()
        self.steady: list[float] = []   # seconds of each upload past its job's warm-up
        self.warm: list[float] = []     # seconds of each job's first upload, from the job's start
        self.starts = 0                 # grader processes started so far
        self.last = None                # when the last line was written (None: none yet)
        self.drawn = 0                  # length of the live line on screen
        self.in_flight: tuple[tuple[float, bool], ...] = ()  # (seconds run, a job's first) each
        if not self.live:
            self._write(f"progress: a line every {interval:g} s and one at the end "
                        f"({total} upload(s), {self.jobs} job(s))\n")

    # --------------------------------------------------------------- what the batch reports

    def job_started(self) -> None:
        self.starts += 1

    def finished(self, status: str, seconds: float | None, first: bool = False) -> None:
        """One upload done: its status, and the seconds it took (for a job's first upload,
        from the job's start, so that its warm-up is counted where it is paid)."""
        self.counts[status] += 1
        if seconds is not None and status != "busy":
            (self.warm if first else self.steady).append(float(seconds))
        if self.live:
            self.tick(force=True)

    def note(self, text: str) -> None:
        """A line of its own (a skipped student, an error) that must not garble the live line."""
        self._clear()
        self._write(text.rstrip("\n") + "\n")
        if self.live:
            self.tick(force=True)

    def tick(self, in_flight: tuple[tuple[float, bool], ...] | None = None, force: bool = False) -> None:
        """Called on every turn of the batch's loop (at least once a second) with each upload in
        flight: (seconds it has run, whether it is its job's first, counted from the job's
        start). Writes a line when one is due."""
        if in_flight is not None:
            self.in_flight = tuple(in_flight)
        now = self.clock()
        due = REDRAW if self.live else self.interval
        if self.last is not None and now - self.last < due and not (force and self.live):
            return
        if self.last is None and not self.live and now - self.begun < self.interval:
            return
        self.last = now
        self._say(self.line(now))

    def close(self) -> None:
        """The last line, always written (a run shorter than the interval says it too)."""
        text = self.line(self.clock(), final=True)
        if self.live:
            self._say(text)
            self._write("\n")
        else:
            self._write(text + "\n")

    # --------------------------------------------------------------- the words and the figures

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    def estimate(self, now: float | None = None) -> float | None:
        """Seconds left, or None while fewer than MIN_STEADY uploads past warm-up have finished."""
        if len(self.steady) < MIN_STEADY:
            return None
        left = self.total - self.done
        if left <= 0:
            return 0.0
        mean = sum(self.steady) / len(self.steady)
        warm = sum(self.warm) / len(self.warm) if self.warm else mean
        in_flight = self.in_flight[:left]
        work = (left - len(in_flight)) * mean + sum(max((warm if first else mean) - ran, 0.0)
                                                    for ran, first in in_flight)
        # the warm-ups still to come (processes not started yet) cost what the past ones did
        # beyond a steady upload
        work += max(0.0, warm - mean) * max(0, planned_starts(self.total, self.jobs, self.per_job) - self.starts)
        return work / min(self.jobs, left)

    def line(self, now: float | None = None, final: bool = False) -> str:
        now = self.clock() if now is None else now
        said = [f"{self.counts[s]} {WORDS.get(s, s)}" for s in SAID if self.counts[s]]
        text = f"graded {self.done}/{self.total}" + (f" ({', '.join(said)})" if said else "")
        text += f"; {clock_text(now - self.begun)} elapsed"
        if final:
            return text
        left = self.estimate(now)
        if left is not None:
            return text + f", about {clock_text(left)} left"
        needed = MIN_STEADY - len(self.steady)
        return text + f", an estimate once {needed} more upload(s) past warm-up are done"

    # --------------------------------------------------------------- the stream

    def _say(self, text: str) -> None:
        if not self.live:
            self._write(text + "\n")
            return
        width = self.width or shutil.get_terminal_size(fallback=(80, 24)).columns
        text = text[:max(1, width - 1)]
        self._write("\r" + text + " " * max(0, self.drawn - len(text)))
        self.drawn = len(text)

    def _clear(self) -> None:
        if self.live and self.drawn:
            self._write("\r" + " " * self.drawn + "\r")
            self.drawn = 0

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: the batch goes on regardless
            pass
