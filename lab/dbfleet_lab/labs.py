"""The two labs: local (one process per server on 127.0.0.1) and the SSH fleet (a namespace per host)."""
import fcntl
import json
import os
import secrets as random_secrets
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace

import pymysql

from . import LabError, clusters, galera, haproxy, machines, reserve_ports, run, say, tls, yamlout
from .netns import GATEWAY, NET, NETMASK, PREFIX, Namespace, Sshd, close_control_masters, ensure_bridge, remove_bridge
from .servers import MARIADB118, MYSQL56, MYSQL57, MYSQL80, MYSQL97, ChrootServer, Instance, MariaDB, ensure_template

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB_SCRIPT = os.path.join(REPO, "lab", "lab.py")
MARIADB = MariaDB()
ADMIN_USER = "dbfleet"
REPL_USER = "repl"
MEMCACHED_OFFSET = 211
REPLICATION_TIMEOUT = 30
FLEET_GALERA_OPT_IN = "DBFLEET_FLEET_WITH_GALERA"
FLEET_GR_OPT_IN = "DBFLEET_FLEET_WITH_GR"
FLEET_GALERA118_OPT_IN = "DBFLEET_FLEET_WITH_GALERA118"
# db1-db4 are booted machines (machines.py) by default; DBFLEET_FLEET_BOOTED=0 at `up` makes them tarball servers
# in namespaces as before; later commands follow what the fleet's directory holds (Fleet.booted_db_wanted).
FLEET_BOOTED_OPT_IN = "DBFLEET_FLEET_BOOTED"
FLEET_BOOTED_DEFAULT = True


@dataclass(frozen=True)
class Host:
    name: str
    kind: object            # a servers.ServerKind
    server_id: int
    port_offset: int = 0    # local mode: port = port base + offset
    address: str = ""       # SSH mode: the namespace's address
    source: str = ""        # SSH mode: the primary a replica follows
    optional: bool = False  # only when asked for: by name, or with opt_in=1 in the environment
    opt_in: str = ""        # local mode: environment variable that adds an optional host to the default
    cluster: str = ""       # the cluster the host is a member of: its inventory group (galera.GROUPS, GR)


class Lab:
    """The local lab: servers on 127.0.0.1, ports = port base + suffix, inventories/lab/hosts.yml."""

    mode = "local"
    inventory_group = "lab"
    HOSTS = (Host("mariadb1011", MARIADB, 11, port_offset=11),
             Host("mysql80", MYSQL80, 80, port_offset=80),
             Host("mysql57", MYSQL57, 57, port_offset=57, optional=True, opt_in="DBFLEET_LAB_WITH_57"),
             Host("mysql97", MYSQL97, 97, port_offset=97),
             Host("mariadb118", MARIADB118, 118, port_offset=118),
             Host("mysql56", MYSQL56, 56, port_offset=56, optional=True, opt_in="DBFLEET_LAB_WITH_56"),
             # A 3-node Galera cluster (lab/dbfleet_lab/galera.py), only when named or opted in.
             Host("galera1", MARIADB, 301, port_offset=301, optional=True, opt_in=galera.OPT_IN, cluster="galera"),
             Host("galera2", MARIADB, 302, port_offset=302, optional=True, opt_in=galera.OPT_IN, cluster="galera"),
             Host("galera3", MARIADB, 303, port_offset=303, optional=True, opt_in=galera.OPT_IN, cluster="galera"),
             # An asynchronous replica of galera1 (GTID, MASTER_USE_GTID=slave_pos), in the cluster's group.
             Host("galera_replica", MARIADB, 304, port_offset=304, optional=True, opt_in=galera.OPT_IN,
                  source="galera1"),
             # A Group Replication group (lab/dbfleet_lab/clusters.py): by name or with DBFLEET_LAB_WITH_GR=1.
             Host("gr1", MYSQL80, 351, port_offset=351, optional=True, opt_in=clusters.GR_OPT_IN, cluster="group_replication"),
             Host("gr2", MYSQL80, 352, port_offset=352, optional=True, opt_in=clusters.GR_OPT_IN, cluster="group_replication"),
             Host("gr3", MYSQL80, 353, port_offset=353, optional=True, opt_in=clusters.GR_OPT_IN, cluster="group_replication"))

    def __init__(self, root, cache, port_base, inventory):
        self.root = root
        self.cache = cache
        self.inventory = inventory
        self.hosts = {host.name: host for host in self.HOSTS}
        self.port_base = self._port_base(port_base)
        self.python = sys.executable

    # ---------------------------------------------------------------- configuration
    def _port_base(self, requested):
        """The port base recorded in <lab>/lab.json, unless another is requested while nothing runs."""
        state_file = os.path.join(self.root, "lab.json")
        try:
            with open(state_file, encoding="utf-8") as handle:
                recorded = json.load(handle)["port_base"]
        except (OSError, ValueError, KeyError):
            recorded = None
        if requested is None:
            return recorded or 33000
        if recorded not in (None, requested):
            self.port_base = recorded
            running = [name for name in self.hosts if self.instance(name).pid()]
            if running:
                raise LabError("the lab in %s runs with port base %d (%s); stop it before using port base %d"
                               % (self.root, recorded, ", ".join(running), requested))
        return requested

    def _record_port_base(self):
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, "lab.json"), "w", encoding="utf-8") as handle:
            json.dump({"port_base": self.port_base}, handle)
            handle.write("\n")

    def select(self, names):
        """Hosts by name; default: DBFLEET_LAB_HOSTS, else every host that is not optional (or opted in)."""
        if not names:
            names = [n for n in os.environ.get("DBFLEET_LAB_HOSTS", "").replace(" ", "").split(",") if n]
        if not names:
            return [h for h in self.HOSTS if not h.optional or (h.opt_in and os.environ.get(h.opt_in) == "1")]
        unknown = [n for n in names if n not in self.hosts]
        if unknown:
            raise LabError("unknown host(s) %s; %s mode has: %s"
                           % (", ".join(unknown), self.mode, ", ".join(self.hosts)))
        return [self.hosts[n] for n in dict.fromkeys(names)]

    def port(self, host):
        return self.port_base + host.port_offset

    def instance(self, name):
        host = self.hosts[name]
        extra = []
        if host.cluster == clusters.GR_INVENTORY_GROUP:
            extra = clusters.local_option_lines(self, name, self.port(host))
        if host.cluster == galera.GROUP:
            peers = galera.peers(("127.0.0.1", self.port_base + o + galera.GMCAST_OFFSET) for o in self.galera_offsets())
            extra = galera.option_lines(name, "127.0.0.1", galera.ports(self.port_base, host.port_offset), peers,
                                        host.server_id)
        if host.source:
            extra = ["read_only = ON", "relay-log = relay-bin"]
        extra = extra + tls.server_options(name, os.path.join(self.root, name))
        return Instance(name, host.kind, self.root, self.port(host), host.server_id, "127.0.0.1", extra)

    def galera_offsets(self):
        return [h.port_offset for h in self.HOSTS if h.cluster == galera.GROUP]

    def galera_running(self, cluster, but=None):
        """Names of the nodes of the Galera cluster (its inventory group) that run (but: leave this one out)."""
        return [h.name for h in self.HOSTS if h.cluster == cluster and h.name != but and self.instance(h.name).pid()]

    def secrets(self):
        """Passwords generated once per lab directory, kept in <lab>/secrets.json (mode 0600)."""
        path = os.path.join(self.root, "secrets.json")
        if not os.path.exists(path):
            os.makedirs(self.root, exist_ok=True)
            data = {"admin_user": ADMIN_USER, "admin_password": random_secrets.token_urlsafe(18),
                    "replication_user": REPL_USER, "replication_password": random_secrets.token_urlsafe(18)}
            fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2)
                handle.write("\n")
            os.replace(path + ".tmp", path)
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)

    def accounts(self):
        password = self.secrets()["admin_password"]
        return [(ADMIN_USER, where, password, "ALL PRIVILEGES", True) for where in ("localhost", "127.0.0.1", "%")]

    @contextmanager
    def locked(self, name=".lock"):
        """Serialize changes to this lab (and, with name, to one host) across processes."""
        os.makedirs(self.root, exist_ok=True)
        with open(os.path.join(self.root, name), "w", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                say("  waiting for another lab.py working on %s" % self.root)
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    # ---------------------------------------------------------------- preparing
    def prepare(self, hosts):
        """Dists and templates of the hosts' server kinds: {kind name: (basedir, template)}.

        Everything is downloaded, verified and initialized before any server starts.
        """
        os.makedirs(self.cache, exist_ok=True)
        kinds = {id(host.kind): host.kind for host in hosts}
        with open(os.path.join(self.cache, ".lock"), "w", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)

            def one(kind):
                basedir = kind.basedir(self.cache)     # a chroot kind knows its version (and name) after this
                return kind.name, (basedir, ensure_template(kind, basedir, self.cache))

            with ThreadPoolExecutor(max_workers=len(kinds) or 1) as pool:
                return dict(pool.map(one, kinds.values()))

    def preflight(self, hosts):
        """Refuse to start when a port the hosts need is taken."""
        for host in hosts:
            for port, what in self.ports(host):
                probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError as exc:
                    raise LabError("port %d (%s of host %s) is already in use on 127.0.0.1 (%s); stop what uses "
                                   "it or choose another --port-base" % (port, what, host.name, exc.strerror)) from None
                finally:
                    probe.close()

    def ports(self, host):
        ports = [(self.port(host), "server port")]
        if host.cluster == galera.GROUP:
            ports = [(port, what) for what, port in galera.ports(self.port_base, host.port_offset).items()]
        if host.name == "mysql80":
            ports.append((self.memcached_port(), "memcached port"))
        if host.cluster == clusters.GR_INVENTORY_GROUP:
            ports.append((clusters.xcom_port(self.port_base, host.name), "group communication port"))
        return ports

    def memcached_port(self):
        return self.port_base + MEMCACHED_OFFSET

    # ---------------------------------------------------------------- commands
    def up(self, names=()):
        hosts = self.select(names)
        hosts = [self.hosts[h.source] for h in hosts if h.source and self.hosts[h.source] not in hosts] + hosts
        self._up(hosts, time.monotonic())

    def _up(self, hosts, started_at):
        with self.locked():
            self._record_port_base()
            to_start = []
            for host in hosts:
                pid = self.instance(host.name).pid()
                if pid:
                    say("%-12s already running (pid %d)" % (host.name, pid))
                else:
                    to_start.append(host)
            errors = []
            if to_start:
                self.preflight(to_start)
                if self.mode == "local":
                    reserve_ports(pair[0] for host in to_start for pair in self.ports(host))
                prepared = self.prepare(to_start)
                errors = self._start(to_start, prepared)
            for host in hosts:
                if self.instance(host.name).pid():
                    self.instance(host.name).provision(self.accounts())
            if not errors:
                self.after_up(hosts)
            self.write_inventory()
        say("%s up: %d host(s) in %.1f s (%d started, %d already running); inventory %s"
            % (self.mode, len(hosts), time.monotonic() - started_at, len(to_start) - len(errors),
               len(hosts) - len(to_start), self.inventory))
        if errors:
            raise LabError("\n\n".join(errors))

    def _start(self, hosts, prepared):
        """Launch every host, then wait for each; returns the error messages of those that failed."""
        nodes = [h for h in hosts if galera.is_node(h.cluster)]
        hosts = [h for h in hosts if not galera.is_node(h.cluster)]
        launched = []
        for host in hosts:
            instance = self.instance(host.name)
            basedir, template = prepared[host.kind.name]
            if self.mode == "local":
                tls.prepare(self.root, host.name, instance.dir)
            instance.create(basedir, template)
            launched.append((host, instance, instance.launch(basedir)))
        errors = []
        for host, instance, proc in launched:
            try:
                instance.wait_ready(proc)
                instance.provision(self.accounts())
                say("%-12s started (pid %s)" % (host.name, instance.pid()))
            except (LabError, pymysql.err.MySQLError) as exc:
                errors.append("%s: %s" % (host.name, exc))
        for cluster in dict.fromkeys(h.cluster for h in nodes):
            errors += self._start_galera([h for h in nodes if h.cluster == cluster], prepared)
        return errors

    @staticmethod
    def chroot(host, basedir):
        """The root the host's server runs in: its chroot, or "" for the machine's own."""
        return basedir if isinstance(host.kind, ChrootServer) else ""

    def _start_galera(self, nodes, prepared):
        """The nodes of one Galera cluster one at a time: the first bootstraps when no node runs, each
        waits until Synced."""
        cluster = nodes[0].cluster
        for root in dict.fromkeys(self.chroot(h, prepared[h.kind.name][0]) for h in nodes):
            galera.check_machine(root)
        pairs = [(host, self.instance(host.name)) for host in nodes]
        for host, instance in pairs:
            instance.create(*prepared[host.kind.name])
            galera.own(instance.dir, self.chroot(host, prepared[host.kind.name][0]))
        if not self.galera_running(cluster):
            pairs = galera.bootstrap_order(pairs)
        for host, instance in pairs:
            bootstrap = not self.galera_running(cluster, but=host.name)
            try:
                basedir = prepared[host.kind.name][0]
                args = galera.recovered_position_args(instance, lambda a, b=basedir, k=host.kind: k.command(b, a, [instance.dir]))
                proc = instance.launch(basedir, args + (["--wsrep-new-cluster"] if bootstrap else []))
                instance.wait_ready(proc, timeout=galera.SYNC_TIMEOUT)
                galera.wait_synced(instance)
                instance.provision(self.accounts())
            except (LabError, pymysql.err.MySQLError) as exc:
                return ["%s: %s" % (host.name, exc)]
            say("%-12s started (pid %s), %s" % (host.name, instance.pid(),
                                                "bootstrapped the cluster" if bootstrap else "joined the cluster"))
        return []

    def after_up(self, hosts):
        """Group Replication members join (or form) their group; a local replica (the Galera cluster's)
        replicates from its source, as admin, with GTIDs. The fleet overrides it (replication)."""
        self._form_group(hosts)
        creds = self.secrets()
        for host in hosts:
            if host.source:
                self._replicate(host, "127.0.0.1", self.port(self.hosts[host.source]), creds["admin_user"],
                                creds["admin_password"])

    def _form_group(self, hosts):
        members = [h.name for h in hosts if h.cluster == clusters.GR_INVENTORY_GROUP]
        if members:
            clusters.form_group(self, members)

    def _replicate(self, host, source_host, source_port, user, password):
        """Point a replica at its source (once; started again when stopped) and wait until both threads run."""
        conn = self.instance(host.name).connect_root()
        try:
            state = host.kind.replica_state(conn)
            with conn.cursor() as cur:
                if state is None:
                    for statement, args in host.kind.replica_sql(source_host, source_port, user, password):
                        cur.execute(statement, args)
                elif state[:2] != ("Yes", "Yes"):
                    # Started again, not only started: an IO thread still "Connecting" waits out its connect retry
                    # (the source was not up yet when this server started; a switchover's repoint leaves the
                    # server's default of 60 s, longer than the wait below), and STOP makes it try now.
                    cur.execute(host.kind.stop_replica)
                    cur.execute(host.kind.start_replica)
            self._wait_replicating(host, conn)
        finally:
            conn.close()

    def _wait_replicating(self, host, conn):
        deadline = time.monotonic() + REPLICATION_TIMEOUT
        while True:
            io_running, sql_running, error = host.kind.replica_state(conn)
            if io_running == "Yes" and sql_running == "Yes":
                say("%-12s replicates from %s" % (host.name, host.source))
                return
            if time.monotonic() > deadline:
                raise LabError("%s does not replicate from %s after %d s: IO %s, SQL %s, last error: %s"
                               % (host.name, host.source, REPLICATION_TIMEOUT, io_running, sql_running, error))
            time.sleep(0.5)

    def down(self, names=(), purge=False):
        hosts = self.select(names) if names else list(self.HOSTS)
        with self.locked():
            clusters.before_down(self, [h.name for h in hosts])
            nodes = [h for h in hosts if galera.is_node(h.cluster)]
            with ThreadPoolExecutor(max_workers=len(hosts)) as pool:     # shutdowns take seconds each
                list(pool.map(self._stop_host, [h for h in hosts if not galera.is_node(h.cluster)]))
            for host in reversed(nodes):        # one at a time: the last one stopped may bootstrap again
                self._stop_host(host)
            if purge:
                for host in hosts:
                    run(["rm", "-rf", self.instance(host.name).dir])
            self.after_down(hosts)
            self.write_inventory()

    def _stop_host(self, host):
        with self.locked(".lock-" + host.name):
            if self.instance(host.name).stop():
                say("%-12s stopped" % host.name)

    def after_down(self, hosts):
        """Hook for the fleet (namespaces)."""

    def restart(self, name):
        """Stop and start one host (option file untouched); returns once it answers again."""
        host = self.select([name])[0]
        instance = self.instance(name)
        if instance.pid() is None:
            self.up([name])
            return
        with self.locked(".lock-" + name):
            instance.stop()
            # A Galera node rejoins the nodes that run; it bootstraps only when it is the last one.
            bootstrap = galera.is_node(host.cluster) and not self.galera_running(host.cluster, but=name)
            basedir = host.kind.basedir(self.cache)
            args = []
            if galera.is_node(host.cluster):
                args = galera.recovered_position_args(instance, lambda a: host.kind.command(basedir, a, [instance.dir]))
            proc = instance.launch(basedir, args + (["--wsrep-new-cluster"] if bootstrap else []))
            instance.wait_ready(proc, timeout=galera.SYNC_TIMEOUT if host.cluster else 60)
        say("%-12s restarted (pid %s)" % (name, instance.pid()))

    def status_rows(self):
        rows = []
        for host in self.HOSTS:
            instance = self.instance(host.name)
            if host.optional and not os.path.isdir(instance.dir):
                continue
            pid = instance.pid()
            row = {"host": host.name, "state": "up" if pid else "down", "pid": pid, "port": instance.port,
                   "socket": instance.socket, "option_file": instance.option_file,
                   "dropin_dir": instance.dropin_dir, "expected_flavor": host.kind.flavor,
                   "version": None, "version_comment": None, "flavor": None}
            if pid:
                try:
                    _names, result = instance.query("SELECT @@version, @@version_comment")
                    row["version"], row["version_comment"] = result[0]
                    row["flavor"] = "mariadb" if "mariadb" in row["version"].lower() else "mysql"
                except pymysql.err.MySQLError as exc:
                    row["state"] = "not answering (%s)" % exc.args[-1]
                # argv that runs this host's server binary (e.g. for `--no-defaults --verbose --help`)
                row["server_command"] = host.kind.command(host.kind.basedir(self.cache), [])
            row.update(self.status_extra(host, instance))
            rows.append(row)
        return rows

    def status_extra(self, host, instance):
        if not instance.pid():
            return {}
        if host.cluster == clusters.GR_INVENTORY_GROUP:
            return {"cluster": clusters.status(instance)}
        if galera.is_node(host.cluster):
            return {"cluster": "%s ready %s" % galera.state(instance)}
        return {}

    def status(self, as_json=False):
        rows = self.status_rows()
        if as_json:
            print(json.dumps(dict({"mode": self.mode, "lab_dir": self.root, "inventory": self.inventory,
                                   "hosts": rows}, **self.status_fields()), indent=2))
            return
        columns = self.status_columns()
        cells = [[("-" if r.get(k) is None else str(r[k])) for _title, k in columns] for r in rows]
        table = [[c for c, _key in columns]] + cells
        widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
        for line in table:
            print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())

    def status_fields(self):
        """More top-level fields of `status --json` (the fleet's booted hosts' inventory)."""
        return {}

    def status_columns(self):
        return [("HOST", "host"), ("STATE", "state"), ("VERSION", "version"), ("COMMENT", "version_comment"),
                ("PORT", "port"), ("PID", "pid")]

    def sql(self, name, statement):
        self.select([name])
        creds = self.secrets()
        names, rows = self.instance(name).query(statement, creds["admin_user"], creds["admin_password"])
        if names:
            print("\t".join(names))
        for row in rows:
            print("\t".join("NULL" if v is None else str(v) for v in row))

    # ---------------------------------------------------------------- inventory
    def lab_args(self):
        """The command that runs lab.py for this lab; it names the port base, so that a caller's
        DBFLEET_LAB_PORT_BASE (meant for another lab) does not apply to this one."""
        return [self.python, LAB_SCRIPT, "--lab-dir", self.root, "--port-base", str(self.port_base)]

    def host_vars(self, host, instance):
        if hasattr(host.kind, "locate"):
            host.kind.locate(self.cache)
        creds = self.secrets()
        hostvars = {
            "dbfleet_login_unix_socket": instance.socket,
            "dbfleet_login_host": "127.0.0.1",
            "dbfleet_login_port": instance.port,
            "dbfleet_login_user": creds["admin_user"],
            "dbfleet_login_password": creds["admin_password"],
            "dbfleet_option_file": instance.option_file,
            "dbfleet_option_dropin_dir": instance.dropin_dir,
            "dbfleet_restart_method": "command",
            "dbfleet_restart_command": self.lab_args() + ["restart", host.name],
            "dbfleet_lab_expected_flavor": host.kind.flavor,
            "dbfleet_lab_expected_version": host.kind.version,
        }
        if host.name == "mysql80":
            hostvars["memcached_port"] = self.memcached_port()
        if self.mode == "local" and host.name in tls.SERVER_CERTS:
            # Lab facts for the TLS tests (not login options): the CA that signed the host's certificate
            # and which certificate it is (lab/dbfleet_lab/tls.py).
            hostvars["dbfleet_lab_tls_ca"] = tls.ca_paths(self.root)[0]
            hostvars["dbfleet_lab_tls_certificate"] = tls.SERVER_CERTS[host.name]
        return hostvars

    def inventory_vars(self):
        return {"ansible_connection": "local", "ansible_python_interpreter": self.python}

    def inventory_data(self, hosts=None):
        groups = {}
        for host in self.HOSTS if hosts is None else hosts:
            instance = self.instance(host.name)
            if instance.pid():
                # Cluster members stand in their cluster's group only, outside the lab group: plays and
                # tests on the lab's standalone servers never reach them.
                # An asynchronous replica of a member stands in its cluster's group too.
                group = host.cluster or (host.source and self.hosts[host.source].cluster) or host.kind.group
                groups.setdefault(group, {})[host.name] = self.host_vars(host, instance)
                if host.source and self.mode == "local":
                    groups[group][host.name]["dbfleet_replication_source"] = host.source
        children = {self.inventory_group: {"children": {"mysql": {}, "mariadb": {}}}}
        for group in ("mysql", "mariadb"):
            children[group] = {"hosts": groups.get(group, {})}
        for cluster in tuple(galera.GROUPS) + (clusters.GR_INVENTORY_GROUP,):
            if groups.get(cluster):
                children[cluster] = {"hosts": groups[cluster]}
        return {"all": {"vars": self.inventory_vars(), "children": children}}

    def write_inventory(self):
        text = yamlout.dump(self.inventory_data(),
                            "# Written by lab/lab.py (%s mode, lab %s): only hosts that are up.\n"
                            "# Do not edit: `lab.py inventory` rewrites it.\n" % (self.mode, self.root))
        os.makedirs(os.path.dirname(self.inventory), exist_ok=True)
        tmp = self.inventory + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)     # it holds the admin password
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, self.inventory)


class Fleet(Lab):
    """The SSH fleet: a network namespace per host, with a booted machine (db1-db4, pkg1-pkg5) or an sshd and a
    lab-started server (DBFLEET_FLEET_BOOTED=0's db1-db4, the clusters); GTID replication."""

    mode = "ssh"
    inventory_group = "fleet"
    HOSTS = (Host("db1", MYSQL80, 1, address=PREFIX + "11"),
             Host("db2", MYSQL80, 2, address=PREFIX + "12", source="db1"),
             Host("db3", MARIADB, 3, address=PREFIX + "13"),
             Host("db4", MARIADB, 4, address=PREFIX + "14", source="db3"),
             # The LTS servers in their chroots, standalone, only when named (`up db5 db6`).
             Host("db5", MYSQL97, 5, address=PREFIX + "15", optional=True),
             Host("db6", MARIADB118, 6, address=PREFIX + "16", optional=True),
             # Clusters, each member in its namespace (lab/dbfleet_lab/galera.py, replication/clusters.py), only when named
             # or opted in: a 3-node Galera cluster of MariaDB 10.11 (galera-4) with a GTID replica of galera1,
             # a 3-node Galera cluster of MariaDB 11.8 (trixie chroot, its galera-4) with a GTID replica of
             # galera118_1, and a single-primary Group Replication group of MySQL 8.0.33 with a replica of gr1.
             # `make fleet-up` opts in to all three (DBFLEET_FLEET_CLUSTERS=0 leaves them out).
             Host("galera1", MARIADB, 31, address=PREFIX + "31", optional=True, opt_in=FLEET_GALERA_OPT_IN,
                  cluster=galera.GROUP),
             Host("galera2", MARIADB, 32, address=PREFIX + "32", optional=True, opt_in=FLEET_GALERA_OPT_IN,
                  cluster=galera.GROUP),
             Host("galera3", MARIADB, 33, address=PREFIX + "33", optional=True, opt_in=FLEET_GALERA_OPT_IN,
                  cluster=galera.GROUP),
             Host("galera_replica", MARIADB, 34, address=PREFIX + "34", source="galera1", optional=True,
                  opt_in=FLEET_GALERA_OPT_IN),
             Host("galera118_1", MARIADB118, 35, address=PREFIX + "35", optional=True, opt_in=FLEET_GALERA118_OPT_IN,
                  cluster=galera.GROUP_118),
             Host("galera118_2", MARIADB118, 36, address=PREFIX + "36", optional=True, opt_in=FLEET_GALERA118_OPT_IN,
                  cluster=galera.GROUP_118),
             Host("galera118_3", MARIADB118, 37, address=PREFIX + "37", optional=True, opt_in=FLEET_GALERA118_OPT_IN,
                  cluster=galera.GROUP_118),
             Host("galera118_replica", MARIADB118, 38, address=PREFIX + "38", source="galera118_1", optional=True,
                  opt_in=FLEET_GALERA118_OPT_IN),
             Host("gr1", MYSQL80, 41, address=PREFIX + "41", optional=True, opt_in=FLEET_GR_OPT_IN,
                  cluster=clusters.GR_INVENTORY_GROUP),
             Host("gr2", MYSQL80, 42, address=PREFIX + "42", optional=True, opt_in=FLEET_GR_OPT_IN,
                  cluster=clusters.GR_INVENTORY_GROUP),
             Host("gr3", MYSQL80, 43, address=PREFIX + "43", optional=True, opt_in=FLEET_GR_OPT_IN,
                  cluster=clusters.GR_INVENTORY_GROUP),
             Host("gr_replica", MYSQL80, 44, address=PREFIX + "44", source="gr1", optional=True, opt_in=FLEET_GR_OPT_IN),
             # Booted hosts (lab/dbfleet_lab/machines.py): systemd-nspawn machines with the distribution's
             # packaged server under systemd, reached as user deploy with become; their own inventory
             # (inventories/booted/hosts.yml), only when named (`up pkg1 pkg2`).
             Host("pkg1", machines.MACHINE_MARIADB1011, 51, address=PREFIX + "51", optional=True),
             Host("pkg2", machines.MACHINE_MARIADB1011, 52, address=PREFIX + "52", source="pkg1", optional=True),
             Host("pkg3", machines.MACHINE_MARIADB118, 53, address=PREFIX + "53", optional=True),
             Host("pkg4", machines.MACHINE_MYSQL97, 54, address=PREFIX + "54", optional=True),
             Host("pkg5", machines.MACHINE_MYSQL80, 55, address=PREFIX + "55", optional=True))
    PORT = 3306
    # What db1-db4 are as booted machines: db1 -> db2 MySQL 8.0.33 (pkg5's kind: the tarball under the
    # vendor's mysql.service), db3 -> db4 MariaDB 10.11 (pkg1's kind: bookworm's package).
    BOOTED_DB = {"db1": machines.MACHINE_MYSQL80, "db2": machines.MACHINE_MYSQL80,
                 "db3": machines.MACHINE_MARIADB1011, "db4": machines.MACHINE_MARIADB1011}
    # The hosts of the booted inventory (inventories/booted/hosts.yml); every other host is in the fleet's.
    BOOTED_INVENTORY_HOSTS = ("pkg1", "pkg2", "pkg3", "pkg4", "pkg5")

    def __init__(self, root, cache, inventory):
        self.booted_db = self.booted_db_wanted(root)
        if self.booted_db:
            self.HOSTS = tuple(replace(h, kind=self.BOOTED_DB[h.name]) if h.name in self.BOOTED_DB else h
                               for h in Fleet.HOSTS)
        super().__init__(root, cache, self.PORT, inventory)
        self.client_key = os.path.join(self.root, "ssh", "id_ed25519")

    @staticmethod
    def booted_db_wanted(root):
        """db1-db4 booted: as the fleet in root has them (a booted host's machine root is <root>/<host>/root), else
        DBFLEET_FLEET_BOOTED=1 (0: tarball servers), else FLEET_BOOTED_DEFAULT. Asking for the other kind while
        the fleet has hosts of one is an error: down --purge first."""
        wanted = os.environ.get(FLEET_BOOTED_OPT_IN, "")
        if wanted not in ("", "0", "1"):
            raise LabError("%s=%r: expected 1 (db1-db4 booted machines) or 0 (tarball servers)" % (FLEET_BOOTED_OPT_IN, wanted))
        present = [name for name in Fleet.BOOTED_DB if os.path.isdir(os.path.join(root, name))]
        recorded = any(os.path.isdir(os.path.join(root, name, "root")) for name in present) if present else None
        if recorded is None:
            return FLEET_BOOTED_DEFAULT if wanted == "" else wanted == "1"
        if wanted != "" and recorded != (wanted == "1"):
            raise LabError("%s=%s, but the fleet in %s has db1-db4 %s: `lab.py --mode ssh down --purge` first"
                           % (FLEET_BOOTED_OPT_IN, wanted, root, "booted" if recorded else "as tarball servers"))
        return recorded

    def _port_base(self, requested):
        return requested

    def port(self, host):
        return self.PORT

    def _record_port_base(self):
        """The fleet listens on 3306 in each namespace: no port base."""

    def namespace(self, host):
        return Namespace(host.name, host.address)

    def instance(self, name):
        host = self.hosts[name]
        extra = ["relay-log = relay-bin"]
        if host.kind.flavor == "mysql":
            extra += ["gtid_mode = ON", "enforce_gtid_consistency = ON"]
        elif not host.cluster:
            # A replica that may become the primary (the restart role's switchover) logs what it applies, as MySQL
            # 8.0 does by default (log_replica_updates): its binary log then has the whole history.
            extra += ["log_slave_updates = ON"]
        if host.source:
            extra += ["read_only = ON"] + (["super_read_only = ON"] if host.kind.flavor == "mysql" else [])
        if booted(host):
            machine = machines.Machine(name, host.kind.dist, self.root, host.server_id, host.address,
                                       self.namespace(host), self.client_key + ".pub", extra)
            creds = self.secrets() if os.path.exists(os.path.join(self.root, "secrets.json")) else {}
            machine.set_admin(creds.get("admin_user", ADMIN_USER), creds.get("admin_password", ""))
            return machine
        if galera.is_node(host.cluster):
            peers = galera.peers((h.address, galera.DEFAULT_PORTS["galera gmcast port"])
                                 for h in self.HOSTS if h.cluster == host.cluster)
            extra += galera.option_lines(name, host.address, galera.DEFAULT_PORTS, peers, host.server_id, host.cluster)
        if host.cluster == clusters.GR_INVENTORY_GROUP:
            seeds = ",".join("%s:%d" % (h.address, clusters.XCOM_PORT) for h in self.HOSTS
                             if h.cluster == clusters.GR_INVENTORY_GROUP)
            extra += clusters.option_lines(self, name, host.address, self.PORT, "%s:%d" % (host.address, clusters.XCOM_PORT),
                                           seeds, PREFIX + "0/%d" % NETMASK)
        return Instance(name, host.kind, self.root, self.PORT, host.server_id, "0.0.0.0", extra,
                        netns=self.namespace(host))

    def sshd(self, host):
        return Sshd(os.path.join(self.root, host.name), self.namespace(host), self.client_key + ".pub")

    def accounts(self):
        creds = self.secrets()
        return super().accounts() + [(REPL_USER, "%", creds["replication_password"], "REPLICATION SLAVE", False)]

    def preflight(self, hosts):
        if os.geteuid() != 0:
            raise LabError("the SSH fleet needs root (network namespaces, a bridge, sshd)")
        for tool in ("ip", "ssh", "ssh-keygen", "/usr/sbin/sshd"):
            if not any(os.access(os.path.join(d, tool), os.X_OK) for d in os.environ["PATH"].split(":") + [""]):
                raise LabError("%s is missing (Debian packages iproute2, openssh-server, openssh-client)" % tool)

    def up(self, names=()):
        """Network, sshd and a verified SSH login per host first; a replica brings its primary along."""
        started_at = time.monotonic()
        hosts = self.select(names)
        hosts = [self.hosts[h.source] for h in hosts if h.source and self.hosts[h.source] not in hosts] + hosts
        with self.locked():
            self.preflight(hosts)
            if not os.path.exists(self.client_key):
                os.makedirs(os.path.dirname(self.client_key), exist_ok=True)
                run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "dbfleet-lab", "-f", self.client_key])
            ensure_bridge()
            with ThreadPoolExecutor(max_workers=len(hosts)) as pool:
                list(pool.map(self._machine_up, hosts))
        self._up(hosts, started_at)

    def _machine_up(self, host):
        os.makedirs(os.path.join(self.root, host.name), exist_ok=True)
        self.namespace(host).ensure()
        if booted(host):
            return      # its own sshd starts when it boots (_start); checked in after_up
        self.sshd(host).start()
        self.check_ssh(host)

    def check_ssh(self, host):
        """A real login with the lab's key, as Ansible will do it (a booted host: as deploy, then sudo)."""
        user, command = (machines.DEPLOY_USER, "sudo -n true") if booted(host) else ("root", "true")
        deadline = time.monotonic() + (30 if booted(host) else 0)
        while True:
            proc = subprocess.run(["ssh", "-i", self.client_key, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
                                   "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR",
                                   "%s@%s" % (user, host.address), command],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  check=False)
            if proc.returncode == 0:
                return
            if time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if booted(host):
            raise LabError("ssh %s@%s failed: %s\n--- journal of ssh.service\n%s"
                           % (user, host.address, proc.stdout.strip(),
                              self.instance(host.name).inside(["journalctl", "--no-pager", "-n", "20", "-u", "ssh"],
                                                              check=False).stdout))
        sshd = self.sshd(host)
        raise LabError("ssh root@%s failed: %s\n--- %s\n%s" % (host.address, proc.stdout.strip(), sshd.log,
                                                               run(["tail", "-n", "20", sshd.log])))

    def prepare(self, hosts):
        """The booted hosts' roots (machines.py) besides the other hosts' dists and templates."""
        prepared = super().prepare([h for h in hosts if not booted(h)])
        for host in hosts:
            if booted(host):
                prepared[host.kind.name] = (host.kind.basedir(self.cache), None)
        return prepared

    def after_up(self, hosts):
        """Form the Group Replication group (when its members are among hosts), then point each replica
        at its primary (once) and wait until both replication threads run."""
        self._form_group(hosts)
        creds = self.secrets()
        for host in hosts:
            if booted(host):
                self.check_ssh(host)
        for host in hosts:
            if host.source:
                self._replicate(host, self.hosts[host.source].address, self.PORT, REPL_USER,
                                creds["replication_password"])
        self._writer_endpoints()

    def _writer_endpoints(self):
        """HAProxy in front of each replicated pair that is up (lab/dbfleet_lab/haproxy.py)."""
        up = dict((h.name, h.address) for h in self.HOSTS
                  if h.name in ("db1", "db2", "db3", "db4") and self.instance(h.name).pid())
        started = haproxy.start(self.root, GATEWAY, up)
        if started:
            pairs = ", ".join("%s/%s %d" % (p, r, port) for p, r, port in haproxy.PAIRS if p in up and r in up)
            say("writer endpoints: haproxy (pid %d) on %s: %s; runtime API %s"
                % (started, GATEWAY, pairs, haproxy.socket_path(self.root)))

    def _replicas_of(self, hosts):
        """Running replicas whose primary is among hosts."""
        names = {h.name for h in hosts}
        return [h for h in self.HOSTS if h.source in names and self.instance(h.name).pid()]

    def _replication(self, replicas, start):
        """STOP/START REPLICA around stopping primaries, so that replicas do not reconnect meanwhile
        (Instance.stop ends the primary's dump threads: else its shutdown takes ~10 s)."""
        for host in replicas:
            try:
                self.instance(host.name).query(host.kind.start_replica if start else host.kind.stop_replica)
            except pymysql.err.MySQLError as exc:
                say("  %s: %s failed: %s" % (host.name, "START" if start else "STOP", exc.args[-1]))

    def down(self, names=(), purge=False):
        stopping = self.select(names) if names else list(self.HOSTS)
        if any(h.name in ("db1", "db2", "db3", "db4") for h in stopping) and haproxy.stop(self.root):
            say("writer endpoints: haproxy stopped")
        paused = self._replicas_of(stopping)
        self._replication(paused, start=False)
        super().down(names, purge)
        self._replication([h for h in paused if h not in stopping], start=True)

    def restart(self, name):
        paused = self._replicas_of(self.select([name]))
        self._replication(paused, start=False)
        try:
            if booted(self.hosts[name]) and self.instance(name).leader():
                with self.locked(".lock-" + name):     # as an operator would: systemctl inside the machine
                    machine = self.instance(name)
                    machine.restart_server()
                    machine.wait_ready(None)
                say("%-12s restarted %s (pid %s inside)" % (name, machine.dist.unit, machine.unit_state()[1]))
            else:
                super().restart(name)
        finally:
            self._replication(paused, start=True)

    def _stop_host(self, host):
        close_control_masters(host.address, machines.DEPLOY_USER if booted(host) else "root")
        super()._stop_host(host)
        self.sshd(host).stop()
        self.namespace(host).remove()

    def after_down(self, hosts):
        if not any(self.namespace(h).exists() for h in self.HOSTS):
            remove_bridge()

    def status_rows(self):
        """An optional booted host (pkg1-pkg5) is listed while it is booted: its kept root alone (after `down`) is no host that is down
        (the tests' fleet fixture reads every listed host as one that should be up)."""
        return [row for row in super().status_rows()
                if not (booted(self.hosts[row["host"]]) and self.hosts[row["host"]].optional and row["state"] != "up"
                        and not row.get("booted_now"))]

    def status_extra(self, host, instance):
        extra = dict(super().status_extra(host, instance), address=host.address,
                     role="replica of " + host.source if host.source else (host.cluster + " member" if host.cluster else "primary"),
                     sshd="up" if self.sshd(host).pid() else "down", replication=None)
        if booted(host):
            leader = instance.leader()
            extra.update(sshd="up" if leader else "down", booted_now=bool(leader), unit=host.kind.dist.unit,
                         user=machines.DEPLOY_USER)
        if host.source and instance.pid():
            try:
                conn = instance.connect_root()
                try:
                    state = host.kind.replica_state(conn)
                finally:
                    conn.close()
                extra["replication"] = "not configured" if state is None else "IO %s, SQL %s" % state[:2]
            except pymysql.err.MySQLError as exc:
                extra["replication"] = "unknown (%s)" % exc.args[-1]
        return extra

    def status_columns(self):
        return [("HOST", "host"), ("ADDRESS", "address"), ("STATE", "state"), ("VERSION", "version"),
                ("PID", "pid"), ("SSHD", "sshd"), ("ROLE", "role"), ("REPLICATION", "replication"), ("CLUSTER", "cluster")]

    def lab_args(self):
        """The command that runs lab.py for this fleet, also over SSH inside a host, where the caller's
        DBFLEET_FLEET_NET is not set: it names the network, so a restart never uses another fleet's."""
        return ["/usr/bin/env", "DBFLEET_FLEET_NET=%d" % NET, self.python, LAB_SCRIPT, "--mode", "ssh",
                "--lab-dir", os.path.dirname(self.root)]

    def host_vars(self, host, instance):
        if booted(host):
            return self.booted_host_vars(host)
        hostvars = dict(super().host_vars(host, instance), ansible_host=host.address,
                        dbfleet_login_host=host.address, **haproxy.host_vars(self.root, host.name))
        if host.source:
            hostvars["dbfleet_replication_source"] = host.source
        return hostvars

    def inventory_vars(self):
        return {"ansible_connection": "ssh", "ansible_user": "root", "ansible_port": 22,
                "ansible_ssh_private_key_file": self.client_key,
                # ServerAlive*: a host whose link goes down while Ansible's ControlPersist connection to it is
                # open is reported unreachable in ~15 s instead of hanging on TCP retransmissions.
                "ansible_ssh_common_args": ("-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
                                            " -o ServerAliveInterval=5 -o ServerAliveCountMax=3"),
                "ansible_python_interpreter": self.python}

    def inventory_data(self, hosts=None):
        hosts = [h for h in self.HOSTS if h.name not in self.BOOTED_INVENTORY_HOSTS] if hosts is None else hosts
        data = super().inventory_data(hosts)
        children = data["all"]["children"]
        up = set(children["mysql"]["hosts"]) | set(children["mariadb"]["hosts"])
        children["primaries"] = {"hosts": {h.name: {} for h in hosts if h.name in up and not h.source}}
        children["replicas"] = {"hosts": {h.name: {} for h in hosts if h.name in up and h.source}}
        # The replicas of cluster members are replicas too (the topology check reads group `replicas`).
        for cluster in tuple(galera.GROUPS) + (clusters.GR_INVENTORY_GROUP,):
            for name in (children.get(cluster) or {}).get("hosts", {}):
                if self.hosts[name].source:
                    children["replicas"]["hosts"][name] = {}
        return data

    # ---------------------------------------------------------------- booted hosts
    @property
    def booted_inventory(self):
        """inventories/booted/hosts.yml beside inventories/fleet/hosts.yml (else <inventory>.booted.yml)."""
        directory = os.path.dirname(self.inventory)
        if os.path.basename(directory) == "fleet":
            return os.path.join(os.path.dirname(directory), "booted", os.path.basename(self.inventory))
        return os.path.splitext(self.inventory)[0] + ".booted.yml"

    def booted_host_vars(self, host):
        """Only what a user's inventory would say: where to connect, as whom, become. No path, unit,
        restart command or login: the collection finds them on the host (docs/hosts.md)."""
        host.kind.locate(self.cache)
        hostvars = {"ansible_host": host.address,
                    "dbfleet_lab_expected_flavor": host.kind.flavor,
                    "dbfleet_lab_expected_version": host.kind.version}
        hostvars.update(haproxy.host_vars(self.root, host.name))
        if host.source:
            hostvars["dbfleet_replication_source"] = host.source
        if host.name not in self.BOOTED_INVENTORY_HOSTS:
            # In the fleet's inventory, whose group vars log in as root with the lab's Python: as the booted
            # inventory's group vars say it for pkg1-pkg5.
            hostvars.update((key, value) for key, value in self.booted_connection_vars().items()
                            if key in ("ansible_user", "ansible_become", "ansible_python_interpreter"))
        return hostvars

    def booted_connection_vars(self):
        """How Ansible reaches a booted host: as deploy over SSH with the lab's key, then become."""
        return {"ansible_connection": "ssh", "ansible_user": machines.DEPLOY_USER, "ansible_become": True,
                "ansible_port": 22, "ansible_ssh_private_key_file": self.client_key,
                "ansible_ssh_common_args": self.inventory_vars()["ansible_ssh_common_args"],
                "ansible_python_interpreter": "/usr/bin/python3"}

    def booted_inventory_data(self):
        data = self.inventory_data([h for h in self.HOSTS if h.name in self.BOOTED_INVENTORY_HOSTS])
        data["all"]["vars"] = self.booted_connection_vars()
        children = data["all"]["children"]
        children["booted"] = children.pop(self.inventory_group)
        return data

    def write_inventory(self):
        super().write_inventory()
        text = yamlout.dump(self.booted_inventory_data(),
                            "# Written by lab/lab.py (ssh mode, booted hosts, lab %s): only hosts that are up.\n"
                            "# Do not edit: `lab.py --mode ssh inventory` rewrites it.\n" % self.root)
        os.makedirs(os.path.dirname(self.booted_inventory), exist_ok=True)
        tmp = self.booted_inventory + ".tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, self.booted_inventory)

    def status_fields(self):
        return {"booted_inventory": self.booted_inventory}


def booted(host):
    """True for a booted host of the fleet (machines.py)."""
    return isinstance(host.kind, machines.MachineKind)
