"""SSH mode plumbing: a bridge, one network namespace per host, one sshd per namespace.

    root namespace: bridge dbfleet0 10.231.7.1/24
        veth dbf-<host>  <->  eth0 in namespace dbfleet-<host>, 10.231.7.<n>/24,
                               lo up, default route via 10.231.7.1

Only these addresses, only inside namespaces this tool creates; all traffic stays on this
machine. The filesystem is shared, so each host still has its own directory.

DBFLEET_FLEET_NET=N (1-254, default 7) puts a fleet on 10.231.N.0/24 with bridge dbfleetN,
namespaces dbfleetN-<host> and veths dbfN-<host>, so two checkouts can each run a fleet at once.
"""
import hashlib
import os
import shutil
import socket
import subprocess
import time

from . import LabError, run, say, tail
from .servers import read_pid, terminate


def _fleet_net():
    text = os.environ.get("DBFLEET_FLEET_NET", "7")
    if not text.isdigit() or not 1 <= int(text) <= 254:
        raise LabError("DBFLEET_FLEET_NET must be a number from 1 to 254 (got %r)" % text)
    return int(text)


NET = _fleet_net()
_TAG = "" if NET == 7 else str(NET)
BRIDGE = "dbfleet0" if NET == 7 else "dbfleet%d" % NET
PREFIX = "10.231.%d." % NET
GATEWAY = PREFIX + "1"
NETMASK = 24
SSHD = "/usr/sbin/sshd"


def _link_exists(name):
    return os.path.exists("/sys/class/net/" + name)


def ensure_bridge():
    if _link_exists(BRIDGE):
        return
    taken = run(["ip", "-o", "-4", "addr", "show"])
    if " inet " + PREFIX in taken:
        raise LabError("addresses in %s0/%d already exist on this machine:\n%s"
                       % (PREFIX, NETMASK, "\n".join(l for l in taken.splitlines() if PREFIX in l)))
    run(["ip", "link", "add", BRIDGE, "type", "bridge"])
    run(["ip", "addr", "add", "%s/%d" % (GATEWAY, NETMASK), "dev", BRIDGE])
    run(["ip", "link", "set", BRIDGE, "up"])


def remove_bridge():
    if _link_exists(BRIDGE):
        run(["ip", "link", "del", BRIDGE])


IFNAMSIZ = 15      # longest interface name the kernel takes


def mac_of(address):
    """The namespace side's MAC address, made from its IPv4 address (locally administered, 02:db:a.b.c.d): a host's
    namespace made again (down --purge, then up) answers with the MAC the neighbour caches of the host and of the
    other namespaces still hold, instead of a new random one they would keep sending to for up to a minute."""
    return "02:db:" + ":".join("%02x" % int(part) for part in address.split("."))


def veth_name(host):
    """The root side of a host's veth: dbf<N>-<host>, or dbf<N>-<hash of host> when that is too long
    (galera_replica)."""
    name = "dbf%s-%s" % (_TAG, host)
    if len(name) > IFNAMSIZ:
        name = "dbf%s-%s" % (_TAG, hashlib.sha1(host.encode()).hexdigest()[:IFNAMSIZ - 4 - len(_TAG)])
    return name


class Namespace:
    """The namespace dbfleet-<host> with its address."""

    def __init__(self, host, address):
        self.name = "dbfleet%s-%s" % (_TAG, host)
        self.address = address
        self.veth = veth_name(host)

    @property
    def path(self):
        return "/run/netns/" + self.name

    def exists(self):
        return os.path.exists(self.path)

    def inside(self):
        """True when this process already runs in the namespace (e.g. over SSH into the host)."""
        try:
            mine, theirs = os.stat("/proc/self/ns/net"), os.stat(self.path)
        except OSError:
            return False
        return (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)

    def exec_prefix(self):
        return [] if self.inside() else ["ip", "netns", "exec", self.name]

    @property
    def etc_dir(self):
        """Files `ip netns exec` mounts over /etc inside the namespace (ip-netns(8))."""
        return "/etc/netns/" + self.name

    def ensure(self):
        # No name server answers inside a namespace: a lookup would wait for its timeouts (the rsync daemon
        # of a Galera state transfer looks up every client's address: 10 s per file group). A server on
        # the namespace's own loopback refuses at once.
        os.makedirs(self.etc_dir, exist_ok=True)
        with open(os.path.join(self.etc_dir, "resolv.conf"), "w", encoding="utf-8") as handle:
            handle.write("# Written by lab/lab.py: no name server in %s\nnameserver 127.0.0.1\n"
                         "options timeout:1 attempts:1\n" % self.name)
        if not self.exists():
            if _link_exists(self.veth):        # left from a namespace deleted by hand
                run(["ip", "link", "del", self.veth])
            run(["ip", "netns", "add", self.name])
        if not _link_exists(self.veth):
            run(["ip", "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "address", mac_of(self.address),
                 "netns", self.name])
        run(["ip", "link", "set", self.veth, "master", BRIDGE, "up"])
        inside = ["ip", "-n", self.name]
        run(inside + ["link", "set", "lo", "up"])
        run(inside + ["addr", "replace", "%s/%d" % (self.address, NETMASK), "dev", "eth0"])
        run(inside + ["link", "set", "eth0", "up"])
        run(inside + ["route", "replace", "default", "via", GATEWAY])

    def pids(self):
        if not self.exists():
            return []
        return [int(p) for p in run(["ip", "netns", "pids", self.name]).split()]

    def remove(self):
        """Stop what still runs inside, then delete the veth and the namespace."""
        for pid in self.pids():
            say("  %s: stopping leftover pid %d" % (self.name, pid))
            try:
                terminate(pid, "pid %d in %s" % (pid, self.name), timeout=10)
            except ProcessLookupError:
                pass
        if _link_exists(self.veth):
            run(["ip", "link", "del", self.veth])
        if self.exists():
            run(["ip", "netns", "del", self.name])
        shutil.rmtree(self.etc_dir, ignore_errors=True)


class Sshd:
    """The sshd of one namespace, with its own config, host key and pid file."""

    def __init__(self, host_dir, namespace, authorized_keys):
        self.namespace = namespace
        self.config = os.path.join(host_dir, "sshd_config")
        self.host_key = os.path.join(host_dir, "ssh_host_ed25519_key")
        self.pidfile = os.path.join(host_dir, "sshd.pid")
        self.log = os.path.join(host_dir, "sshd.log")
        self.authorized_keys = authorized_keys

    def pid(self):
        return read_pid(self.pidfile, self.config)

    def start(self):
        if self.pid() is not None:
            return
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        if not os.path.exists(self.host_key):
            run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", self.namespace.name, "-f", self.host_key])
        with open(self.config, "w", encoding="utf-8") as handle:
            handle.write("# Written by lab/lab.py: sshd of %s\n" % self.namespace.name + "\n".join([
                "ListenAddress %s:22" % self.namespace.address,
                "HostKey " + self.host_key,
                "PidFile " + self.pidfile,
                "AuthorizedKeysFile " + self.authorized_keys,
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "StrictModes no",
                "UsePAM no",
                "Subsystem sftp internal-sftp",
            ]) + "\n")
        run(self.namespace.exec_prefix() + [SSHD, "-f", self.config, "-E", self.log])
        deadline = time.monotonic() + 30      # a loaded machine (make test's three streams) is slow to answer
        while True:
            try:
                socket.create_connection((self.namespace.address, 22), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise LabError("sshd in %s does not answer on %s:22\n--- %s\n%s"
                                   % (self.namespace.name, self.namespace.address, self.log, tail(self.log))) from None
                time.sleep(0.2)

    def stop(self):
        pid = self.pid()
        if pid is not None:
            terminate(pid, "sshd of " + self.namespace.name, timeout=10)


def close_control_masters(address, user="root"):
    """Close Ansible's SSH control masters to address (Ansible names them by a hash of host-port-user)."""
    directory = os.path.expanduser(os.environ.get("ANSIBLE_SSH_CONTROL_PATH_DIR", "~/.ansible/cp"))
    for port in ("22", "None"):
        path = os.path.join(directory, hashlib.sha1(("%s-%s-%s" % (address, port, user)).encode()).hexdigest()[:10])
        if os.path.exists(path):
            subprocess.run(["ssh", "-o", "ControlPath=" + path, "-O", "exit", "%s@%s" % (user, address)],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=10, check=False)
