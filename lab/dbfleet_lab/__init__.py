"""Building blocks of the dbfleet lab (see lab/lab.py for the command line).

Modules:

- ``artifacts``: server distributions from Maven Central (cached, sha256-verified, extracted once).
- ``chroots``: Debian chroots (debootstrap) for the servers the machine's Debian is too old for
  (MySQL 9.7 from sid, MariaDB 11.8 from trixie): built once into the cache, started with a private
  bind mount of the instance's directory.
- ``servers``: server kinds (MySQL 9.7/8.0/5.7/5.6, MariaDB 11.8/10.11), pristine datadir templates,
  one instance = one directory with its option file, datadir, socket, pid file and logs.
- ``netns``: network namespaces, the bridge and one sshd per namespace (SSH mode).
- ``machines``: booted hosts of the SSH fleet: a Debian root per distribution with systemd, sshd and the
  packaged server (debootstrap, cached), one copy per host booted by systemd-nspawn in its namespace.
- ``labs``: the two labs (local and SSH fleet), their hosts, secrets and inventories.
- ``inventory``: reading those inventories back (for the tests and benchmarks).
- ``yamlout``: a small YAML emitter for the inventories (the lab needs no PyYAML).
"""
import os
import subprocess


class LabError(Exception):
    """An error the user can act on; lab.py prints it without a traceback."""


def run(argv, **kwargs):
    """Run a command, raise LabError with its output when it fails."""
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False, **kwargs)
    if proc.returncode != 0:
        raise LabError("command failed (exit %d): %s\n%s" % (proc.returncode, " ".join(argv), proc.stdout.strip()))
    return proc.stdout


def tail(path, lines=20):
    """The last lines of a log file, for error messages."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 16384))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return "(no %s)" % path
    return "\n".join(text.splitlines()[-lines:])


def say(message):
    """Progress output (stdout, flushed: lab.py runs under make and pytest)."""
    print(message, flush=True)
