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
import contextlib
import fcntl
import functools
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


@contextlib.contextmanager
def building(target):
    """Hold the build lock of the cache entry TARGET (the file TARGET.lock, kept).

    On a fresh machine the streams of `make test` start labs at once, and two of them may need the same
    server, chroot, root or template. The second waits here for the first and then finds the entry built,
    instead of building it again and failing to rename its copy onto the first one's."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target + ".lock", "a", encoding="ascii") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def built_once(target_of):
    """Decorate a cache entry's ensure function, which returns early when its entry exists: while the entry
    target_of(*args) is missing, the function runs under the entry's build lock (`building`)."""
    def decorate(ensure):
        @functools.wraps(ensure)
        def locked(*args, **kwargs):
            target = target_of(*args, **kwargs)
            if os.path.isdir(target):
                return ensure(*args, **kwargs)
            with building(target):
                return ensure(*args, **kwargs)
        return locked
    return decorate


def say(message):
    """Progress output (stdout, flushed: lab.py runs under make and pytest)."""
    print(message, flush=True)


RESERVED_PORTS = "/proc/sys/net/ipv4/ip_local_reserved_ports"


def reserve_ports(ports, path=RESERVED_PORTS):
    """Keep the kernel from giving the lab's listening ports to outgoing connections as their local port.

    Linux takes those from net.ipv4.ip_local_port_range (32768-60999 by default), which holds the lab's
    ports (base 33000): a server started or restarted while some client connection holds its port as a
    local port fails with "Address already in use" (seen: galera3 on 33303 during make test). The ports are
    added to net.ipv4.ip_local_reserved_ports, which only automatic local ports honour. Needs root; returns
    whether the ports are reserved."""
    try:
        with open(path, encoding="ascii") as handle:
            current = handle.read().strip()
    except OSError:
        return False
    have = set()
    for part in filter(None, current.split(",")):
        bounds = part.split("-", 1)
        have.update(range(int(bounds[0]), int(bounds[-1]) + 1))
    missing = sorted(set(int(port) for port in ports) - have)
    if not missing:
        return True
    try:
        with open(path, "w", encoding="ascii") as handle:
            handle.write(",".join([current] * bool(current) + [str(port) for port in missing]))
    except OSError:
        return False
    return True
