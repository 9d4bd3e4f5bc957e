"""Where the integration tests' CPU goes, per test, even on a machine other work loads: an opt-in pytest plugin.

DBFLEET_CPU_PROFILE=<path> turns it on (tests/integration/conftest.py registers it); it appends one JSON line per test
and one per module- or session-scoped fixture setup to <path>:

- ``wall``: seconds (setup + call + teardown for a test; the fixture's setup alone for a fixture);
- ``cpu_self`` / ``cpu_children``: user + system seconds of the pytest process and of its waited children
  (resource.getrusage RUSAGE_SELF / RUSAGE_CHILDREN deltas: ansible-playbook, ansible, ssh, lab.py runs);
- ``server_cpu``: user + system seconds of the lab's servers (mysqld / mariadbd of every ``mysqld.pid`` under the
  lab directory, the SSH fleet's tarball servers included), read from /proc/PID/stat; a server started during the test
  counts from 0, the last sample of one that stopped is kept (a sampler reads the servers every 0.2 s, and at each
  test's start and end);
- ``restarts``: the server processes that started during it (a new PID in a pid file);
- ``runs``: the subprocesses started by this process, by program name (ansible-playbook, ansible, lab.py, ssh...);
- ``machine_cpu``: the CPU seconds of the whole machine meanwhile (/proc/stat), which other work loads too.

The CPU of the daemons the servers start beside themselves, and of a booted machine's systemd server, is not counted.
``python -m dbfleet_testing.cpu_profile <path> [--top N]`` (from tests/integration) prints the top tests and files.
"""
import glob
import json
import os
import resource
import subprocess
import sys
import threading
import time

import pytest

TICK = os.sysconf("SC_CLK_TCK")
SAMPLE_SECONDS = 0.2
# The program names a run is counted under (the basename of argv[0], of argv[1] when argv[0] is the interpreter).
PROGRAMS = ("ansible-playbook", "ansible", "ansible-navigator", "ansible-runner", "lab.py", "ssh", "molecule",
            "podman")


def _proc_ticks(pid):
    """(start time, utime + stime ticks) of a process, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # fields[0] is the state (field 3): utime field 14, stime 15, starttime 22
    return int(fields[19]), int(fields[11]) + int(fields[12])


def _machine_ticks():
    with open("/proc/stat", encoding="ascii") as handle:
        values = handle.readline().split()[1:]
    return sum(int(values[i]) for i in (0, 1, 2, 5, 6))


class ServerSampler:
    """The lab's server processes and the CPU each used since it was first seen (since its start for one started after
    the sampler's)."""

    def __init__(self, lab_dir):
        self.patterns = [os.path.join(lab_dir, "*", "mysqld.pid"), os.path.join(lab_dir, "*", "*", "mysqld.pid")]
        self.lock = threading.Lock()
        self.procs = {}        # (pid, start) -> [baseline ticks, last ticks]
        self.started = 0       # server processes first seen after the first sample
        self.first = True
        self.stop = threading.Event()
        self.sample()
        self.thread = threading.Thread(target=self._loop, name="dbfleet-cpu-profile", daemon=True)
        self.thread.start()

    def _pids(self):
        pids = set()
        for pattern in self.patterns:
            for path in glob.glob(pattern):
                try:
                    with open(path, encoding="ascii") as handle:
                        pids.add(int(handle.read().split()[0]))
                except (OSError, ValueError, IndexError):
                    continue
        return pids

    def sample(self):
        with self.lock:
            for pid in self._pids():
                ticks = _proc_ticks(pid)
                if ticks is None:
                    continue
                key = (pid, ticks[0])
                if key in self.procs:
                    self.procs[key][1] = ticks[1]
                else:
                    self.procs[key] = [ticks[1] if self.first else 0, ticks[1]]
                    self.started += 0 if self.first else 1
            # a server whose pid file is gone or rewritten: read it once more while its process still exists
            for (pid, start), entry in self.procs.items():
                ticks = _proc_ticks(pid)
                if ticks is not None and ticks[0] == start:
                    entry[1] = ticks[1]
            self.first = False

    def totals(self):
        """(server CPU seconds so far, server processes started so far)."""
        self.sample()
        with self.lock:
            return sum(last - base for base, last in self.procs.values()) / TICK, self.started

    def _loop(self):
        while not self.stop.wait(SAMPLE_SECONDS):
            self.sample()


class RunCounter:
    """Counts the subprocesses this process starts, by program name (subprocess.Popen is patched while on)."""

    def __init__(self):
        self.counts = {}
        self.original = subprocess.Popen.__init__
        counter = self

        def counting_init(popen, args, *rest, **kwargs):
            counter.count(args)
            counter.original(popen, args, *rest, **kwargs)
        subprocess.Popen.__init__ = counting_init

    def count(self, args):
        argv = [args] if isinstance(args, (str, bytes)) else list(args or ())
        if not argv:
            return
        name = os.path.basename(str(argv[0]).split()[0]) if argv[0] else ""
        if name.startswith("python") and len(argv) > 1:
            name = os.path.basename(str(argv[1]))
        key = name if name in PROGRAMS else "other"
        self.counts[key] = self.counts.get(key, 0) + 1

    def snapshot(self):
        return dict(self.counts)

    def close(self):
        subprocess.Popen.__init__ = self.original


class Snapshot:
    """What the counters say at one moment."""

    def __init__(self, plugin):
        self.wall = time.monotonic()
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu_self = me.ru_utime + me.ru_stime
        self.cpu_children = kids.ru_utime + kids.ru_stime
        self.server_cpu, self.restarts = plugin.sampler.totals()
        self.runs = plugin.runs.snapshot()
        self.machine = _machine_ticks() / TICK

    def since(self, before):
        runs = {k: v - before.runs.get(k, 0) for k, v in self.runs.items() if v - before.runs.get(k, 0)}
        return {"wall": round(self.wall - before.wall, 2),
                "cpu_self": round(self.cpu_self - before.cpu_self, 2),
                "cpu_children": round(self.cpu_children - before.cpu_children, 2),
                "server_cpu": round(self.server_cpu - before.server_cpu, 2),
                "restarts": self.restarts - before.restarts,
                "runs": runs,
                "machine_cpu": round(self.machine - before.machine, 2)}


class CpuProfile:
    """The plugin: one JSON line per test and per module- or session-scoped fixture setup."""

    def __init__(self, path, lab_dir):
        self.path = path
        self.sampler = ServerSampler(lab_dir)
        self.runs = RunCounter()
        self.out = open(path, "a", encoding="utf-8")  # pylint: disable=consider-using-with

    def write(self, record):
        record["cpu"] = round(record["cpu_self"] + record["cpu_children"] + record["server_cpu"], 2)
        self.out.write(json.dumps(record, sort_keys=True) + "\n")
        self.out.flush()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):  # pylint: disable=unused-argument
        before = Snapshot(self)
        yield
        record = Snapshot(self).since(before)
        record.update(kind="test", nodeid=item.nodeid, file=item.nodeid.split("::")[0])
        self.write(record)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        if fixturedef.scope not in ("module", "session", "package"):
            yield
            return
        before = Snapshot(self)
        yield
        record = Snapshot(self).since(before)
        record.update(kind="fixture", nodeid="%s[%s]" % (fixturedef.argname, fixturedef.scope),
                      file=request.node.nodeid.split("::")[0], test=request.node.nodeid)
        self.write(record)

    def pytest_unconfigure(self, config):  # pylint: disable=unused-argument
        self.sampler.stop.set()
        self.runs.close()
        self.out.close()


def register(config, lab_dir):
    """Register the plugin when DBFLEET_CPU_PROFILE names a file (tests/integration/conftest.py)."""
    path = os.environ.get("DBFLEET_CPU_PROFILE")
    if path:
        config.pluginmanager.register(CpuProfile(os.path.abspath(path), lab_dir), "dbfleet_cpu_profile")


def _runs_total(record):
    return sum(n for k, n in record["runs"].items() if k.startswith("ansible"))


def summary(path, top=20):
    """The top tests and files by CPU, with their restarts and ansible runs, as text."""
    with open(path, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    tests = [r for r in records if r["kind"] == "test"]
    columns = ("cpu", "cpu_self", "cpu_children", "server_cpu", "wall", "restarts")
    lines = []

    def table(title, rows, name_width=70):
        lines.append(title)
        lines.append("%-*s %7s %7s %7s %7s %7s %5s %5s"
                     % (name_width, "", "cpu", "self", "child", "server", "wall", "rest.", "runs"))
        for name, row in rows:
            lines.append("%-*s %7.1f %7.1f %7.1f %7.1f %7.1f %5d %5d"
                         % (name_width, name[-name_width:], row["cpu"], row["cpu_self"], row["cpu_children"],
                            row["server_cpu"], row["wall"], row["restarts"], row["ansible_runs"]))
        lines.append("")

    def add(into, record):
        for column in columns:
            into[column] = into.get(column, 0) + record[column]
        into["ansible_runs"] = into.get("ansible_runs", 0) + _runs_total(record)

    files = {}
    for record in tests:
        add(files.setdefault(record["file"], {}), record)
    total = {}
    for record in tests:
        add(total, record)
    by_test = [(r["nodeid"], dict(r, ansible_runs=_runs_total(r))) for r in tests]
    table("top %d tests by CPU (setup+call+teardown; server = the lab's servers)" % top,
          sorted(by_test, key=lambda x: -x[1]["cpu"])[:top])
    table("top %d files by CPU" % top, sorted(files.items(), key=lambda x: -x[1]["cpu"])[:top])
    table("top %d tests by server restarts" % top,
          sorted((x for x in by_test if x[1]["restarts"]), key=lambda x: (-x[1]["restarts"], -x[1]["cpu"]))[:top])
    table("top %d tests by ansible runs" % top,
          sorted((x for x in by_test if x[1]["ansible_runs"]), key=lambda x: (-x[1]["ansible_runs"], -x[1]["cpu"]))[:top])
    fixtures = [(r["nodeid"] + " " + r["test"], dict(r, ansible_runs=_runs_total(r)))
                for r in records if r["kind"] == "fixture"]
    table("top %d module/session fixture setups by CPU (included in their first test's figures)" % top,
          sorted(fixtures, key=lambda x: -x[1]["cpu"])[:top], name_width=90)
    if total:
        lines.append("all %d tests: cpu %.0f s (self %.0f, children %.0f, servers %.0f), wall %.0f s, %d restarts, "
                     "%d ansible runs" % (len(tests), total["cpu"], total["cpu_self"], total["cpu_children"],
                                          total["server_cpu"], total["wall"], total["restarts"],
                                          total["ansible_runs"]))
    return "\n".join(lines)


def main(argv):
    import argparse  # pylint: disable=import-outside-toplevel
    parser = argparse.ArgumentParser(description=summary.__doc__)
    parser.add_argument("path")
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args(argv)
    print(summary(args.path, args.top))


if __name__ == "__main__":
    main(sys.argv[1:])
