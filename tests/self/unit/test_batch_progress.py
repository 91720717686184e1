"""The batch's progress output (grader/batch/progress.py), driven by a fake clock and a fake
stream: plain lines where there is no terminal, and an estimate that is honest from its first
figure on a schedule whose first uploads pay the grader's warm-up."""

import io
import os
import random

import pytest

from grader.batch import progress as progress_module
from grader.batch.progress import INTERVAL, MIN_STEADY, Progress, clock_text, is_live, planned_starts


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def simulate(total: int, jobs: int, per_job: int, warm_up: float, seed: int):
    """The batch's schedule, as the scheduler runs it: ``jobs`` grader processes side by side,
    each taking the next upload when free and replaced after ``per_job`` uploads; a process
    pays ``warm_up`` seconds before its first upload. Returns (events, end): events in time
    order, ("start", t) for a job started and ("done", t, seconds, first, began) for an upload,
    with seconds counted as the scheduler counts them (a first upload from its job's start,
    ``began``)."""
    rng = random.Random(seed)
    durations = [rng.uniform(6.0, 14.0) for _ in range(total)]
    free = [0.0] * jobs            # when each slot can take its next upload
    done_in_job = [per_job] * jobs  # uploads its current process has graded (per_job: replace it)
    events, pending = [], list(range(total))
    while pending:
        slot = min(range(jobs), key=lambda s: free[s])
        t, first, started_at = free[slot], False, None
        if done_in_job[slot] >= per_job:
            events.append(("start", t))
            started_at, t, done_in_job[slot], first = t, t + warm_up, 0, True
        end = t + durations[pending.pop(0)]
        began = started_at if first else t
        events.append(("done", end, end - began, first, began))
        done_in_job[slot] += 1
        free[slot] = end
    events.sort(key=lambda e: e[1])
    return events, max(free)


def replay(events, total: int, jobs: int, per_job: int):
    """Feed the schedule to a Progress on a fake clock, as the scheduler does (each upload in
    flight told on every turn); [(now, its estimate, the true rest)] after each upload finished."""
    clock = Clock()
    clock.now = 0.0
    bar = Progress(total, jobs, per_job, io.StringIO(), clock=clock)
    end = max(e[1] for e in events)
    seen = []
    for event in events:
        clock.now = event[1]
        if event[0] == "start":
            bar.job_started()
            continue
        _, t, seconds, first, _ = event
        bar.finished("graded", seconds, first=first)
        bar.tick(tuple((t - began, first_) for _, end_, _, first_, began in
                       (e for e in events if e[0] == "done") if began <= t < end_))
        seen.append((t, bar.estimate(), end - t))
    return seen


def test_no_terminal_prints_a_line_every_interval_declared_once():
    """A pipe or a log file: the interval and its unit said once, then a plain line every
    INTERVAL seconds, even while nothing finishes, and a last line at the end."""
    clock, out = Clock(), io.StringIO()
    bar = Progress(126, 2, 50, out, clock=clock)
    assert not bar.live
    head = out.getvalue()
    assert head == f"progress: a line every {INTERVAL:g} s and one at the end (126 upload(s), 2 job(s))\n"
    clock.now += INTERVAL - 1
    bar.tick(())
    assert out.getvalue() == head                      # nothing before the first interval
    clock.now += 1
    bar.tick(())
    clock.now += INTERVAL                              # nothing finished: a line all the same
    bar.tick(((40.0, True), (12.0, False)))
    lines = out.getvalue()[len(head):].splitlines()
    assert lines == [f"graded 0/126; {clock_text(INTERVAL)} elapsed, an estimate once {MIN_STEADY} more "
                     "upload(s) past warm-up are done",
                     f"graded 0/126; {clock_text(2 * INTERVAL)} elapsed, an estimate once {MIN_STEADY} more "
                     "upload(s) past warm-up are done"]
    bar.finished("crashed", 5.0)
    clock.now += 1
    bar.close()
    assert out.getvalue().splitlines()[-1] == f"graded 1/126 (1 crashed); {clock_text(2 * INTERVAL + 1)} elapsed"
    assert "\r" not in out.getvalue()


def test_lines_count_failures_and_give_an_estimate_after_the_warm_up():
    clock, out = Clock(), io.StringIO()
    bar = Progress(10, 2, 50, out, clock=clock)
    bar.job_started(), bar.job_started()
    bar.finished("graded", 60.0, first=True)
    bar.finished("graded", 61.0, first=True)
    for status in ("graded", "crashed", "graded"):
        bar.finished(status, 10.0)
    assert bar.estimate() == pytest.approx(5 * 10.0 / 2)   # 5 left, 10 s each, 2 side by side
    clock.now += INTERVAL
    bar.tick(((4.0, False),))   # one in flight for 4 s: 6 s of it left
    assert bar.estimate() == pytest.approx((4 * 10.0 + 6.0) / 2)
    assert out.getvalue().splitlines()[-1] == f"graded 5/10 (1 crashed); 0:30 elapsed, about {clock_text(23)} left"


def test_a_terminal_without_width_is_no_terminal(monkeypatch):
    """isatty() but 0 columns (a CI runner's pseudo-terminal): plain lines, not a live line."""
    monkeypatch.setattr(progress_module.shutil, "get_terminal_size", lambda fallback=None: os.terminal_size((0, 0)))
    assert not is_live(Terminal())
    assert not is_live(io.StringIO())
    monkeypatch.setattr(progress_module.shutil, "get_terminal_size",
                        lambda fallback=None: os.terminal_size((120, 40)))
    assert is_live(Terminal())


def test_a_terminal_gets_one_line_redrawn_in_place():
    clock, out = Clock(), Terminal()
    bar = Progress(4, 1, 50, out, clock=clock, live=True, width=60)
    bar.finished("graded", 30.0, first=True)
    clock.now += 1
    bar.note("skipped x: another run is grading them now")
    bar.finished("busy", 0.0)
    text = out.getvalue()
    assert "progress: a line every" not in text and text.startswith("\r") and "graded 2/4" in text
    assert text.count("\n") == 1 and "skipped x" in text          # the note on a line of its own
    assert all(len(part) <= 59 for part in text.replace("\n", "\r").split("\r"))  # within the width
    bar.close()
    assert out.getvalue().endswith("\n")


def test_planned_starts():
    assert planned_starts(126, 2, 50) == 4     # 63 per slot: each slot's process is replaced once
    assert planned_starts(100, 2, 50) == 2
    assert planned_starts(3, 2, 50) == 2
    assert planned_starts(1, 4, 50) == 1
    assert planned_starts(0, 2, 50) == 0


@pytest.mark.parametrize("total,jobs,per_job,seed", [(126, 2, 50, 1), (40, 2, 50, 2), (60, 1, 50, 3),
                                                     (90, 4, 10, 4)])
def test_the_estimate_is_honest_from_its_first_figure(total, jobs, per_job, seed):
    """Each grader process's first upload pays a 60 s warm-up (torch, the template) where the
    others take 6-14 s. No figure until MIN_STEADY uploads past warm-up are done; from then on
    every figure is within a factor 1.5 of the true rest (while more than two uploads' worth is
    left), the first included. A rate counted from the batch's start, as the old bar's was, is
    off by more than that on the same schedule (the schedule does model the problem)."""
    events, end = simulate(total, jobs, per_job, warm_up=60.0, seed=seed)
    seen = replay(events, total, jobs, per_job)
    figures = [(t, est, true) for t, est, true in seen if est is not None]
    assert seen[0][1] is None and figures
    for t, est, true in figures:
        if true > 2 * 14.0:
            assert true / 1.5 <= est <= true * 1.5, (t, est, true)
    # the naive rate (elapsed / done × left, over all jobs) at the same first figure
    first_t = figures[0][0]
    done = sum(1 for t, _, _ in seen if t <= first_t)
    naive = first_t / done * (total - done)
    assert not figures[0][2] / 1.5 <= naive <= figures[0][2] * 1.5
