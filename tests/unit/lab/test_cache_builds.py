"""A cache entry (server, chroot, machine root, datadir template) is built by one process at a time."""
import multiprocessing
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import built_once  # noqa: E402  pylint: disable=wrong-import-position


@built_once(lambda name, cache, log: os.path.join(cache, name))
def ensure_entry(name, cache, log):
    """The shape of the lab's ensure functions: return early when built, else build into a temporary
    directory and rename it into place (which fails when another process renamed its copy first)."""
    target = os.path.join(cache, name)
    if os.path.isdir(target):
        return target
    with open(log, "a", encoding="ascii") as handle:
        handle.write("build\n")
    tmp = tempfile.mkdtemp(dir=cache, prefix="." + name + "-")
    time.sleep(0.3)
    os.rename(tmp, target)
    return target


def _ensure(args):
    return ensure_entry(*args)


def test_processes_needing_one_entry_at_once_build_it_once(tmp_path):
    log = str(tmp_path / "builds.log")
    with multiprocessing.get_context("fork").Pool(4) as pool:
        targets = pool.map(_ensure, [("mariadb118-trixie", str(tmp_path), log)] * 4)
    assert targets == [str(tmp_path / "mariadb118-trixie")] * 4
    with open(log, encoding="ascii") as handle:
        assert handle.read() == "build\n"
    assert sorted(os.listdir(tmp_path)) == ["builds.log", "mariadb118-trixie", "mariadb118-trixie.lock"]


def test_a_built_entry_is_returned_without_taking_the_lock(tmp_path):
    os.makedirs(str(tmp_path / "built"))
    assert ensure_entry("built", str(tmp_path), str(tmp_path / "log")) == str(tmp_path / "built")
    assert not os.path.exists(str(tmp_path / "built.lock"))
