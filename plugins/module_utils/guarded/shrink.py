# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file freed in steps: truncated by a step at a time (each step's size adapted to a time bound, a pause in
proportion to what it freed, an upper bound on the whole), at the lowest CPU priority, only while it has no other
name, then removed; and the schedule such a shrinking keeps. The staged file removal of drop_tables
(guarded/staged_removal.py) shrinks its links with it.
"""

from __future__ import annotations

import math
import os
import stat

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import human_size
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.private_paths import NOFOLLOW

MIB = 1024 * 1024
# The smallest step the per-step time bound lowers a step to, and the first step of a shrinking (it grows to
# shrink_step_mb while the steps stay well inside the bound: on the lab's ext4 with discard, a first step of
# 256 MiB took 0.2-0.7 s under load, 16 MiB 0.02-0.05 s).
MIN_STEP_BYTES = MIB
START_STEP_BYTES = 16 * MIB
# The CPU priority (nice) the shrinking runs at.
LOWEST_PRIORITY = 19


def shrink_targets(size, step):
    """The sizes a file of size bytes is truncated to, step by step: size - step, size - 2 step, ..., 0."""
    step = max(int(step), 1)
    out = []
    size = int(size)
    while size > 0:
        size = max(size - step, 0)
        out.append(size)
    return out


def next_step_bytes(step, seconds, max_step, step_bound):
    """The next truncate's size after one of step bytes took seconds: halved (not below MIN_STEP_BYTES) when it
    took longer than step_bound, doubled back (not above max_step, the run's shrink_step_mb) when it took less
    than a quarter of it, else kept. A step's time is the filesystem freeing its extents (and trimming them with
    `discard`): a slow disk or a busy journal gets smaller steps, each one short."""
    max_step = max(int(max_step), 1)
    low = min(MIN_STEP_BYTES, max_step)
    if step_bound and seconds > step_bound:
        return max(int(step) // 2, low)
    if not step_bound or seconds < step_bound / 4.0:
        return min(int(step) * 2, max_step)
    return min(max(int(step), low), max_step)


class StepPacer(object):
    """The shrinking's pace: the step size (adapted to the per-step time bound), the pause after each step (in
    proportion to what it freed), the deadline, and what the steps took (report())."""

    def __init__(self, max_step, pause, step_bound, deadline, sleep, clock):
        self.max_step = max(int(max_step), 1)
        self.step = min(self.max_step, START_STEP_BYTES)
        self.pause = float(pause)
        self.step_bound = float(step_bound) if step_bound else None
        self.deadline = deadline
        self.sleep = sleep
        self.clock = clock
        self.steps = 0
        self.truncate_seconds = 0.0
        self.max_seconds = 0.0
        self.over_bound = 0
        self.smallest = self.step

    def truncate(self, fd, target):
        """ftruncate fd to target, timed; the next step's size adapted to what this one took."""
        started = self.clock()
        os.ftruncate(fd, target)
        took = self.clock() - started
        self.steps += 1
        self.truncate_seconds += took
        self.max_seconds = max(self.max_seconds, took)
        if self.step_bound and took > self.step_bound:
            self.over_bound += 1
        self.step = next_step_bytes(self.step, took, self.max_step, self.step_bound)
        self.smallest = min(self.smallest, self.step)

    def pause_after(self, freed):
        """The pause after a step that freed bytes: shrink_pause for a full step of shrink_step_mb, in proportion for
        a smaller one, so smaller steps keep the schedule's pace (shrink_step_mb per shrink_pause) and its estimate
        against shrink_max_seconds: the same work in shorter bursts."""
        return self.pause * min(float(freed) / self.max_step, 1.0)

    def report(self):
        return dict(steps=self.steps, truncate_seconds=round(self.truncate_seconds, 3),
                    max_step_seconds=round(self.max_seconds, 4), step_bound_seconds=self.step_bound,
                    over_bound=self.over_bound, smallest_step_bytes=self.smallest,
                    smallest_step=human_size(self.smallest), max_step_bytes=self.max_step)


def shrink_schedule(sizes, step_bytes, pause, bound):
    """How shrinking files of sizes (bytes) goes: steps (one truncate each), the pauses between them, the
    estimated seconds (pauses only: a truncate of step_bytes is short) against the bound, and whether it fits.
    When it does not, the step size that would fit is named."""
    steps = sum(len(shrink_targets(s, step_bytes)) for s in sizes)
    seconds = max(steps - 1, 0) * float(pause)
    total = sum(int(s) for s in sizes)
    fits = seconds <= bound
    text = ('%d file(s), %s: %d truncate step(s) of %s with %ss between, about %ss (bound %ss)' % (
        len(sizes), human_size(total), steps, human_size(step_bytes), pause, round(seconds, 1), bound))
    need = None
    if not fits:
        per = int(bound // float(pause)) + 1 if pause else steps
        need = int(math.ceil(total / float(max(per - len(sizes), 1)) / MIB))
        text += ('; does not fit: raise shrink_max_seconds, lower shrink_pause or raise shrink_step_mb to about %d'
                 % need)
    return dict(files=len(sizes), bytes=total, size=human_size(total), steps=steps, step_bytes=int(step_bytes),
                pause=float(pause), seconds=round(seconds, 1), bound=bound, fits=fits, text=text)


def yield_to_the_server():
    """This process (the module, once the drops are done) at the lowest CPU priority (nice 19): a truncate's work,
    the kernel freeing the extents, is done in the caller's time, and on a busy host the server's threads go first.
    Nothing to put back: the module's process ends with the run. Where the priority cannot be lowered, unchanged."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, max(os.getpriority(os.PRIO_PROCESS, 0), LOWEST_PRIORITY))
    except (AttributeError, OSError):
        pass


def shrink_file(link, identity, pacer, on_step=None):
    """Truncate the file behind link in steps (pacer: StepPacer, each step's size adapted to its time bound, a
    pause in proportion to what the step freed) and remove it: 'removed'. Only while it has no other name (st_nlink 1) and is the file
    the manifest recorded (identity (dev, ino)); when it has another name (the table's own) only the link is
    removed: 'released'. When the pacer's deadline passes, the rest goes at once."""
    try:
        fd = os.open(link, os.O_WRONLY | NOFOLLOW)
    except FileNotFoundError:
        return 'removed'
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != tuple(identity) or not stat.S_ISREG(st.st_mode):
            return 'foreign'
        if st.st_nlink > 1:
            os.unlink(link)
            return 'released'
        size = st.st_size
        while size > 0:
            if os.fstat(fd).st_nlink > 1:   # someone gave it a name again: stop, keep the data
                os.unlink(link)
                return 'released'
            before = size
            size = 0 if pacer.clock() >= pacer.deadline else max(size - pacer.step, 0)
            pacer.truncate(fd, size)
            if size == 0:
                break
            if on_step:
                on_step()
            pacer.sleep(pacer.pause_after(before - size))
        os.unlink(link)
        return 'removed'
    finally:
        os.close(fd)
