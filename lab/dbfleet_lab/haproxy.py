"""The fleet's writer endpoints: one HAProxy (Debian's package, 2.6 on bookworm) in front of each replicated pair.

Writers connect to the gateway address of the fleet's bridge on the pair's port (db1/db2: 3311, db3/db4: 3313); the
pair's backend sends them to the primary (the replica's server starts in maintenance). Its runtime API is a unix
socket at <fleet>/haproxy/admin.sock (``stats socket ... level admin``): ``set server writer_db1/db2 state ready``
moves the writers without a reload, which is what the restart role's switchover does with
``restart_primary_endpoint: haproxy`` (module dbfleet.innodb.replication_switchover, step endpoint). Started by the
fleet's ``up`` when both hosts of a pair are up, stopped by its ``down``; no health check: a server's state is only
what the runtime API set.
"""
import os
import signal
import subprocess
import time

# (primary, replica, port writers connect to)
PAIRS = (("db1", "db2", 3311), ("db3", "db4", 3313))


def directory(fleet_root):
    return os.path.join(fleet_root, "haproxy")


def socket_path(fleet_root):
    return os.path.join(directory(fleet_root), "admin.sock")


def backend(primary):
    return "writer_%s" % primary


def config_text(fleet_root, gateway, addresses):
    """haproxy.cfg for the pairs whose hosts are in addresses {host: address}."""
    lines = ["# Written by lab/lab.py: the fleet's writer endpoints (lab/dbfleet_lab/haproxy.py).",
             "global",
             "    stats socket %s mode 600 level admin" % socket_path(fleet_root),
             "    pidfile %s" % os.path.join(directory(fleet_root), "haproxy.pid"),
             "defaults",
             "    mode tcp",
             "    timeout connect 2s",
             "    timeout client 1h",
             "    timeout server 1h"]
    for primary, replica, port in PAIRS:
        if primary not in addresses or replica not in addresses:
            continue
        lines += ["listen %s" % backend(primary),
                  "    bind %s:%d" % (gateway, port),
                  "    server %s %s:3306" % (primary, addresses[primary]),
                  "    server %s %s:3306 disabled" % (replica, addresses[replica])]
    return "\n".join(lines) + "\n"


def pid(fleet_root):
    try:
        with open(os.path.join(directory(fleet_root), "haproxy.pid"), encoding="utf-8") as handle:
            value = int(handle.read().split()[0])
        os.kill(value, 0)
        return value
    except (OSError, ValueError, IndexError):
        return None


def start(fleet_root, gateway, addresses):
    """Start HAProxy for the pairs that are up (once: a running one is left as it is). Returns its pid or None."""
    if not any(p in addresses and r in addresses for p, r, _port in PAIRS):
        return None
    running = pid(fleet_root)
    if running:
        return running
    os.makedirs(directory(fleet_root), exist_ok=True)
    cfg = os.path.join(directory(fleet_root), "haproxy.cfg")
    with open(cfg, "w", encoding="utf-8") as handle:
        handle.write(config_text(fleet_root, gateway, addresses))
    subprocess.run(["haproxy", "-c", "-q", "-f", cfg], check=True)
    subprocess.run(["haproxy", "-D", "-f", cfg], check=True)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if pid(fleet_root) and os.path.exists(socket_path(fleet_root)):
            return pid(fleet_root)
        time.sleep(0.1)
    raise RuntimeError("haproxy did not start (%s)" % cfg)


def stop(fleet_root):
    """Stop the fleet's HAProxy, by the pid in its pid file; True when one was running."""
    running = pid(fleet_root)
    if not running:
        return False
    os.kill(running, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and pid(fleet_root):
        time.sleep(0.1)
    return True


def host_vars(fleet_root, host):
    """What the inventory says of host's writer endpoint (restart_primary_haproxy), or {} outside a pair."""
    for primary, replica, _port in PAIRS:
        if host in (primary, replica):
            return {"restart_primary_haproxy": {"socket": socket_path(fleet_root), "backend": backend(primary),
                                                "server": host}}
    return {}
