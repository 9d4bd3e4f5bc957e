"""The lab's MySQL Group Replication group (single primary), in the local lab and in the SSH fleet.

In the SSH fleet (``lab.py --mode ssh up gr1 gr2 gr3 gr_replica``) each member has its namespace and
address, the SQL port 3306 and the XCom port 33061; the rest is as below.

The group is three optional hosts of the local lab, ``gr1`` ``gr2`` ``gr3`` (MySQL 8.0.33 from the
jcabi zip, which ships ``lib/plugin/group_replication.so``), started by name
(``lab.py up gr1 gr2 gr3``) or with ``DBFLEET_LAB_WITH_GR=1``. Each member has its SQL port
(port base + 351..353) and its group communication (XCom) port (port base + 361..363) on 127.0.0.1.

Option file (every ``group_replication_*`` option as ``loose-``, so that the template's
``--initialize`` never sees an unknown variable): GTIDs on, the plugin loaded,
``start_on_boot=ON`` once the group is formed (a member restarted by ``lab.py restart`` rejoins by itself: absent ->
RECOVERING -> ONLINE), the group seeds, the allow list and the recovery channel's public-key
option. ``lab.py up`` then:

- sets the recovery channel's credentials on each member (``CHANGE REPLICATION SOURCE ... FOR
  CHANNEL 'group_replication_recovery'``; the ``repl`` account is created off the binlog);
- when no member is ONLINE, bootstraps the group on the first member started
  (``group_replication_bootstrap_group`` ON, START, OFF): never while a member is ONLINE;
- starts Group Replication on every member that is not ONLINE or RECOVERING, and waits until all
  are ONLINE.
"""
import os
import time
import uuid

import pymysql
import pymysql.cursors

from . import LabError, say
from .servers import read_pid

GR_OPT_IN = "DBFLEET_LAB_WITH_GR"
GR_XCOM_OFFSETS = {"gr1": 361, "gr2": 362, "gr3": 363}     # SQL ports: port base + 351..353 (labs.py)
GR_INVENTORY_GROUP = "group_replication"
GR_RECOVERY_CHANNEL = "group_replication_recovery"
ONLINE_TIMEOUT = 90
ER_GROUP_REPLICATION_RUNNING = 3093
START_ON_BOOT = "loose-group_replication_start_on_boot"


XCOM_PORT = 33061        # the group communication port of a member with an address of its own (the fleet)


def members(lab):
    """Names of the lab's Group Replication members, in the order of its HOSTS."""
    return [h.name for h in lab.HOSTS if h.cluster == GR_INVENTORY_GROUP]


def group_name(lab_root):
    """The group's UUID: fixed per lab directory, so a restarted member joins the same group."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "dbfleet-lab-group-replication:" + os.path.abspath(lab_root)))


def xcom_port(port_base, name):
    return port_base + GR_XCOM_OFFSETS[name]


def group_running(lab, but):
    """True when a member other than but runs (its pid file names a live mysqld of this lab)."""
    for name in members(lab):
        directory = os.path.join(lab.root, name)
        if name != but and read_pid(os.path.join(directory, "mysqld.pid"),
                                    "--defaults-file=" + os.path.join(directory, "my.cnf")):
            return True
    return False


def option_lines(lab, name, address, port, local_address, seeds, allowlist):
    """[mysqld] lines of a group member (after the lab's common ones).

    address/port: what the member reports to the others (127.0.0.1 and its port in the local lab, the
    namespace's address and 3306 in the fleet); local_address: its XCom "address:port"; seeds: every
    member's; allowlist: who may join.

    start_on_boot is ON when another member runs (this one joins it by itself), else OFF: with no
    group to join, a member's own join attempt at boot would block for 60 s before the lab can
    bootstrap. form_group() turns it ON in every member's option file once the group is formed."""
    start_on_boot = "ON" if group_running(lab, name) else "OFF"
    return ["gtid_mode = ON",
            "enforce_gtid_consistency = ON",
            "plugin_load_add = group_replication.so",
            "report_host = %s" % address,
            "report_port = %d" % port,
            "loose-group_replication_group_name = %s" % group_name(lab.root),
            "%s = %s" % (START_ON_BOOT, start_on_boot),
            "loose-group_replication_single_primary_mode = ON",
            "loose-group_replication_local_address = %s" % local_address,
            "loose-group_replication_group_seeds = %s" % seeds,
            "loose-group_replication_ip_allowlist = %s" % allowlist,
            "loose-group_replication_recovery_get_public_key = ON",
            "loose-group_replication_bootstrap_group = OFF"]


def local_option_lines(lab, name, port):
    """A member of the local lab: 127.0.0.1, XCom ports from the port base."""
    seeds = ",".join("127.0.0.1:%d" % xcom_port(lab.port_base, h) for h in members(lab))
    return option_lines(lab, name, "127.0.0.1", port, "127.0.0.1:%d" % xcom_port(lab.port_base, name), seeds,
                        "127.0.0.1/8")


def member_states(conn):
    """{member_id: (state, role, host, port)} as this member sees the group."""
    with conn.cursor() as cur:
        cur.execute("SELECT MEMBER_ID, MEMBER_STATE, MEMBER_ROLE, MEMBER_HOST, MEMBER_PORT"
                    " FROM performance_schema.replication_group_members")
        return {row[0]: tuple(row[1:]) for row in cur.fetchall() if row[0]}


def own_state(conn):
    """(state, role) of this member; ('OFFLINE', '') when Group Replication does not run."""
    with conn.cursor() as cur:
        cur.execute("SELECT m.MEMBER_STATE, m.MEMBER_ROLE FROM performance_schema.replication_group_members m"
                    " WHERE m.MEMBER_ID = @@server_uuid")
        row = cur.fetchone()
    return (row[0], row[1]) if row else ("OFFLINE", "")


def create_recovery_user(conn, user, password):
    """The recovery channel's account on one member, off the binlog (every member has its own)."""
    with conn.cursor() as cur:
        cur.execute("SET SESSION sql_log_bin = 0")
        cur.execute("SELECT @@global.super_read_only")
        super_read_only = cur.fetchone()[0]
        if super_read_only:
            cur.execute("SET GLOBAL super_read_only = OFF")
        try:
            cur.execute("CREATE USER IF NOT EXISTS %s@'%%' IDENTIFIED WITH mysql_native_password BY %s", (user, password))
            cur.execute("ALTER USER %s@'%%' IDENTIFIED WITH mysql_native_password BY %s", (user, password))
            cur.execute("GRANT REPLICATION SLAVE, BACKUP_ADMIN ON *.* TO %s@'%%'", (user,))
        finally:
            if super_read_only:
                cur.execute("SET GLOBAL super_read_only = ON")
            cur.execute("SET SESSION sql_log_bin = 1")


def set_recovery_credentials(conn, user, password):
    with conn.cursor() as cur:
        cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_USER = %s, SOURCE_PASSWORD = %s FOR CHANNEL '"
                    + GR_RECOVERY_CHANNEL + "'", (user, password))


def _wait_not_joining(conn, name, timeout=60):
    """A member that starts with start_on_boot tries to join on its own: wait until that attempt
    ended (ONLINE, RECOVERING, or gave up: OFFLINE / ERROR), so that START GROUP_REPLICATION does not race it."""
    deadline = time.monotonic() + timeout
    while True:
        with conn.cursor() as cur:
            cur.execute("SELECT SERVICE_STATE FROM performance_schema.replication_connection_status"
                        " WHERE CHANNEL_NAME = 'group_replication_applier'")
            row = cur.fetchone()
        state = own_state(conn)[0]
        if state in ("ONLINE", "RECOVERING", "ERROR") or (state == "OFFLINE" and (row is None or row[0] != "ON")):
            return state
        if time.monotonic() > deadline:
            raise LabError("%s: still %s after %d s of its own join attempt" % (name, state, timeout))
        time.sleep(0.5)


def form_group(lab, names):
    """Recovery credentials on the members in names, bootstrap when no member is ONLINE, start GR
    on every member that is not in the group, wait for all ONLINE."""
    creds = lab.secrets()
    running = [n for n in members(lab) if lab.instance(n).pid()]
    conns = {}
    try:
        for name in running:
            conns[name] = lab.instance(name).connect_root()
        for name in names:
            if name in conns:
                create_recovery_user(conns[name], creds["replication_user"], creds["replication_password"])
                set_recovery_credentials(conns[name], creds["replication_user"], creds["replication_password"])
        states = {name: _wait_not_joining(conns[name], name) for name in running}
        if not any(state == "ONLINE" for state in states.values()):
            first = next(n for n in members(lab) if n in conns)
            with conns[first].cursor() as cur:
                cur.execute("SET GLOBAL group_replication_bootstrap_group = ON")
                try:
                    cur.execute("START GROUP_REPLICATION")
                finally:
                    cur.execute("SET GLOBAL group_replication_bootstrap_group = OFF")
            say("%-12s bootstrapped group %s" % (first, group_name(lab.root)))
            states[first] = "ONLINE"
        for name in running:
            if states[name] in ("OFFLINE", "ERROR"):
                with conns[name].cursor() as cur:
                    if states[name] == "ERROR":
                        cur.execute("STOP GROUP_REPLICATION")
                    try:
                        cur.execute("START GROUP_REPLICATION")
                    except pymysql.err.OperationalError as exc:
                        # A member started with start_on_boot joins by itself: it may have begun
                        # between the look above and this START (error 3093, "already running").
                        if exc.args[0] != ER_GROUP_REPLICATION_RUNNING:
                            raise
        wait_online(conns)
        for name in running:
            start_on_boot(lab.instance(name).option_file)
    finally:
        for conn in conns.values():
            conn.close()


def start_on_boot(option_file):
    """From now on the member rejoins by itself when it starts (lab.py restart, or a service restart)."""
    with open(option_file, encoding="utf-8") as handle:
        text = handle.read()
    new = text.replace(START_ON_BOOT + " = OFF", START_ON_BOOT + " = ON")
    if new != text:
        with open(option_file + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(new)
        os.replace(option_file + ".tmp", option_file)


def wait_online(conns, timeout=ONLINE_TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        states = {name: own_state(conn) for name, conn in conns.items()}
        if all(state == "ONLINE" for state, _role in states.values()):
            say("group_replication: %s" % ", ".join("%s %s %s" % (n, s, r) for n, (s, r) in sorted(states.items())))
            return states
        if time.monotonic() > deadline:
            raise LabError("the group is not ONLINE after %d s: %s"
                           % (timeout, ", ".join("%s %s" % (n, s) for n, (s, _r) in sorted(states.items()))))
        time.sleep(0.5)


def before_down(lab, names):
    """Members about to stop leave the group one by one, secondaries first, with STOP GROUP_REPLICATION
    (a member shut down together with the others, or after they left, can wait tens of seconds for a
    majority it cannot reach). start_on_boot stays ON: they rejoin when started again."""
    stopping = [n for n in members(lab) if n in names and lab.instance(n).pid()]
    conns = {}
    try:
        for name in stopping:
            try:
                conns[name] = lab.instance(name).connect_root(timeout=2)
            except pymysql.err.MySQLError:
                pass        # not answering: SIGTERM alone
        order = sorted(conns, key=lambda n: own_state(conns[n])[1] == "PRIMARY")
        for name in order:
            try:
                if own_state(conns[name])[0] != "OFFLINE":
                    with conns[name].cursor() as cur:
                        cur.execute("STOP GROUP_REPLICATION")
            except pymysql.err.MySQLError as exc:
                say("  %s: STOP GROUP_REPLICATION failed: %s" % (name, exc.args[-1]))
    finally:
        for conn in conns.values():
            conn.close()


def status(instance):
    """'<state> <role>' of a running member for lab.py status."""
    try:
        conn = instance.connect_root(timeout=2)
    except pymysql.err.MySQLError as exc:
        return "unknown (%s)" % exc.args[-1]
    try:
        state, role = own_state(conn)
        return ("%s %s" % (state, role)).strip()
    finally:
        conn.close()
