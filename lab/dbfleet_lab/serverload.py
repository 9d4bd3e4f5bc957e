"""What the benchmarks share: a connection to a lab server and the server's own CPU time.

A benchmark compares two ways of doing one thing by the CPU seconds the database server spends
(utime + stime of the server process, from /proc/PID/stat), read around each arm; the server is
asked for its pid file, so the figure is the server's whatever runs the load.

Logins come from inventory host variables (``dbfleet_login_user``, ...) or from module
parameters (``login_user``, ...); both spellings are accepted. PyMySQL is imported only when a
connection is made, so the pure parts can be used (and tested) without it.
"""

import os
import time

from .inventory import read_hosts

LOGIN_KEYS = ("user", "password", "unix_socket", "host", "port")


def login_kwargs(login):
    """PyMySQL connect() keyword arguments from a login in host-variable or module-parameter spelling.

    The unix socket wins over host/port when both are given (the lab writes both).
    Raises ValueError naming the missing key when there is neither a socket nor a host.
    """
    found = {}
    for key in LOGIN_KEYS:
        for name in ("dbfleet_login_" + key, "login_" + key, key):
            if login.get(name) not in (None, ""):
                found[key] = login[name]
                break
    if "user" not in found:
        raise ValueError("login: no user (dbfleet_login_user / login_user)")
    kwargs = {"user": found["user"], "password": found.get("password") or ""}
    if found.get("unix_socket"):
        kwargs["unix_socket"] = found["unix_socket"]
    elif found.get("host"):
        kwargs["host"] = found["host"]
        kwargs["port"] = int(found.get("port") or 3306)
    else:
        raise ValueError("login: neither a unix socket nor a host (dbfleet_login_unix_socket / dbfleet_login_host)")
    return kwargs


def host_vars(inventory, host):
    """The variables of HOST in a lab inventory; exits with how to start the lab when it is not there."""
    try:
        hosts = read_hosts(inventory)
    except OSError as exc:
        raise SystemExit("cannot read %s (%s): start the lab with `make lab-up`" % (inventory, exc)) from exc
    if host not in hosts:
        raise SystemExit("host %s is not in %s (hosts: %s): start it with `make lab-up`"
                         % (host, inventory, ", ".join(sorted(hosts)) or "none"))
    return hosts[host]


def tcp_logins(inventory, names=None):
    """{host: the collection's login parameters over 127.0.0.1} of the lab's servers that are up (the lab's admin
    login, TCP to the host's port: login_ssl_mode preferred), for a benchmark that calls the collection's own code;
    names: only those hosts. Exits with how to start the lab when there is none."""
    try:
        hosts = read_hosts(inventory)
    except OSError:
        hosts = {}
    logins = dict((name, dict(login_user=hv["dbfleet_login_user"], login_password=hv["dbfleet_login_password"],
                              login_host="127.0.0.1", login_port=hv["dbfleet_login_port"], config_file=None))
                  for name, hv in sorted(hosts.items())
                  if "dbfleet_login_port" in hv and (names is None or name in names))
    if not logins:
        raise SystemExit("no lab server is up in %s: start the lab with `make lab-up`" % inventory)
    return logins


def alternating_cpu(rounds, arms):
    """This process's CPU seconds per arm of a comparison run in one process: arms is {label: a callable that runs one
    round of that arm}; every round runs each arm once, in the given order in even rounds and the reverse in odd ones,
    so neither arm always runs first (or right after the other warmed a cache)."""
    labels = list(arms)
    cpu = dict.fromkeys(labels, 0.0)
    for number in range(rounds):
        for label in labels if number % 2 == 0 else labels[::-1]:
            start = time.process_time()
            arms[label]()
            cpu[label] += time.process_time() - start
    return cpu


def connect(login, autocommit=True, **extra):
    """A PyMySQL connection for a login (see login_kwargs); extra keywords go to pymysql.connect()."""
    import pymysql  # pylint: disable=import-outside-toplevel

    kwargs = login_kwargs(login)
    kwargs.update(extra)
    return pymysql.connect(autocommit=autocommit, **kwargs)


def connect_retry(login, seconds=60, **extra):
    """connect(), retried while the server is briefly restarted by someone else."""
    import pymysql  # pylint: disable=import-outside-toplevel

    deadline = time.monotonic() + seconds
    while True:
        try:
            return connect(login, **extra)
        except pymysql.err.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def query(conn, sql, args=None):
    """All rows of one statement."""
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return cur.fetchall()


def query_value(conn, sql, args=None):
    """The first column of the first row, or None."""
    rows = query(conn, sql, args)
    return rows[0][0] if rows else None


def pid_file_path(pid_file, datadir):
    """The pid file as the server names it, made absolute against its datadir when relative."""
    if os.path.isabs(pid_file):
        return pid_file
    return os.path.join(datadir, pid_file)


def server_pid(conn):
    """The pid of the server behind conn, from the pid file it reports."""
    path = pid_file_path(query_value(conn, "SELECT @@GLOBAL.pid_file"), query_value(conn, "SELECT @@GLOBAL.datadir"))
    with open(path, encoding="ascii") as handle:
        return int(handle.read().split()[0])


def stat_cpu_split(stat_line):
    """(utime, stime) in clock ticks from the text of /proc/PID/stat.

    The command name (field 2) is in parentheses and may hold spaces or ')': fields are counted
    after the last ')'.
    """
    fields = stat_line.rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def stat_cpu_ticks(stat_line):
    """utime + stime (clock ticks) from the text of /proc/PID/stat."""
    return sum(stat_cpu_split(stat_line))


def cpu_times(pid):
    """(user, system) CPU seconds the process PID has used so far."""
    with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as handle:
        user, system = stat_cpu_split(handle.read())
    tick = float(os.sysconf("SC_CLK_TCK"))
    return user / tick, system / tick


def cpu_seconds(pid):
    """CPU seconds (user + system) the process PID has used so far."""
    return sum(cpu_times(pid))


class CpuMeter:
    """CPU seconds of a process between start() and stop() (or as a context manager)."""

    def __init__(self, pid):
        self.pid = pid
        self.seconds = None
        self._start = None

    def start(self):
        self._start = cpu_seconds(self.pid)
        return self

    def stop(self):
        self.seconds = cpu_seconds(self.pid) - self._start
        return self.seconds

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False


def sysbench_login_options(login, database):
    """sysbench's MySQL options for a login, one `name=value` a line, for its --config-file.

    A file (mode 0600, see write_sysbench_config) keeps the password off the command line that
    other users of the machine can read in the process list. sysbench cannot use a unix socket
    and a host at once: the socket wins, as in login_kwargs.
    """
    kwargs = login_kwargs(login)
    lines = ["db-driver=mysql", "mysql-user=%s" % kwargs["user"], "mysql-password=%s" % kwargs["password"],
             "mysql-db=%s" % database]
    if "unix_socket" in kwargs:
        lines.append("mysql-socket=%s" % kwargs["unix_socket"])
    else:
        lines += ["mysql-host=%s" % kwargs["host"], "mysql-port=%d" % kwargs["port"]]
    return lines


def write_sysbench_config(path, login, database, tcp=False):
    """Write sysbench_login_options() to PATH (mode 0600); tcp=True drops the socket for host/port."""
    if tcp:
        login = dict((k, v) for k, v in login.items() if not k.endswith("unix_socket"))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(sysbench_login_options(login, database)) + "\n")
    return path
