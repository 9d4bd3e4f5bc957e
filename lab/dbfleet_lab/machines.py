"""Booted hosts: a Debian root with systemd, sshd and a packaged server, booted by systemd-nspawn.

A host of the SSH fleet is usually a network namespace with an sshd and a server started by the lab
(netns.py). A booted host is a whole machine instead, shaped like a user's host:

    systemd-nspawn -b -D <lab>/fleet/<host>/root --register=no --keep-unit -M <host>
                   --network-namespace-path=/run/netns/<the fleet's namespace of the host>

systemd is PID 1 inside; it starts the distribution's own units (``mariadb.service``,
``mysql.service``, ``ssh.service``). The server is the distribution's package, with the package's
option layout (``/etc/mysql/my.cnf`` and its ``!includedir``s), its socket and its ``unix_socket``
root login. Ansible arrives over SSH as the unprivileged user ``deploy`` (passwordless sudo, the
lab's key) and uses ``become``. The lab's own settings for replication (server id, binary log,
listening on the namespace's address) are one option file the lab writes into the package's
server directory, as a DBA's configuration management would.

Roots, built once per distribution into the cache (like chroots.py's):

    machines/<key>/          debootstrap --variant=minbase SUITE, --include= the packages below
    machines/<key>.log       what the build printed

Each host gets its own copy (``cp -a --reflink=auto``, ~10 s) under ``<lab>/fleet/<host>/root``;
``down --purge`` deletes it. The host machine's PID 1 is not systemd here, so ``machinectl`` does not
work: commands run inside with ``nsenter`` at the container's leader PID (``Machine.inside()``).
"""
import hashlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from . import LabError, built_once, run, say, tail
from .chroots import APT_ENV, APT_OPTIONS, MIRROR, POLICY_RC_D, _mounts_under, _step, remove_tree
from .connection import Connection
from .servers import MYSQL80, MariaDB, MySQL80

BASE_PACKAGES = ("systemd", "systemd-sysv", "dbus", "openssh-server", "sudo", "python3", "python3-pymysql",
                 "iproute2", "procps", "ca-certificates")
DEPLOY_USER = "deploy"
BOOT_TIMEOUT = 120
STOP_TIMEOUT = 60
LAB_OPTION_FILE = "55-dbfleet-lab.cnf"     # the lab's replication settings, in the package's server directory


# Each machine's own group in the kernel's cgroup v2 hierarchy. systemd-nspawn puts the container into "payload" (and
# itself into "supervisor") under the group it runs in; started side by side from one group (on this machine, whose
# PID 1 is not systemd, every process is in the hierarchy's root "/") all machines share "/payload", so systemd inside
# each sees the same "/payload/system.slice/mysql.service" for its unit: the other machines' servers (of this lab and
# any other on the machine) count as processes of its own unit, which it cannot signal (another PID namespace: PID 0
# in its cgroup.procs) and which never leave. A stop then waits in final-sigterm until they do; Debian's mysql.service
# (TimeoutSec=infinity) waits for ever (docs/hosts.md, "A stop that outlives the server").
CGROUP2_MOUNT = "/run/dbfleet-lab/cgroup2"


def cgroup2_mount(mountinfo="/proc/self/mountinfo", mount=True):
    """Where the cgroup v2 hierarchy is mounted on this machine; mounted at CGROUP2_MOUNT when nowhere (a machine with
    only v1 hierarchies mounted), or None then with mount=False."""
    def find():
        with open(mountinfo, encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                dash = fields.index("-")
                if fields[dash + 1] == "cgroup2" and fields[3] == "/":
                    return fields[4]
        return None
    found = find()
    if found is None and mount:
        os.makedirs(CGROUP2_MOUNT, exist_ok=True)
        proc = subprocess.run(["mount", "-t", "cgroup2", "cgroup2", CGROUP2_MOUNT], capture_output=True, text=True,
                              check=False)
        found = find()      # another lab may have mounted it meanwhile
        if found is None:
            raise LabError("cannot mount the cgroup v2 hierarchy at %s: %s" % (CGROUP2_MOUNT, proc.stderr.strip()))
    return found


def own_cgroup_path(proc_cgroup="/proc/self/cgroup"):
    """This process's group in the cgroup v2 hierarchy ("0::PATH")."""
    with open(proc_cgroup, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("0::"):
                return line[3:].strip() or "/"
    return "/"


def machine_cgroup_name(host, root):
    """The name of a machine's own cgroup: its host name and a digest of its root (two labs' pkg4 differ)."""
    return "dbfleet-%s-%s" % (host, hashlib.sha256(os.path.abspath(root).encode()).hexdigest()[:12])


class Distribution:
    """A root made by debootstrap: suite, server packages, the server's unit and option layout."""

    def __init__(self, key, suite, packages, unit, server_dir, client, binary, flavor,  # pylint: disable=too-many-arguments
                 unified_cgroup=False, tarball=None, stage=None):
        self.key = key
        self.tarball = tarball      # a servers.ServerKind whose tarball is installed as a vendor's package would be
        self.stage = stage or key   # the debootstrap stage (machines/.<stage>.debootstrap), shared by one suite's roots
        self.unified_cgroup = unified_cgroup
        # After the package's own server file: MySQL's is mysql.conf.d/mysqld.cnf (bind-address = 127.0.0.1).
        self.lab_option_file = "zz-dbfleet-lab.cnf" if flavor == "mysql" else LAB_OPTION_FILE
        self.flavor = flavor              # machines/<key>
        self.suite = suite
        self.packages = tuple(packages)
        self.unit = unit            # the package's unit (what the collection must discover)
        self.server_dir = server_dir  # the package's directory of server option files
        self.client = client        # the package's command-line client
        self.binary = binary


BOOKWORM_MARIADB = Distribution("bookworm-mariadb", "bookworm", ["mariadb-server", "mariadb-client"],
                                "mariadb.service", "/etc/mysql/mariadb.conf.d", "mariadb", "/usr/sbin/mariadbd", "mariadb")
TRIXIE_MARIADB = Distribution("trixie-mariadb", "trixie", ["mariadb-server", "mariadb-client"],
                              "mariadb.service", "/etc/mysql/mariadb.conf.d", "mariadb", "/usr/sbin/mariadbd", "mariadb")
SID_MYSQL = Distribution("sid-mysql", "sid", ["mysql-server", "mysql-client"],
                         "mysql.service", "/etc/mysql/mysql.conf.d", "mysql", "/usr/sbin/mysqld", "mysql", unified_cgroup=True)

# MySQL 8.0.33 with the memcached plugin has no package in the lab's sources (Debian 12 ships MariaDB; the lab
# adds no vendor repository): the lab's tarball (servers.MYSQL80) installed under /usr/local/mysql
# and run by a unit written as Oracle's own Debian package (mysql-community-server) writes it, with that
# package's option layout. What the vendor's package gives, and where this root follows it:
#   unit          mysql.service: Type=forking, mysqld --daemonize --pid-file=/var/run/mysqld/mysqld.pid,
#                 PIDFile=, RuntimeDirectory=mysqld, ExecStartPre= the package's "mysql-systemd-start pre"
#                 (checks /etc/mysql/my.cnf, initializes an empty datadir), Restart=on-failure,
#                 RestartPreventExitStatus=1 (which a forking unit's failing start does not meet: the exit is the
#                 control process's, so systemd retries a refused start), LimitNOFILE=5000
#   options       /etc/mysql/my.cnf -> mysql.cnf: !includedir /etc/mysql/conf.d/, !includedir /etc/mysql/mysql.conf.d/;
#                 mysql.conf.d/mysqld.cnf: pid-file, socket /var/run/mysqld/mysqld.sock, datadir /var/lib/mysql,
#                 log-error /var/log/mysql/error.log
#   root login    a blank root password at install: root@localhost IDENTIFIED WITH auth_socket
# The tarball's own defaults differ from the package's binaries: its client looks for /tmp/mysql.sock (the
# package's is built with /var/run/mysqld/mysqld.sock), so the host's option files name the socket in [client],
# as an operator of such a host writes them; its basedir is where the binary is (/usr/local/mysql).
TARBALL_BASEDIR = "/usr/local/mysql"
VENDOR_SOCKET = "/var/run/mysqld/mysqld.sock"
BOOKWORM_MYSQL80 = Distribution("bookworm-mysql80", "bookworm", ["libaio1", "libnuma1", "libncurses6"],
                                "mysql.service", "/etc/mysql/mysql.conf.d", TARBALL_BASEDIR + "/bin/mysql",
                                TARBALL_BASEDIR + "/bin/mysqld", "mysql", tarball=MYSQL80, stage="bookworm-mariadb")

VENDOR_UNIT = """\
# Written by lab/lab.py the way Oracle's Debian package (mysql-community-server 8.0) writes its unit;
# the server is the MySQL %(version)s tarball under %(basedir)s.

[Unit]
Description=MySQL Community Server
After=network.target

[Install]
WantedBy=multi-user.target

[Service]
User=mysql
Group=mysql
Type=forking
PermissionsStartOnly=true
PIDFile=/var/run/mysqld/mysqld.pid
ExecStartPre=/usr/share/mysql-8.0/mysql-systemd-start pre
ExecStart=%(basedir)s/bin/mysqld --daemonize --pid-file=/var/run/mysqld/mysqld.pid
TimeoutSec=600
LimitNOFILE=5000
Restart=on-failure
RestartPreventExitStatus=1
RuntimeDirectory=mysqld
RuntimeDirectoryMode=755
"""

VENDOR_START = """\
#!/bin/bash
# Written by lab/lab.py: what the "pre" step of Oracle's Debian package does before mysqld starts
# (ExecStartPre of mysql.service): the configuration must be readable, the directories there, and an
# empty datadir is initialized (root without a password; the package's postinst then gives root auth_socket).
set -e
[ "$1" = pre ] || { echo "usage: $0 pre" >&2; exit 1; }
if [ ! -r /etc/mysql/my.cnf ]; then
    echo "MySQL configuration not found at /etc/mysql/my.cnf. Please install one."
    exit 1
fi
install -d -m 0755 -o mysql -g mysql /var/run/mysqld
install -d -m 0750 -o mysql -g mysql /var/log/mysql
datadir=$(%(basedir)s/bin/my_print_defaults mysqld | sed -n 's/^--datadir=//p' | tail -n 1)
datadir=${datadir:-/var/lib/mysql}
if [ ! -d "$datadir/mysql" ]; then
    install -d -m 0700 -o mysql -g mysql "$datadir"
    %(basedir)s/bin/mysqld --initialize-insecure --user=mysql ${INIT_FILE:+--init-file=$INIT_FILE}
fi
"""

VENDOR_OPTION_FILES = {
    "etc/mysql/mysql.cnf": "# The MySQL database server configuration file (as Oracle's Debian package lays it out).\n"
                           "!includedir /etc/mysql/conf.d/\n!includedir /etc/mysql/mysql.conf.d/\n",
    "etc/mysql/conf.d/mysql.cnf": "[mysql]\n",
    "etc/mysql/conf.d/client.cnf": "# The socket Oracle's packaged clients are built with (this tarball's client looks for /tmp/mysql.sock).\n"
                                   "[client]\nsocket = " + VENDOR_SOCKET + "\n",
    "etc/mysql/mysql.conf.d/mysqld.cnf": "# The MySQL Community Server configuration file (as Oracle's Debian package writes it).\n"
                                         "[mysqld]\npid-file\t= /var/run/mysqld/mysqld.pid\nsocket\t\t= " + VENDOR_SOCKET
                                         + "\ndatadir\t\t= /var/lib/mysql\nlog-error\t= /var/log/mysql/error.log\n",
}

# The postinst's answer to a blank root password, run by the datadir's initialization in the root's build.
ROOT_AUTH_SOCKET = ("INSTALL PLUGIN auth_socket SONAME 'auth_socket.so';\n"
                    "ALTER USER 'root'@'localhost' IDENTIFIED WITH auth_socket;\n")


@built_once(lambda dist, cache: os.path.join(cache, "machines", dist.key))
def ensure_root(dist, cache):
    """cache/machines/<key>: a bootable Debian root with the server's packages; built once, then reused."""
    base = os.path.join(cache, "machines")
    target = os.path.join(base, dist.key)
    if os.path.isdir(target):
        return target
    for tool in ("debootstrap", "systemd-nspawn", "nsenter"):
        if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
            package = {"debootstrap": "debootstrap", "systemd-nspawn": "systemd-container"}.get(tool, "util-linux")
            raise LabError("%s is missing: booted hosts need it (Debian package %s; `make apt` installs it)"
                           % (tool, package))
    if os.geteuid() != 0:
        raise LabError("building the %s root needs root (debootstrap)" % dist.key)
    os.makedirs(base, exist_ok=True)
    log = os.path.join(base, dist.key + ".log")
    with open(log, "w", encoding="utf-8") as handle:
        handle.write("# dbfleet lab: building the %s root (Debian %s)\n" % (dist.key, dist.suite))
    started = time.monotonic()
    say("  building a bootable Debian %s root for %s (first time only; log %s)" % (dist.suite, dist.key, log))
    stage = _debootstrapped(dist, base, log)
    tmp = tempfile.mkdtemp(dir=base, prefix="." + dist.key + "-")
    os.chmod(tmp, 0o755)        # it becomes "/": the server's user must traverse it
    try:
        _step(dist.key, "copy the debootstrap stage", ["cp", "-a", "--reflink=auto", stage + "/.", tmp], log)
        policy = os.path.join(tmp, "usr", "sbin", "policy-rc.d")
        with open(policy, "w", encoding="utf-8") as handle:
            handle.write(POLICY_RC_D)
        os.chmod(policy, 0o755)
        # The server's packages inside systemd-nspawn (not booted): /proc, /sys and /dev as on a host,
        # so their maintainer scripts initialize the datadir as they do on a user's machine.
        nspawn = ["systemd-nspawn", "--quiet", "--directory=" + tmp, "--register=no", "--keep-unit",
                  "--setenv=DEBIAN_FRONTEND=noninteractive", "--setenv=LC_ALL=C"]
        _step(dist.key, "apt-get update", nspawn + ["apt-get"] + APT_OPTIONS + ["-q", "update"], log, APT_ENV)
        _step(dist.key, "apt-get install", nspawn + ["apt-get"] + APT_OPTIONS
              + ["-q", "-y", "--no-install-recommends", "install"] + list(dist.packages), log, APT_ENV)
        _step(dist.key, "apt-get clean", nspawn + ["apt-get", "clean"], log, APT_ENV)
        os.remove(policy)       # booted, the machine starts its services as any host does
        if dist.tarball is not None:
            _install_tarball(dist, tmp, cache, log)
        # In systemd-nspawn: a tarball's binary finds its libraries through $ORIGIN, which needs /proc.
        _step(dist.key, "server binary runs", nspawn + [dist.binary, "--version"], log, APT_ENV)
        _prepare_base(dist, tmp, nspawn, log)
        if _mounts_under(tmp):
            raise LabError("building the %s root: mounts left below %s: %s" % (dist.key, tmp, ", ".join(_mounts_under(tmp))))
        os.rename(tmp, target)
    finally:
        if os.path.exists(tmp):
            remove_tree(tmp)
    say("  %s root ready in %.0f s: %s" % (dist.key, time.monotonic() - started, target))
    return target


@built_once(lambda dist, base, log: os.path.join(base, "." + dist.stage + ".debootstrap"))
def _debootstrapped(dist, base, log):
    """machines/.<key>.debootstrap: the debootstrap stage, kept, so that a build failing later (a package's
    script) does not download and unpack the base system again (that takes 1-9 minutes on a busy machine)."""
    stage = os.path.join(base, "." + dist.stage + ".debootstrap")
    if os.path.isdir(stage):
        return stage
    tmp = tempfile.mkdtemp(dir=base, prefix="." + dist.stage + ".debootstrap-")
    os.chmod(tmp, 0o755)
    try:
        debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
        _step(dist.key, "debootstrap", [debootstrap, "--variant=minbase", "--include=" + ",".join(BASE_PACKAGES),
                                        dist.suite, tmp, MIRROR], log)
        if _mounts_under(tmp):
            raise LabError("debootstrap left mounts below %s: %s" % (tmp, ", ".join(_mounts_under(tmp))))
        os.rename(tmp, stage)
    finally:
        if os.path.exists(tmp):
            remove_tree(tmp)
    return stage


def _prepare_base(dist, root, nspawn, log):
    """What every booted host of the lab shares: the deploy user with passwordless sudo, no
    getty on a console nobody reads, no host keys (each copy makes its own at first boot)."""
    run(["chroot", root, "useradd", "--create-home", "--shell", "/bin/bash", DEPLOY_USER])
    sudoers = os.path.join(root, "etc", "sudoers.d", DEPLOY_USER)
    with open(sudoers, "w", encoding="utf-8") as handle:
        handle.write("# dbfleet lab: the deploy user becomes root without a password\n%s ALL=(ALL) NOPASSWD:ALL\n"
                     % DEPLOY_USER)
    os.chmod(sudoers, 0o440)
    for unit in ("getty@tty1.service", "console-getty.service"):
        run(["chroot", root, "systemctl", "mask", unit])
    for key in os.listdir(os.path.join(root, "etc", "ssh")):
        if key.startswith("ssh_host_"):
            os.remove(os.path.join(root, "etc", "ssh", key))     # each copy makes its own (Machine.create)
    if dist.flavor == "mariadb" and not os.path.isdir(os.path.join(root, "var", "lib", "mysql", "mysql")):
        # Debian's mariadb-server leaves the datadir to the first start when installed without a running
        # system: initialized as its postinst would (root through unix_socket; --force: the build root's
        # hostname does not resolve).
        _step(dist.key, "initialize the datadir", nspawn + [
            "mariadb-install-db", "--user=mysql", "--datadir=/var/lib/mysql", "--skip-test-db",
            "--auth-root-authentication-method=socket", "--force"], log, APT_ENV)
    if dist.tarball is not None and not os.path.isdir(os.path.join(root, "var", "lib", "mysql", "mysql")):
        # As the vendor's package does at install: the unit's pre step initializes the datadir, and the
        # postinst gives root auth_socket (the answer to a blank root password).
        init_file = os.path.join(root, "usr", "share", "mysql-8.0", "dbfleet-root-auth.sql")     # read by user mysql
        with open(init_file, "w", encoding="utf-8") as handle:
            handle.write(ROOT_AUTH_SOCKET)
        os.chmod(init_file, 0o644)
        try:
            _step(dist.key, "initialize the datadir", nspawn + ["--setenv=INIT_FILE=/usr/share/mysql-8.0/dbfleet-root-auth.sql",
                                                                "/usr/share/mysql-8.0/mysql-systemd-start", "pre"],
                  log, APT_ENV)
        except LabError as exc:
            raise LabError("%s\n--- /var/log/mysql/error.log\n%s" % (exc, tail(os.path.join(root, "var", "log", "mysql", "error.log")))) from None
        finally:
            os.remove(init_file)


def _install_tarball(dist, root, cache, log):
    """The server's tarball under /usr/local/mysql, the user mysql, and the vendor package's unit, start step
    and option files (see BOOKWORM_MYSQL80)."""
    source = dist.tarball.basedir(cache)
    target = os.path.join(root, TARBALL_BASEDIR.lstrip("/"))
    _step(dist.key, "install the %s tarball" % dist.tarball.version, ["cp", "-a", "--reflink=auto", source + "/.", target], log)
    run(["chroot", root, "chown", "-R", "root:root", TARBALL_BASEDIR])
    run(["chroot", root, "useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
         "--shell", "/bin/false", "mysql"])
    for tool in ("mysql", "mysqladmin", "mysqlbinlog", "my_print_defaults"):
        os.symlink(TARBALL_BASEDIR + "/bin/" + tool, os.path.join(root, "usr", "bin", tool))
    values = {"version": dist.tarball.version, "basedir": TARBALL_BASEDIR}
    files = dict(VENDOR_OPTION_FILES)
    files["usr/lib/systemd/system/" + dist.unit] = VENDOR_UNIT % values
    files["usr/share/mysql-8.0/mysql-systemd-start"] = VENDOR_START % values
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(full, 0o755 if path.endswith("systemd-start") else 0o644)
    os.symlink("mysql.cnf", os.path.join(root, "etc", "mysql", "my.cnf"))
    run(["chroot", root, "systemctl", "enable", dist.unit])


class Machine:
    """One booted host: its root, its nspawn process, the server unit inside it.

    It answers to what labs.Lab asks of a server instance (pid, create, launch, wait_ready,
    provision, stop, query, connect_root), so the fleet treats it as any of its hosts."""

    def __init__(self, name, dist, lab_dir, server_id, address, netns, public_key, extra_options=()):  # pylint: disable=too-many-arguments
        self.name = name
        self.public_key = public_key
        self.dist = dist
        self.kind = None
        self.server_id = server_id
        self.address = address
        self.netns = netns
        self.port = 3306
        self.extra_options = list(extra_options)
        self.dir = os.path.join(lab_dir, name)
        self.root = os.path.join(self.dir, "root")
        self.pidfile = os.path.join(self.dir, "nspawn.pid")
        self.console_log = os.path.join(self.dir, "console.log")
        self.marker = os.path.join(self.dir, ".provisioned")
        # The fleet's network has no DNS: without skip-name-resolve every TCP login waits ~10 s for a reverse lookup.
        # Paths inside the machine, as the package has them (for the lab's status; never in the inventory).
        self.socket = "/run/mysqld/mysqld.sock"
        self.option_file = "/etc/mysql/my.cnf"
        self.dropin_dir = dist.server_dir
        self.error_log = os.path.join(self.root, "var", "log", "mysql", "error.log")
        self._admin = None

    # ------------------------------------------------------------ processes
    def nspawn_pid(self):
        try:
            with open(self.pidfile, encoding="utf-8") as handle:
                pid = int(handle.read().strip())
        except (OSError, ValueError):
            return None
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as handle:
                cmdline = handle.read().split(b"\0")
        except OSError:
            return None
        if not cmdline[0].endswith(b"systemd-nspawn") or ("--directory=" + self.root).encode() not in cmdline:
            return None
        return pid

    def leader(self):
        """The container's PID 1 as the host sees it (the nspawn process's child)."""
        pid = self.nspawn_pid()
        if pid is None:
            return None
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid), encoding="utf-8") as handle:
                children = handle.read().split()
        except OSError:
            return None
        return int(children[0]) if children else None

    def inside(self, argv, check=True, timeout=120):
        """Run argv inside the machine (every namespace of its PID 1); CompletedProcess, text."""
        leader = self.leader()
        if leader is None:
            raise LabError("%s is not booted (no systemd-nspawn process for %s)" % (self.name, self.root))
        proc = subprocess.run(["nsenter", "-t", str(leader), "-a"] + list(argv), stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, check=False, timeout=timeout)
        if check and proc.returncode != 0:
            raise LabError("%s: %s failed (exit %d): %s" % (self.name, " ".join(argv), proc.returncode,
                                                            (proc.stdout + proc.stderr).strip()))
        return proc

    def unit_state(self):
        """ActiveState and MainPID (inside the machine) of the server's unit."""
        proc = self.inside(["systemctl", "show", "-p", "ActiveState", "-p", "MainPID", self.dist.unit], check=False)
        values = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
        return values.get("ActiveState"), int(values.get("MainPID") or 0)

    def pid(self):
        """The container's leader PID while the server's unit is active, else None."""
        leader = self.leader()
        if leader is None:
            return None
        try:
            state, main_pid = self.unit_state()
        except (LabError, subprocess.TimeoutExpired):
            return None
        return leader if state == "active" and main_pid else None

    def server_pid(self):
        """The server's main PID as the host sees it (the unit's MainPID is the machine's own PID namespace's),
        or None: what a test kills, or compares before and after a restart."""
        leader = self.leader()
        if leader is None:
            return None
        try:
            state, main_pid = self.unit_state()
            namespace = os.readlink("/proc/%d/ns/pid" % leader)
        except (LabError, OSError, subprocess.TimeoutExpired):
            return None
        if state != "active" or not main_pid:
            return None
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.readlink("/proc/%s/ns/pid" % entry) != namespace:
                    continue
                with open("/proc/%s/status" % entry, encoding="utf-8") as handle:
                    nspid = [line.split()[1:] for line in handle if line.startswith("NSpid:")]
            except OSError:
                continue
            if nspid and nspid[0] and int(nspid[0][-1]) == main_pid:
                return int(entry)
        return None

    NO_RESTART_DROPIN = "zz-dbfleet-lab-no-restart.conf"

    def keep_down_when_killed(self, on):
        """A killed server stays down, as a tarball server killed stays down (on=True): a runtime drop-in suspends
        the unit's Restart= (a restart asked of systemctl still restarts; a killed server ends the unit failed,
        Result=signal); on=False puts the unit back as the package wrote it. `lab.py up` starts a failed unit."""
        # /run inside is the machine's own tmpfs: reached through its PID 1's root, not the root's copy.
        dropin_dir = "/proc/%d/root/run/systemd/system/%s.d" % (self.leader(), self.dist.unit)
        dropin = os.path.join(dropin_dir, self.NO_RESTART_DROPIN)
        if on:
            os.makedirs(dropin_dir, exist_ok=True)
            with open(dropin, "w", encoding="utf-8") as handle:
                handle.write("# lab.py: a killed server stays down (a fault test)\n[Service]\nRestart=no\n")
        elif os.path.exists(dropin):
            os.remove(dropin)
        self.inside(["systemctl", "daemon-reload"])

    def host_path(self, path):
        """A path inside the machine as the host reaches it (its root's copy)."""
        return os.path.join(self.root, path.lstrip("/"))

    # ------------------------------------------------------------ lifecycle
    def create(self, base, _template=None):
        """The host's own copy of the distribution's root, named and keyed for this host."""
        if not os.path.isdir(os.path.join(self.root, "etc")):     # no copy yet (or a stray directory of that name)
            if os.path.isdir(self.root):
                shutil.rmtree(self.root)
            os.makedirs(self.dir, exist_ok=True)
            tmp = self.root + ".tmp"
            if os.path.exists(tmp):
                shutil.rmtree(tmp)
            run(["cp", "-a", "--reflink=auto", base, tmp])
            # A MySQL datadir initialized in the cached root carries its server_uuid: each copy makes its own at
            # its first start (replicas refuse a source with their own uuid).
            auto_cnf = os.path.join(tmp, "var", "lib", "mysql", "auto.cnf")
            if os.path.exists(auto_cnf):
                os.remove(auto_cnf)
            os.rename(tmp, self.root)
        etc = os.path.join(self.root, "etc")
        if not any(f.startswith("ssh_host_") for f in os.listdir(os.path.join(etc, "ssh"))):
            run(["chroot", self.root, "ssh-keygen", "-A"])
        with open(os.path.join(etc, "hostname"), "w", encoding="utf-8") as handle:
            handle.write(self.name + "\n")
        with open(os.path.join(etc, "hosts"), "w", encoding="utf-8") as handle:
            handle.write("127.0.0.1 localhost\n%s %s\n" % (self.address, self.name))
        # Each copy its own machine id (systemd makes one at first boot when the file is empty).
        with open(os.path.join(etc, "machine-id"), "w", encoding="utf-8") as handle:
            handle.write("")
        with open(os.path.join(self.root, self.dist.server_dir.lstrip("/"), self.dist.lab_option_file), "w",
                  encoding="utf-8") as handle:
            handle.write("# Written by lab/lab.py: what the dbfleet lab's fleet needs of %s (replication).\n"
                         "[mysqld]\nbind-address = 0.0.0.0\nskip-name-resolve\nserver-id = %d\nlog-bin = binlog\n%s\n"
                         % (self.name, self.server_id, "\n".join(self.extra_options)))
        self.authorize(self.public_key)

    def authorize(self, public_key):
        home = os.path.join(self.root, "home", DEPLOY_USER)
        ssh_dir = os.path.join(home, ".ssh")
        os.makedirs(ssh_dir, mode=0o700, exist_ok=True)
        with open(public_key, encoding="utf-8") as handle:
            key = handle.read()
        with open(os.path.join(ssh_dir, "authorized_keys"), "w", encoding="utf-8") as handle:
            handle.write(key)
        ids = run(["chroot", self.root, "id", "-u", DEPLOY_USER]).strip(), run(["chroot", self.root, "id", "-g", DEPLOY_USER]).strip()
        for path in (ssh_dir, os.path.join(ssh_dir, "authorized_keys")):
            os.chown(path, int(ids[0]), int(ids[1]))
        os.chmod(os.path.join(ssh_dir, "authorized_keys"), 0o600)

    def launch(self, _basedir=None, _extra_args=()):
        """Boot the machine detached; wait_ready() follows. A booted machine whose server's unit is down (killed,
        failed) gets the unit started again, as an operator would with systemctl."""
        if self.nspawn_pid():
            state, main_pid = self.unit_state() if self.leader() else (None, 0)
            if state == "deactivating" and not main_pid:
                # A stop that outlived the server, waiting for processes of the unit that ignore SIGTERM (under
                # Debian's mysql.service for ever): what is left is killed, as dbfleet.innodb.service_restart does.
                say("  %s: %s deactivating without its server: killing what is left of it" % (self.name, self.dist.unit))
                self.inside(["systemctl", "kill", "--signal=SIGKILL", self.dist.unit], check=False)
            if state is not None and state not in ("active", "activating", "reloading"):
                self.inside(["systemctl", "reset-failed", self.dist.unit], check=False)
                self.inside(["systemctl", "start", "--no-block", self.dist.unit])
            return None
        argv = ["systemd-nspawn", "--boot", "--directory=" + self.root, "--machine=" + self.name,
                "--hostname=" + self.name, "--register=no", "--keep-unit", "--console=passive",
                "--network-namespace-path=" + self.netns.path, "--quiet"]
        cgroup = self.own_cgroup()
        env = dict(os.environ)
        if self.dist.unified_cgroup:
            # systemd >= 258 (sid) refuses the cgroup v1 hierarchy of this machine (hybrid): the container
            # gets the unified (v2) one.
            env["SYSTEMD_NSPAWN_UNIFIED_HIERARCHY"] = "1"
        with open(self.console_log, "ab") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=self.dir, env=env,
                                    preexec_fn=lambda: _join_cgroup(cgroup))
        with open(self.pidfile, "w", encoding="utf-8") as handle:
            handle.write("%d\n" % proc.pid)
        return proc

    def own_cgroup(self):
        """This machine's own group in the cgroup v2 hierarchy (made when missing), under the lab's own group:
        systemd-nspawn started in it makes the container's "payload" there, apart from every other machine's."""
        path = os.path.join(cgroup2_mount(), own_cgroup_path().lstrip("/"), machine_cgroup_name(self.name, self.root))
        os.makedirs(path, exist_ok=True)
        return path

    def remove_own_cgroup(self):
        """The machine's group and the empty groups systemd-nspawn left in it, once it is powered off."""
        path = os.path.join(cgroup2_mount(), own_cgroup_path().lstrip("/"), machine_cgroup_name(self.name, self.root))
        for directory, _dirs, _files in sorted(os.walk(path), key=lambda entry: -len(entry[0])):
            try:
                os.rmdir(directory)
            except OSError:
                pass

    def wait_ready(self, proc, timeout=BOOT_TIMEOUT):
        """Until systemd inside has started the server's unit and sshd, and the server answers."""
        deadline = time.monotonic() + timeout
        state = None
        while True:
            if proc is not None and proc.poll() is not None:
                raise LabError("%s: systemd-nspawn exited (code %s) while booting.\n--- %s\n%s"
                               % (self.name, proc.returncode, self.console_log, tail(self.console_log)))
            if self.leader():
                try:
                    state, _main = self.unit_state()
                    if state == "active" and self._answers():
                        return
                    if state == "failed":
                        raise LabError("%s: %s failed to start:\n%s" % (self.name, self.dist.unit, self.journal()))
                except subprocess.TimeoutExpired:
                    pass
            if time.monotonic() > deadline:
                raise LabError("%s: %s not ready within %d s (state %s)\n%s"
                               % (self.name, self.dist.unit, timeout, state, self.journal()))
            time.sleep(0.5)

    def _answers(self):
        return self.client("SELECT 1", check=False).returncode == 0

    def journal(self, lines=30):
        proc = self.inside(["journalctl", "--no-pager", "-n", str(lines), "-u", self.dist.unit], check=False)
        return (proc.stdout + proc.stderr).strip()

    def client(self, sql, check=True):
        """One statement through the package's client, as root over the socket (root's unix_socket login)."""
        return self.inside([self.dist.client, "--batch", "--skip-column-names", "-e", sql], check=check)

    def restart_server(self):
        self.inside(["systemctl", "restart", self.dist.unit], timeout=180)

    def provision(self, accounts):
        """Accounts [(user, host, password, privileges, grant_option)] once, off the binlog, as root."""
        if os.path.exists(self.marker):
            return
        statements = ["SET SESSION sql_log_bin = 0"]
        if self.dist.flavor == "mysql":
            # A MySQL replica runs with super_read_only, which refuses even root's CREATE USER: lifted for these
            # statements and put back as it was (MariaDB's read_only lets root write).
            statements += ["SET @dbfleet_super_read_only = @@GLOBAL.super_read_only", "SET GLOBAL super_read_only = OFF"]
        for user, host, password, privileges, grant_option in accounts:
            quoted = "'%s'@'%s'" % (user, host)
            statements.append("CREATE USER IF NOT EXISTS %s IDENTIFIED BY '%s'" % (quoted, password.replace("'", "''")))
            statements.append("GRANT %s ON *.* TO %s%s" % (privileges, quoted, " WITH GRANT OPTION" if grant_option else ""))
        if self.dist.flavor == "mysql":
            statements.append("SET GLOBAL super_read_only = @dbfleet_super_read_only")
        leader = self.leader()
        done = subprocess.run(["nsenter", "-t", str(leader), "-a", self.dist.client, "--batch"],
                              input=";\n".join(statements) + ";\n", capture_output=True, text=True, check=False,
                              timeout=60)
        if done.returncode != 0:
            raise LabError("%s: creating the lab's accounts failed: %s" % (self.name, done.stderr.strip()))
        with open(self.marker, "w", encoding="utf-8") as handle:
            handle.write("accounts created\n")

    def stop(self):
        """Power the machine off (SIGTERM to systemd-nspawn: an orderly shutdown); False when not booted."""
        pid = self.nspawn_pid()
        if pid is None:
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while os.path.exists("/proc/%d" % pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if os.path.exists("/proc/%d" % pid):
            say("  %s: not powered off after %d s, killing it" % (self.name, STOP_TIMEOUT))
            os.kill(pid, signal.SIGKILL)
            time.sleep(1)
        try:
            os.remove(self.pidfile)
        except OSError:
            pass
        self.remove_own_cgroup()
        return True

    # ------------------------------------------------------------ SQL from the lab
    def set_admin(self, user, password):
        self._admin = (user, password)

    def connect_root(self, timeout=5):
        """The lab's admin account over TCP (the machine's socket is inside it)."""
        user, password = self._admin
        return Connection(host=self.address, port=self.port, user=user, password=password,
                          connect_timeout=timeout, autocommit=True)

    def query(self, sql, user=None, password=None):
        conn = self.connect_root() if user is None else Connection(
            host=self.address, port=self.port, user=user, password=password, connect_timeout=5, autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                names = [d[0] for d in cur.description] if cur.description else []
                return names, cur.fetchall()
        finally:
            conn.close()


class MachineKind:
    """The server kind of a booted host, as labs.Lab reads host.kind."""

    def __init__(self, dist, sql_kind, flavor, group):
        self.dist = dist
        self.sql_kind = sql_kind    # servers.MariaDB / MySQL80: replication and account SQL
        self.flavor = flavor
        self.group = group
        self._version = None
        self.start_replica = sql_kind.start_replica
        self.stop_replica = sql_kind.stop_replica

    @property
    def name(self):
        return "machine-" + self.dist.key

    @property
    def version(self):
        return self._version or "?"

    def locate(self, cache):
        root = os.path.join(cache, "machines", self.dist.key)
        if self._version is None and os.path.isdir(root):
            self.basedir(cache)

    def basedir(self, cache):
        root = ensure_root(self.dist, cache)
        if self._version is None and self.dist.tarball is not None:
            self._version = self.dist.tarball.version
        if self._version is None:
            out = run(["chroot", root, self.dist.binary, "--version"])
            match = re.search(r"Ver (\d+\.\d+\.\d+)", out)
            if not match:
                raise LabError("cannot read the server version from: %s" % out.strip())
            self._version = match.group(1)
        return root

    def command(self, basedir, args, binds=()):
        return ["chroot", basedir, self.dist.binary] + list(args)

    def replica_sql(self, source_host, source_port, user, password):
        statements = self.sql_kind.replica_sql(source_host, source_port, user, password)
        if self.flavor == "mysql":
            # The accounts of a booted MySQL host authenticate with caching_sha2_password, whose first login needs
            # TLS (or the source's RSA key): a replica connects with TLS, the server having made its certificates.
            first, args = statements[0]
            statements = [(first.replace("SOURCE_AUTO_POSITION = 1", "SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1"), args)] + statements[1:]
        return statements

    def replica_state(self, conn):
        return self.sql_kind.replica_state(conn)


MACHINE_MARIADB1011 = MachineKind(BOOKWORM_MARIADB, MariaDB(), "mariadb", "mariadb")
MACHINE_MARIADB118 = MachineKind(TRIXIE_MARIADB, MariaDB(), "mariadb", "mariadb")
MACHINE_MYSQL97 = MachineKind(SID_MYSQL, MySQL80.__new__(MySQL80), "mysql", "mysql")
MACHINE_MYSQL80 = MachineKind(BOOKWORM_MYSQL80, MYSQL80, "mysql", "mysql")


def _join_cgroup(path):
    """In the child, before systemd-nspawn runs: move this process into the cgroup at path."""
    with open(os.path.join(path, "cgroup.procs"), "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
