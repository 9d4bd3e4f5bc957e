"""The lab's Galera clusters: three MariaDB nodes each, with Debian's galera-4.

Two clusters, one per MariaDB version the lab runs (GROUPS): ``galera`` of MariaDB 10.11 (the
machine's mariadbd and galera-4, bookworm) in the local lab and the SSH fleet, and ``galera118`` of
MariaDB 11.8 in the fleet, whose server, galera-4 (26.4 of trixie) and rsync come from the trixie
chroot of lab/dbfleet_lab/chroots.py (galera-4 is a dependency of trixie's mariadb-server; the chroot's
package list names it too). Whatever a node needs (the provider, rsync, the ``mysql`` user the server
switches to) is looked up where the node's server runs: on the machine, or in its chroot (root).

In the local lab the nodes run on 127.0.0.1 (below); in the SSH fleet each node has its network
namespace and address, and the default ports (DEFAULT_PORTS). In the local lab each node has four
ports derived from the lab's port base: SQL (base+301..303), group communication
(gmcast, base+311..313), incremental state transfer (IST, base+321..323) and full state transfer
(rsync SST, base+331..333). The first node to start while no other node of the cluster runs
bootstraps the cluster (``--wsrep-new-cluster``); any other start joins the running ones, so that
``lab.py restart galeraN`` makes the node rejoin (Joining -> Joined -> Synced), never form a
second cluster. ``lab.py restart`` returns once the node answers SQL, as a service manager does; the
node may still be catching up then, which is what the collection's restart gate has to wait for.
"""
import os
import pwd
import re
import subprocess
import time

import pymysql

from . import LabError, run, say

PROVIDER = "/usr/lib/galera/libgalera_smm.so"
GROUP = "galera"
GROUP_118 = "galera118"
# {inventory group of a cluster: its wsrep_cluster_name}
GROUPS = {GROUP: "dbfleet_galera", GROUP_118: "dbfleet_galera118"}
CLUSTER_NAME = GROUPS[GROUP]
OPT_IN = "DBFLEET_LAB_WITH_GALERA"
GMCAST_OFFSET = 10      # from the node's SQL port offset
IST_OFFSET = 20
SST_OFFSET = 30
SYNC_TIMEOUT = 120
WSREP_GTID_DOMAIN = 1
USER = "mysql"          # created by Debian's mariadb-server package


def is_node(cluster):
    """Whether a host's cluster (labs.Host.cluster) is a Galera cluster."""
    return cluster in GROUPS


def _user_ids(root):
    """(uid, gid) of USER where the server runs: the machine (root "") or a chroot (its /etc/passwd)."""
    if not root:
        try:
            entry = pwd.getpwnam(USER)
        except KeyError:
            return None
        return entry.pw_uid, entry.pw_gid
    try:
        with open(os.path.join(root, "etc", "passwd"), encoding="utf-8") as handle:
            for line in handle:
                fields = line.split(":")
                if len(fields) > 3 and fields[0] == USER:
                    return int(fields[2]), int(fields[3])
    except OSError:
        pass
    return None


def own(directory, root=""):
    """Hand a node's directory to the user its server runs as (root: the chroot it runs in, its own uid)."""
    ids = _user_ids(root)
    if ids is None:
        raise LabError("user %s is missing%s (Debian's mariadb-server package creates it)"
                       % (USER, " in the chroot " + root if root else "")) from None
    run(["chown", "-R", "%d:%d" % ids, directory])


def ports(port_base, offset):
    """{what: port} of the node whose SQL port is port_base + offset."""
    sql = port_base + offset
    return {"server port": sql, "galera gmcast port": sql + GMCAST_OFFSET, "galera IST port": sql + IST_OFFSET,
            "galera SST port": sql + SST_OFFSET}


# The ports of a node that has an address of its own (the SSH fleet: a network namespace per node).
DEFAULT_PORTS = {"server port": 3306, "galera gmcast port": 4567, "galera IST port": 4568, "galera SST port": 4444}


def peers(addresses_ports):
    """The gcomm:// peer list: "address:gmcast port" of every member."""
    return ",".join("%s:%d" % pair for pair in addresses_ports)


def option_lines(name, address, node_ports, peer_list, domain_id, group=GROUP):
    """[mysqld] lines of one node (the recipe in /work/shared/notes/servers.md, "Clusters").

    address: the node's own address (127.0.0.1 in the local lab, the namespace's in the fleet);
    node_ports: {what: port} as ports() or DEFAULT_PORTS; peer_list: peers() of all members;
    domain_id: the node's own GTID domain (its local, not replicated writes); group: the cluster's
    inventory group (GROUPS: its wsrep_cluster_name).

    wsrep_gtid_mode: every node logs a replicated transaction with the same GTID (domain
    WSREP_GTID_DOMAIN), so the binlog a node receives with a full state transfer (rsync copies the
    donor's) continues the history its asynchronous replica follows: without it, a node that rejoined
    by SST (after a SIGKILL) had the donor's GTIDs and its replica stopped with error 1236."""
    # The server runs as the mysql user: the rsync daemon of a state transfer started by a root server
    # switches to "nobody", which cannot write the datadir.
    return ["user = %s" % USER,
            "wsrep_on = ON",
            "wsrep_provider = %s" % PROVIDER,
            "wsrep_cluster_name = %s" % GROUPS[group],
            "wsrep_cluster_address = gcomm://%s" % peer_list,
            "wsrep_node_name = %s" % name,
            "wsrep_node_address = %s" % address,
            "wsrep_node_incoming_address = %s:%d" % (address, node_ports["server port"]),
            'wsrep_provider_options = "gmcast.listen_addr=tcp://%s:%d;ist.recv_addr=%s:%d;'
            'gcache.size=32M"' % (address, node_ports["galera gmcast port"], address, node_ports["galera IST port"]),
            "wsrep_sst_receive_address = %s:%d" % (address, node_ports["galera SST port"]),
            "wsrep_sst_method = rsync",
            "wsrep_gtid_mode = ON",
            "wsrep_gtid_domain_id = %d" % WSREP_GTID_DOMAIN,
            "gtid_domain_id = %d" % domain_id,
            "binlog_format = ROW",
            "innodb_autoinc_lock_mode = 2",
            "log-slave-updates = ON"]


def check_machine(root=""):
    """The provider and rsync where the nodes' server runs (root: its chroot; "" the machine)."""
    where = " in the chroot %s (remove it: the next `lab.py up` builds it anew)" % root if root else ""
    if not os.path.exists(root + PROVIDER):
        raise LabError("%s is missing%s: install the Debian package galera-4" % (PROVIDER, where))
    path = ["/usr/bin", "/bin"] if root else os.environ.get("PATH", "").split(":")
    if not any(os.access(root + os.path.join(d, "rsync"), os.X_OK) for d in path):
        raise LabError("rsync is missing%s (the lab's Galera nodes use rsync state transfers): install the Debian "
                       "package rsync" % where)


def safe_to_bootstrap(datadir):
    """True / False from grastate.dat; None when the node never ran (no grastate.dat)."""
    try:
        with open(os.path.join(datadir, "grastate.dat"), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    match = re.search(r"^safe_to_bootstrap:\s*(\d)", text, re.M)
    return bool(match and match.group(1) == "1")


def allow_bootstrap(datadir):
    """Mark a node's state safe to bootstrap from (the lab's cluster was stopped all at once)."""
    path = os.path.join(datadir, "grastate.dat")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(re.sub(r"^safe_to_bootstrap:\s*\d", "safe_to_bootstrap: 1", text, flags=re.M))


def bootstrap_order(instances):
    """The nodes in the order to start them when none runs: the one safe to bootstrap from first."""
    def key(item):
        state = safe_to_bootstrap(item[1].datadir)
        return 0 if state else (1 if state is None else 2)
    ordered = sorted(instances, key=key)
    first = ordered[0][1]
    if safe_to_bootstrap(first.datadir) is False:
        say("  no node of the stopped cluster %s is marked safe to bootstrap; bootstrapping from %s"
            % (", ".join(i.name for _h, i in ordered), first.name))
        allow_bootstrap(first.datadir)
    return ordered


def crashed(datadir):
    """True when the node's last stop was not clean (grastate.dat says seqno -1): a SIGKILL, a crash."""
    try:
        with open(os.path.join(datadir, "grastate.dat"), encoding="utf-8") as handle:
            return bool(re.search(r"^seqno:\s*-1\s*$", handle.read(), re.M))
    except OSError:
        return False


def recovered_position_args(instance, command):
    """After an unclean stop, what Debian's mariadb.service does before the start (galera_recovery):
    read the node's position from InnoDB (--wsrep-recover) and start from it (--wsrep_start_position),
    so that the node rejoins with an incremental state transfer, not a full one (a full rsync SST
    replaces the node's binlogs with the donor's last one, and its async replica can no longer continue).
    command: argv of the server with the given arguments (the kind's command()); [] when nothing to do."""
    if not crashed(instance.datadir):
        return []
    log = os.path.join(instance.dir, "wsrep-recover.log")
    if os.path.exists(log):
        os.remove(log)
    proc = subprocess.run(command(["--defaults-file=" + instance.option_file, "--wsrep-recover", "--log-error=" + log]),
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
                          check=False, cwd=instance.dir)
    try:
        with open(log, encoding="utf-8", errors="replace") as handle:
            match = re.search(r"WSREP: Recovered position:\s*(\S+:-?\d+)", handle.read())
    except OSError:
        match = None
    if not match:
        say("  %s: no position recovered (exit %s); it rejoins with a full state transfer" % (instance.name, proc.returncode))
        return []
    say("  %s: recovered position %s after an unclean stop" % (instance.name, match.group(1)))
    return ["--wsrep_start_position=" + match.group(1)]


def state(instance):
    """(wsrep_local_state_comment, wsrep_ready) of a running node, (None, None) when it does not answer."""
    try:
        conn = instance.connect_root(timeout=2)
    except pymysql.err.MySQLError:
        return None, None
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_ready')")
            values = dict(cur.fetchall())
    except pymysql.err.MySQLError:
        return None, None
    finally:
        conn.close()
    return values.get("wsrep_local_state_comment"), values.get("wsrep_ready")


def wait_synced(instance, timeout=SYNC_TIMEOUT):
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        seen = state(instance)
        if seen == ("Synced", "ON"):
            return
        time.sleep(0.3)
    raise LabError("%s: not Synced within %d s (last seen: state %s, wsrep_ready %s)"
                   % (instance.name, timeout, seen[0], seen[1]))
