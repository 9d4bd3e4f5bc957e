"""The lab as the integration tests see it: lab.py run for a lab, its hosts, a connection to its servers, and what
makes the local lab a used one (tests/integration/playbooks/used_lab.yml).

DBFLEET_LAB_DIR chooses the lab directory, as for lab.py.
"""
import contextlib
import json
import os
import subprocess
import sys
import time

import pymysql
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LAB_PY = os.path.join(REPO, "lab", "lab.py")
sys.path.insert(0, os.path.join(REPO, "lab"))

from dbfleet_lab.connection import Connection  # noqa: E402  pylint: disable=wrong-import-position


def lab_py(*args, check=True):
    """Run lab.py with the running interpreter; returns the CompletedProcess (text output)."""
    proc = subprocess.run([sys.executable, LAB_PY] + [str(a) for a in args], capture_output=True, text=True,
                          check=False, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError("lab.py %s failed (exit %d)\n%s\n%s"
                             % (" ".join(map(str, args)), proc.returncode, proc.stdout, proc.stderr))
    return proc


class LabHandle:
    """One lab (local or SSH fleet) as the tests see it."""

    def __init__(self, mode, lab_dir):
        self.mode = mode
        self.lab_dir = lab_dir
        self.args = ["--mode", mode, "--lab-dir", lab_dir]
        self.refresh()
        secrets_dir = lab_dir if mode == "local" else os.path.join(lab_dir, "fleet")
        with open(os.path.join(secrets_dir, "secrets.json"), encoding="utf-8") as handle:
            secrets = json.load(handle)
        self.admin_user = secrets["admin_user"]
        self.admin_password = secrets["admin_password"]

    def run(self, *args, check=True):
        return lab_py(*(self.args + list(args)), check=check)

    def refresh(self):
        status = json.loads(self.run("status", "--json").stdout)
        self.inventory = status["inventory"]
        self.hosts = {row["host"]: row for row in status["hosts"]}
        return self.hosts

    def up_hosts(self):
        return [name for name, row in self.hosts.items() if row["state"] == "up"]

    def require_up(self, host):
        """Fails the test, saying how to start the lab, when host is not up in it (a test never skips for that)."""
        assert self.hosts.get(host, {}).get("state") == "up", (
            "%s is not up in the lab: start it with `make lab-up` (export DBFLEET_LAB_PORT_BASE first when several "
            "labs share the machine)" % host)

    # The fleet's hosts as the machine running the lab sees them: a tarball server in a namespace
    # (<lab>/fleet/<host>/), or a booted machine (DBFLEET_FLEET_BOOTED=1; its root under <lab>/fleet/<host>/root).
    def _fleet_instance(self, host):
        from dbfleet_lab.labs import Fleet  # pylint: disable=import-outside-toplevel
        fleet = Fleet(os.path.join(self.lab_dir, "fleet"), None, self.inventory)
        return fleet.instance(host), fleet.hosts[host]

    def machine(self, host):
        """The booted machine of host (lab/dbfleet_lab/machines.py Machine), or None for a tarball server in a namespace,
        whose files and processes are this machine's own."""
        instance = self._fleet_instance(host)[0]
        return instance if hasattr(instance, "inside") else None

    def booted(self, host):
        from dbfleet_lab.labs import booted  # pylint: disable=import-outside-toplevel
        return booted(self._fleet_instance(host)[1])

    def server_pid(self, host):
        """The server's PID as this machine sees it (what a test kills or compares across a restart), or None."""
        machine = self.machine(host)
        if machine is not None:
            return machine.server_pid()
        try:
            with open(os.path.join(self.lab_dir, "fleet", host, "mysqld.pid"), encoding="utf-8") as handle:
                return int(handle.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    @contextlib.contextmanager
    def killed_stays_down(self, host):
        """While inside: host's server, once killed, stays down also on a booted host, whose systemd would start it
        again (Machine.keep_down_when_killed); `run("up", host)` brings it back."""
        machine = self.machine(host)
        if machine is None:
            yield
            return
        machine.keep_down_when_killed(True)
        try:
            yield
        finally:
            machine.keep_down_when_killed(False)

    def dropin_path(self, host, name):
        """Where a drop-in file the collection writes on host is, read from this machine."""
        machine = self.machine(host)
        if machine is not None:
            return machine.host_path(os.path.join(machine.dropin_dir, name))
        return os.path.join(self.lab_dir, "fleet", host, "conf.d", name)

    def error_log_lines(self, host):
        """The server's error log lines: its file, or on a booted host whose server logs to the journal
        (Debian's MariaDB), the unit's journal lines."""
        machine = self.machine(host)
        if machine is not None:
            if os.path.exists(machine.error_log):
                with open(machine.error_log, encoding="utf-8", errors="replace") as handle:
                    return handle.read().splitlines()
            return machine.inside(["journalctl", "--no-pager", "-o", "cat", "-u", machine.dist.unit]).stdout.splitlines()
        with open(os.path.join(self.lab_dir, "fleet", host, "error.log"), encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()

    def connect(self, host, via="tcp", **kwargs):
        """A PyMySQL connection as the admin user, over TCP (default) or the unix socket."""
        row = self.hosts[host]
        socket = row.get("socket")
        if via == "socket" and row.get("booted_now"):
            socket = "/proc/%s/root%s" % (self.machine(host).leader(), socket)   # in its machine's root
        where = ({"unix_socket": socket} if via == "socket" else
                 {"host": row.get("address") or "127.0.0.1", "port": row["port"]})
        kwargs.setdefault("connect_timeout", 10)
        kwargs.setdefault("autocommit", True)
        return Connection(user=self.admin_user, password=self.admin_password, **where, **kwargs)

    def query(self, host, sql, args=None, tries=1):
        """One statement as the admin user, rows as dicts; with tries > 1, an OperationalError
        (the server is being restarted) is tried again once a second."""
        return statement_rows(lambda: self.connect(host), sql, args, tries, pymysql.cursors.DictCursor)


def statement_rows(connect, sql, args=None, tries=1, cursor=None):
    """The rows of one statement over a new connection of connect() (closed after it), as cursor (default tuples)
    gives them; with tries > 1, an OperationalError (the server is being restarted, a login refused while it
    starts) is tried again once a second."""
    for attempt in range(tries):
        try:
            conn = connect()
            try:
                with conn.cursor(cursor) as cur:
                    cur.execute(sql, args)
                    return cur.fetchall()
            finally:
                conn.close()
        except pymysql.err.OperationalError:
            if attempt >= tries - 1:
                raise
            time.sleep(1)
    return None


# The local lab's default hosts; MySQL 5.7 and 5.6 only when opted in (as lab.py does).
DEFAULT_HOSTS = (("mariadb1011", "mysql80", "mysql97", "mariadb118")
                 + (("mysql57",) if os.environ.get("DBFLEET_LAB_WITH_57") == "1" else ())
                 + (("mysql56",) if os.environ.get("DBFLEET_LAB_WITH_56") == "1" else ()))


def require_lab_hosts(inventory, wanted=()):
    """The hosts of a lab inventory (dbfleet_lab.inventory.read_hosts). A missing inventory, or one without a
    wanted host, fails the run and says how to start the lab: a test never skips because the lab is down."""
    from dbfleet_lab.inventory import read_hosts  # pylint: disable=import-outside-toplevel
    if not os.path.exists(inventory):
        pytest.fail("the lab is not up (no %s): start it with `make lab-up`" % inventory, pytrace=False)
    hosts = read_hosts(inventory)
    missing = [h for h in wanted if h not in hosts]
    if missing or not hosts:
        pytest.fail("lab host(s) %s not in %s: start them with `make lab-up`"
                    % (", ".join(missing) or "(none)", inventory), pytrace=False)
    return hosts


def default_lab_dir():
    """The lab directory of this run (DBFLEET_LAB_DIR, else .lab of the repository)."""
    return os.path.abspath(os.environ.get("DBFLEET_LAB_DIR") or os.path.join(REPO, ".lab"))


# What makes the local lab a used one (tests/integration/playbooks/used_lab.yml): every session's tests read the facts of
# servers as a user's are after `make demo` and some use, never of fresh ones only.
USED_LAB_PLAYBOOK = os.path.join(REPO, "tests", "integration", "playbooks", "used_lab.yml")


# What used_lab.yml persists on each MySQL 8.0+ server: one setting no role manages, one the flush_neighbors role does.
USED_LAB_PERSISTED = ("innodb_old_blocks_time", "innodb_flush_neighbors")


def lab_is_used(handle):
    """What used_lab.yml leaves, read from the servers: mysql80's memcached plugin installed at run time (mysql.plugin)
    and active, its role's drop-in, and the persisted settings on each MySQL 8.0+ server of the lab. Each read waits up to
    two minutes for a server that another stream's test is restarting (make test runs the fleet's tests beside the
    local lab's)."""
    missing = []
    if "mysql80" in handle.hosts:
        plugins = handle.query("mysql80", "SELECT p.name, i.PLUGIN_STATUS FROM mysql.plugin p LEFT JOIN "
                                          "information_schema.PLUGINS i ON i.PLUGIN_NAME = p.name "
                                          "WHERE p.name = 'daemon_memcached'", tries=120)
        if not plugins or plugins[0]["PLUGIN_STATUS"] != "ACTIVE":
            missing.append("mysql80: the memcached plugin installed at run time (mysql.plugin) and active")
        if not os.path.exists(os.path.join(handle.hosts["mysql80"]["dropin_dir"], "60-dbfleet-memcached.cnf")):
            missing.append("mysql80: the memcached role's drop-in")
    for host in ("mysql80", "mysql97"):
        if host not in handle.hosts:
            continue
        found = {row["VARIABLE_NAME"] for row in handle.query(
            host, "SELECT VARIABLE_NAME FROM performance_schema.persisted_variables", tries=120)}
        for name in USED_LAB_PERSISTED:
            if name not in found:
                missing.append("%s: %s persisted (mysqld-auto.cnf)" % (host, name))
    return missing


def used_lab(handle):
    """Make the lab a used one (once: a lab that is already used is left as it is, as a second `make test` finds the
    first one's); fails naming what is still missing afterwards."""
    if not lab_is_used(handle):
        return
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"), ANSIBLE_NOCOLOR="1",
               PATH=os.path.join(REPO, ".venv", "bin") + ":" + os.environ["PATH"])
    proc = subprocess.run([os.path.join(REPO, ".venv", "bin", "ansible-playbook"), "-i", handle.inventory,
                           USED_LAB_PLAYBOOK], env=env, capture_output=True, text=True, timeout=600, cwd=REPO,
                          check=False)
    missing = lab_is_used(handle)
    assert proc.returncode == 0 and not missing, "the lab could not be made a used one (%s): %s\n%s" % (
        USED_LAB_PLAYBOOK, "; ".join(missing), (proc.stdout + proc.stderr)[-4000:])


# The SSH fleet's booted hosts (lab/dbfleet_lab/machines.py, docs/hosts.md).
BOOTED_HOSTS = ("pkg1", "pkg2", "pkg3", "pkg4", "pkg5")


def inside(lab, host, *argv):
    """A command inside the booted machine (nsenter at its PID 1), as the package's files really are."""
    with open(os.path.join(lab.lab_dir, "fleet", host, "nspawn.pid"), encoding="utf-8") as handle:
        nspawn = handle.read().strip()
    with open("/proc/%s/task/%s/children" % (nspawn, nspawn), encoding="utf-8") as handle:
        leader = handle.read().split()[0]
    return subprocess.run(["nsenter", "-t", leader, "-a"] + list(argv), capture_output=True, text=True,
                          check=True, timeout=60).stdout
