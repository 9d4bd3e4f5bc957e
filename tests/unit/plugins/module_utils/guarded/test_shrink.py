# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A file freed in steps (module_utils/guarded/shrink.py): the schedule and its bound, the pacer's step sizes and
pauses, real files shrunk only through their last name, the lowest CPU priority."""

from __future__ import annotations

import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import shrink as s
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.guarded.staged_fakes import Clock, write_file as _write

MIB = s.MIB


def test_shrink_schedule_and_its_bound():
    assert s.shrink_targets(10 * MIB, 4 * MIB) == [6 * MIB, 2 * MIB, 0]
    assert s.shrink_targets(0, MIB) == []
    sch = s.shrink_schedule([10 * MIB, 3 * MIB], 4 * MIB, 0.5, 60)
    assert sch['steps'] == 4 and sch['seconds'] == 1.5 and sch['fits']
    sch = s.shrink_schedule([100 * 1024 * MIB], 256 * MIB, 1.0, 60)
    assert not sch['fits'] and sch['steps'] == 400 and 'raise shrink_step_mb to about' in sch['text']


def pacer(clock, step, pause, deadline, step_bound=None):
    return s.StepPacer(step, pause, step_bound, deadline, clock.sleep, clock)


def test_shrink_file_in_steps_only_through_the_last_name(tmp_path):
    clock = Clock()
    f = tmp_path / 'a'
    ident = _write(str(f), 5 * 1024)
    pf = pacer(clock, 2048, 1.0, 100)
    assert s.shrink_file(str(f), ident, pf) == 'removed'
    assert not f.exists() and clock.t == 2.0       # 5 KiB in steps of 2 KiB: 3 truncates, 2 pauses
    assert pf.report()['steps'] == 3 and pf.report()['over_bound'] == 0
    g = tmp_path / 'g'
    ident = _write(str(g), 4096)
    os.link(str(g), str(tmp_path / 'table.ibd'))   # the table's own name is still there
    assert s.shrink_file(str(g), ident, pacer(clock, 1024, 1.0, 100)) == 'released'
    assert not g.exists() and os.path.getsize(str(tmp_path / 'table.ibd')) == 4096   # its data untouched
    h = tmp_path / 'h'
    ident = _write(str(h), 8192)
    clock.t = 0
    assert s.shrink_file(str(h), ident, pacer(clock, 1024, 1.0, 3.0)) == 'removed'
    assert clock.t == 3.0                            # the bound reached: the rest at once
    i = tmp_path / 'i'
    _write(str(i), 10)
    assert s.shrink_file(str(i), (0, 0), pacer(clock, 1024, 0, 3.0)) == 'foreign' and i.exists()


def test_next_step_bytes_keeps_each_truncate_within_the_step_bound():
    top = 256 * MIB
    assert s.next_step_bytes(top, 0.2, top, 0.05) == 128 * MIB          # too slow: halved
    assert s.next_step_bytes(2 * MIB, 0.2, top, 0.05) == MIB
    assert s.next_step_bytes(MIB, 0.2, top, 0.05) == MIB                # never below 1 MiB
    assert s.next_step_bytes(64 * MIB, 0.005, top, 0.05) == 128 * MIB   # well under: doubled back
    assert s.next_step_bytes(top, 0.001, top, 0.05) == top              # never above shrink_step_mb
    assert s.next_step_bytes(64 * MIB, 0.03, top, 0.05) == 64 * MIB     # within: kept
    assert s.next_step_bytes(4096, 0.2, 4096, 0.05) == 4096             # a step below 1 MiB stays what was asked


class ScriptedClock(Clock):
    """A clock whose every truncate (two readings) takes the next of the scripted durations."""

    def __init__(self, durations, reads_per_step=2):
        super().__init__()
        self.durations = list(durations)
        self.reads = 0
        self.per = reads_per_step

    def __call__(self):
        self.reads += 1
        if self.reads % self.per == 0 and self.durations:
            self.t += self.durations.pop(0)
        return self.t


def test_step_pacer_starts_small_and_grows_to_shrink_step_mb():
    clock = ScriptedClock([0.001] * 10)
    pf = s.StepPacer(256 * MIB, 0, 0.05, float('inf'), clock.sleep, clock)
    assert pf.step == 16 * MIB
    steps = []
    for _n in range(6):
        steps.append(pf.step)
        pf.step = s.next_step_bytes(pf.step, 0.001, pf.max_step, pf.step_bound)
    assert steps == [16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB, 256 * MIB, 256 * MIB]


def test_smaller_steps_pause_in_proportion_keeping_the_schedules_pace(tmp_path):
    pf = s.StepPacer(256 * MIB, 0.5, 0.05, float('inf'), Clock().sleep, Clock())
    assert pf.pause_after(256 * MIB) == 0.5 and pf.pause_after(16 * MIB) == 0.5 / 16 and pf.pause_after(0) == 0
    assert pf.pause_after(512 * MIB) == 0.5
    # a 10 MiB file shrunk by at most 4 MiB with 1 s a full step: the pauses add up to what the steps freed before
    # the last one (6 MiB of 4 MiB a second: 1.5 s), whatever sizes the bound made the steps
    clock = ScriptedClock([0.3, 0.001, 0.001], reads_per_step=3)   # shrink_file reads the deadline, then times
    f = tmp_path / 'paced'
    ident = _write(str(f), 10 * MIB)
    assert s.shrink_file(str(f), ident, s.StepPacer(4 * MIB, 1.0, 0.1, float('inf'), clock.sleep, clock)) == 'removed'
    # steps: 4 MiB (0.3 s, over the bound: the next is 2 MiB), 2 MiB (pause 0.5 s), the last 4 MiB (no pause)
    assert abs(clock.t - 0.302 - 1.5) < 1e-9, clock.t


def test_step_pacer_adapts_the_step_to_what_each_truncate_took(tmp_path):
    f = tmp_path / 'big'
    ident = _write(str(f), 10 * MIB)
    clock = ScriptedClock([0.3, 0.3, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001, 0.001])
    pf = s.StepPacer(4 * MIB, 0, 0.1, float('inf'), clock.sleep, clock)
    fd = os.open(str(f), os.O_WRONLY)
    try:
        sizes = []
        size = 10 * MIB
        while size:
            size = max(size - pf.step, 0)
            pf.truncate(fd, size)
            sizes.append(size)
    finally:
        os.close(fd)
    # 4 MiB took 0.3 s (> 0.1): the next is 2 MiB; it took 0.3 s too: 1 MiB; then fast: doubled back to 2, 4 MiB
    assert sizes == [6 * MIB, 4 * MIB, 3 * MIB, 1 * MIB, 0] and ident
    rep = pf.report()
    assert rep['steps'] == 5 and rep['over_bound'] == 2 and rep['smallest_step_bytes'] == MIB
    assert rep['max_step_seconds'] == 0.3 and rep['step_bound_seconds'] == 0.1


def test_a_shrinking_runs_at_the_lowest_cpu_priority():
    """The pacer of a shrinking lowers the process to nice 19 (the kernel's freeing of extents is the caller's CPU
    time); seen in a child process, this one's priority left as it is."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            s.yield_to_the_server()
            os.write(write, str(os.getpriority(os.PRIO_PROCESS, 0)).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as handle:
        assert int(handle.read()) == s.LOWEST_PRIORITY
    assert os.getpriority(os.PRIO_PROCESS, 0) == before
