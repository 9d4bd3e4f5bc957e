"""Servers from Debian's own packages, in debootstrap chroots: built once, kept in the cache.

The machine runs Debian 12, whose glibc is too old for the MySQL 9.7 (sid) and MariaDB 11.8
(trixie) binaries, so each of them gets a minimal Debian of its own:

    chroots/<name>/          the chroot (debootstrap --variant=minbase SUITE, then apt-get install)
    chroots/<name>.log       what the build printed (kept after a failure too)

A chroot is built in a temporary directory and renamed into place only when every step worked,
so a later ``lab.py up`` either finds a complete chroot or builds it anew. A failing step raises a
LabError that names it; nothing has been started then (servers start only after every host's
server is prepared).

How an instance reaches it: the server runs as ``unshare -m sh -c 'mount --bind DIR ROOT/DIR &&
exec chroot ROOT mysqld --defaults-file=DIR/my.cnf'``, where DIR is the instance's directory on
the machine. The bind mount puts DIR at the same path inside the chroot, so the option file, the
drop-in directory, the datadir, the socket and the pid file have one path on both sides, and the
roles write drop-ins exactly as for the other hosts; the machine's /proc is bound at the chroot's
/proc the same way (what a server's helper scripts read: the Galera state transfer's), and the
/etc/resolv.conf of where it runs (in the fleet, its namespace's) at the chroot's. The mounts
live in the server's private mount namespace: they disappear with the server, and nothing is ever
mounted in the shared cache itself.
In the SSH fleet the same command runs behind ``ip netns exec``.
"""
import os
import shutil
import subprocess
import tempfile
import time

from . import LabError, built_once, say

MIRROR = "http://deb.debian.org/debian"
APT_ENV = {"DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
# The mirror's Release files can be past their Valid-Until date; apt refuses them without this.
APT_OPTIONS = ["-o", "Acquire::Check-Valid-Until=false", "-o", "Acquire::Retries=3"]
# Packages' maintainer scripts must not start services inside the chroot.
POLICY_RC_D = "#!/bin/sh\n# dbfleet lab: never start services inside this chroot\nexit 101\n"


def _mounts_under(path):
    """Mount points at or below path (debootstrap mounts /proc and /sys while it works)."""
    found = []
    real = os.path.realpath(path)
    try:
        with open("/proc/self/mounts", encoding="utf-8") as handle:
            for line in handle:
                point = line.split()[1].replace("\\040", " ")
                if point == real or point.startswith(real + "/"):
                    found.append(point)
    except OSError:
        pass
    return sorted(found, key=len, reverse=True)


def remove_tree(path):
    """Delete a half-built chroot: unmount what debootstrap may have left mounted first."""
    for point in _mounts_under(path):
        subprocess.run(["umount", "-l", point], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if _mounts_under(path):
        raise LabError("cannot remove %s: something is still mounted below it (%s)"
                       % (path, ", ".join(_mounts_under(path))))
    shutil.rmtree(path, ignore_errors=True)


def _step(name, what, argv, log, env=None):
    """Run one build step, its output appended to log; LabError naming the step when it fails."""
    started = time.monotonic()
    with open(log, "a", encoding="utf-8") as out:
        out.write("\n### %s: %s\n" % (what, " ".join(argv)))
        out.flush()
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                              env=env, check=False)
    if proc.returncode != 0:
        with open(log, encoding="utf-8", errors="replace") as handle:
            last = "\n".join(handle.read().splitlines()[-15:])
        raise LabError("building the %s chroot failed at step '%s' (exit %d): %s\n--- last lines of %s\n%s"
                       % (name, what, proc.returncode, " ".join(argv), log, last))
    with open(log, "a", encoding="utf-8") as out:
        out.write("### %s took %.1f s\n" % (what, time.monotonic() - started))
    say("    %s: %s (%.0f s)" % (name, what, time.monotonic() - started))


@built_once(lambda name, suite, packages, check_binary, cache: os.path.join(cache, "chroots", name))
def ensure_chroot(name, suite, packages, check_binary, cache):
    """cache/chroots/<name>: Debian SUITE with packages installed; built once, then reused."""
    root = os.path.join(cache, "chroots")
    target = os.path.join(root, name)
    if os.path.isdir(target):
        return target
    for tool in ("debootstrap", "unshare", "chroot"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            package = "debootstrap" if tool == "debootstrap" else "util-linux / coreutils"
            raise LabError("%s is missing: the %s server runs in a Debian chroot (Debian package %s; "
                           "`make apt` installs it)" % (tool, name, package))
    if os.geteuid() != 0:
        raise LabError("building the %s chroot needs root (debootstrap, chroot)" % name)
    os.makedirs(root, exist_ok=True)
    log = os.path.join(root, name + ".log")
    with open(log, "w", encoding="utf-8") as handle:
        handle.write("# dbfleet lab: building the %s chroot (Debian %s: %s)\n" % (name, suite, " ".join(packages)))
    tmp = tempfile.mkdtemp(dir=root, prefix="." + name + "-")
    started = time.monotonic()
    say("  building a Debian %s chroot for %s (first time only; log %s)" % (suite, name, log))
    try:
        debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
        _step(name, "debootstrap", [debootstrap, "--variant=minbase", suite, tmp, MIRROR], log)
        policy = os.path.join(tmp, "usr", "sbin", "policy-rc.d")
        with open(policy, "w", encoding="utf-8") as handle:
            handle.write(POLICY_RC_D)
        os.chmod(policy, 0o755)
        _step(name, "apt-get update", ["chroot", tmp, "apt-get"] + APT_OPTIONS + ["-q", "update"], log, APT_ENV)
        _step(name, "apt-get install", ["chroot", tmp, "apt-get"] + APT_OPTIONS
              + ["-q", "-y", "--no-install-recommends", "install"] + list(packages), log, APT_ENV)
        _step(name, "apt-get clean", ["chroot", tmp, "apt-get", "clean"], log, APT_ENV)
        # Debian's MySQL build defaults secure-file-priv to this directory (mysql-server's postinst
        # makes it; only the -core packages are installed): without it even --help aborts.
        os.makedirs(os.path.join(tmp, "var", "lib", "mysql-files"), mode=0o700, exist_ok=True)
        _step(name, "server binary runs", ["chroot", tmp, check_binary, "--version"], log, APT_ENV)
        if _mounts_under(tmp):
            raise LabError("building the %s chroot: debootstrap left mounts below %s: %s"
                           % (name, tmp, ", ".join(_mounts_under(tmp))))
        os.chmod(tmp, 0o755)
        os.rename(tmp, target)
    finally:
        if os.path.exists(tmp):
            remove_tree(tmp)
    say("  %s chroot ready in %.0f s: %s" % (name, time.monotonic() - started, target))
    return target


def wrap(chroot, binds, argv):
    """argv run inside chroot, each directory in binds mounted at its own path inside it (the mounts
    live in a private mount namespace of that process only). The pid stays the server's: unshare,
    sh and chroot each exec the next."""
    # /proc as the machine's: a Galera node's state transfer script finds its rsync daemon through it
    # (`ss -p`, /proc/PID); without it the joiner takes the running daemon for dead and gives up.
    script = ["mount --bind /proc %s" % _q(chroot + "/proc")]
    # Name lookups as where the server runs (the fleet: its namespace's resolv.conf, refused at once); with
    # the chroot's own copy of the build machine's, the rsync daemon of a state transfer waited 10 s on
    # every client lookup.
    if os.path.isfile(chroot + "/etc/resolv.conf") and not os.path.islink(chroot + "/etc/resolv.conf"):
        script.append("mount --bind /etc/resolv.conf %s" % _q(chroot + "/etc/resolv.conf"))
    for path in binds:
        inside = chroot + path
        script.append("mkdir -p %s && mount --bind %s %s" % (_q(inside), _q(path), _q(inside)))
    script.append('exec chroot %s "$@"' % _q(chroot))
    # Arguments follow the script ($0 is a name for ps), so a caller may append more of them.
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", " && ".join(script),
            "dbfleet-chroot"] + list(argv)


def _q(text):
    return "'" + str(text).replace("'", "'\"'\"'") + "'"
