"""dbfleet lab: a local fleet of real database servers, and the Ansible inventories for it.

usage: lab.py [--mode local|ssh] [--lab-dir DIR] [--port-base N] [--inventory FILE] COMMAND

commands:
  up [HOST...]        start hosts (default: all; already running ones are left alone), write the inventory
  down [--purge] [HOST...]  stop hosts by the pid in their pid file; --purge also deletes their directories
  status [--json]     host, state, version the server reports, port, pid
  start HOST | stop HOST | restart HOST   one host; restart returns once the server answers again
  inventory           rewrite the inventory only
  sql HOST "SQL"      run one statement as the admin user and print the rows
  leftovers --save FILE | --since FILE   what this clone's labs have on the machine (processes, network
                      namespaces and links, mounts, listening ports, machines' cgroups): --save cleans
                      Molecule's private labs and records the rest (what a run takes over); --since names what
                      is there now and was not then, and fails when there is any (make test: first and last check)

local mode (default): one process per server on 127.0.0.1, inventory inventories/lab/hosts.yml
  mariadb1011  MariaDB 10.11 (Debian)     port base+11
  mysql80      MySQL 8.0.33 (with memcached plugin)  port base+80 (memcached_port base+211)
  mysql57      MySQL 5.7.22 (optional: DBFLEET_LAB_WITH_57=1 or by name)  port base+57
  mysql97      MySQL 9.7.x (Debian sid, in a chroot)       port base+97
  mariadb118   MariaDB 11.8.x (Debian trixie, in a chroot)  port base+118
  mysql56      MySQL 5.6.14 (optional: DBFLEET_LAB_WITH_56=1 or by name)  port base+56
  galera1..3   a 3-node MariaDB 10.11 Galera cluster (Debian galera-4, rsync SST; optional:
               DBFLEET_LAB_WITH_GALERA=1 or by name), inventory group `galera` (outside group `lab`);
               ports: SQL base+301..303, gmcast +311..313, IST +321..323, SST +331..333. The first node
               started while none runs bootstraps; a restarted node rejoins (restart returns once it
               answers SQL, possibly before it is Synced again)
  galera_replica an asynchronous replica of galera1 (MariaDB 10.11, GTID), in group `galera`; port base+304
  gr1..3       a Group Replication group of MySQL 8.0.33, single primary (optional: DBFLEET_LAB_WITH_GR=1
               or by name), inventory group `group_replication` (outside group `lab`); ports base+351..353,
               group communication base+361..363
ssh mode: hosts in network namespaces reached over SSH, inventory inventories/fleet/hosts.yml
  db1 (MySQL 8.0.33, primary, 10.231.7.11)   db2 (replica of db1, 10.231.7.12)
  db3 (MariaDB 10.11, primary, 10.231.7.13)  db4 (replica of db3, 10.231.7.14)
  db1-db4 are booted systemd-nspawn machines (db1/db2 copies of pkg5's root, db3/db4 of pkg1's, below), reached
  as user deploy with become; with DBFLEET_FLEET_BOOTED=0 at `up`, tarball servers in the namespaces as before
  optional, only when named (`--mode ssh up db5 db6`): db5 (MySQL 9.7, 10.231.7.15), db6 (MariaDB 11.8,
  10.231.7.16): standalone, their server in its chroot inside the host's namespace
  clusters, optional (by name, or DBFLEET_FLEET_WITH_GALERA=1 / DBFLEET_FLEET_WITH_GALERA118=1 /
  DBFLEET_FLEET_WITH_GR=1, all three set by `make fleet-up` unless DBFLEET_FLEET_CLUSTERS=0),
  inventory groups `galera`, `galera118` and `group_replication` (outside group `fleet`):
  galera1..3 (10.231.7.31-33) a 3-node MariaDB 10.11 Galera cluster (galera-4, gcomm over the namespaces'
              addresses, rsync SST, wsrep_gtid_mode), galera_replica (.34) its GTID replica of galera1
  galera118_1..3 (10.231.7.35-37) a 3-node MariaDB 11.8 Galera cluster (trixie chroot, its galera-4),
              galera118_replica (.38) its GTID replica of galera118_1 (MariaDB 11.8)
  gr1..3 (10.231.7.41-43) a single-primary Group Replication group of MySQL 8.0.33, gr_replica (.44) a
              GTID replica of gr1
  booted hosts, only when named (`--mode ssh up pkg1 pkg2`): systemd-nspawn machines with the distribution's
  packaged server under systemd, in the host's namespace, reached as user deploy with become (sudo);
  inventory inventories/booted/hosts.yml (no path, unit, socket or password in it; docs/hosts.md):
    pkg1 (Debian 12, MariaDB 10.11, primary, 10.231.7.51)  pkg2 (replica of pkg1, 10.231.7.52)
    pkg3 (Debian 13, MariaDB 11.8, 10.231.7.53)           pkg4 (Debian sid, MySQL 9.7, 10.231.7.54)
  Their roots are built once into the cache (machines/<distribution>; lab/dbfleet_lab/machines.py).

environment:
  DBFLEET_LAB_DIR        lab directory (default <repo>/.lab; ssh mode uses <lab dir>/fleet)
  DBFLEET_LAB_CACHE      downloads, extracted servers, Debian chroots, datadir templates (default ~/.cache/dbfleet-lab)
  DBFLEET_LAB_PORT_BASE  port base (default 33000; remembered in <lab dir>/lab.json)
  DBFLEET_LAB_HOSTS      comma-separated hosts for `up` without HOST arguments
  DBFLEET_LAB_WITH_57=1  include mysql57 in the default hosts (MySQL 5.7 is end of life since 2023)
  DBFLEET_LAB_WITH_56=1  include mysql56 in the default hosts
  DBFLEET_LAB_WITH_GALERA=1  include galera1, galera2, galera3 and galera_replica in the default hosts
  DBFLEET_LAB_WITH_GR=1  include gr1, gr2, gr3 in the default hosts
  DBFLEET_LAB_INVENTORY  inventory file to write (default inventories/lab|fleet/hosts.yml)
  DBFLEET_FLEET_WITH_GALERA=1, DBFLEET_FLEET_WITH_GALERA118=1, DBFLEET_FLEET_WITH_GR=1  ssh mode: include the
                         10.11 Galera cluster / the 11.8 Galera cluster / the GR group, each with its replica
  DBFLEET_FLEET_BOOTED=0 ssh mode, at `up` of a fleet without db1-db4: tarball servers instead of booted machines
                         (later commands follow what the fleet's directory holds)
  DBFLEET_FLEET_NET      ssh mode: network 10.231.N.0/24, bridge and namespace names tagged N (default 7),
                         so that two checkouts can each run a fleet at once

The admin account `dbfleet` (@localhost, @127.0.0.1, @%) has a password generated once per lab
directory, kept in <lab dir>/secrets.json (mode 0600) and written into the inventory.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dbfleet_lab import LabError  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.labs import REPO, Fleet, Lab  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab import leftovers, machines  # noqa: E402  pylint: disable=wrong-import-position


def parse(argv):
    parser = argparse.ArgumentParser(prog="lab.py", description=__doc__.split("\n", maxsplit=1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[2:]))
    parser.add_argument("--mode", choices=("local", "ssh"), default="local")
    parser.add_argument("--lab-dir", default=os.environ.get("DBFLEET_LAB_DIR") or os.path.join(REPO, ".lab"))
    parser.add_argument("--port-base", type=int, default=None)
    parser.add_argument("--inventory", default=os.environ.get("DBFLEET_LAB_INVENTORY"))
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("up").add_argument("hosts", nargs="*")
    down = commands.add_parser("down")
    down.add_argument("--purge", action="store_true")
    down.add_argument("hosts", nargs="*")
    commands.add_parser("status").add_argument("--json", action="store_true")
    for name in ("start", "stop", "restart"):
        commands.add_parser(name).add_argument("host")
    commands.add_parser("inventory")
    sql = commands.add_parser("sql")
    sql.add_argument("host")
    sql.add_argument("statement")
    leftovers_args = commands.add_parser("leftovers").add_mutually_exclusive_group(required=True)
    leftovers_args.add_argument("--save", metavar="FILE")
    leftovers_args.add_argument("--since", metavar="FILE")
    return parser.parse_args(argv)


def leftovers_check(args):
    """lab.py leftovers (dbfleet_lab.leftovers): 0, or 1 with --since when the run left something behind."""
    labs_root = os.path.abspath(args.lab_dir)
    nets = sorted(set(int(os.environ.get(name, default)) for name, default in
                      (("DBFLEET_FLEET_NET", 7), ("DBFLEET_MOLECULE_FLEET_NET", 12))))
    if args.save:
        for directory, mode, code, text in leftovers.clean_molecule_labs(
                labs_root, os.path.abspath(__file__), int(os.environ.get("DBFLEET_MOLECULE_FLEET_NET", 12))):
            print("cleaned Molecule's lab %s (%s mode): %s%s" % (directory, mode, text or "nothing was running",
                                                                 "" if code == 0 else " (exit %d)" % code))
    state = leftovers.snapshot(labs_root, nets, machines.cgroup2_mount(mount=False))
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump(state, handle)
        print("what this run takes over (%s; fleet networks %s):" % (labs_root, ", ".join(map(str, nets))))
        print("\n".join(leftovers.describe(state)))
        return 0
    with open(args.since, encoding="utf-8") as handle:
        before = json.load(handle)
    new = leftovers.added(before, state)
    if not new:
        print("nothing left behind: the labs have what they had at the start")
        print("\n".join(leftovers.describe(state)))
        return 0
    print("left behind since the start (the next run would meet them):", file=sys.stderr)
    for kind, item, what in new:
        print("  %-9s %s: %s" % (kind, item, what), file=sys.stderr)
    return 1


def make_lab(args):
    lab_dir = os.path.abspath(args.lab_dir)
    cache = os.path.abspath(os.environ.get("DBFLEET_LAB_CACHE") or os.path.expanduser("~/.cache/dbfleet-lab"))
    if args.mode == "ssh":
        inventory = args.inventory or os.path.join(REPO, "inventories", "fleet", "hosts.yml")
        return Fleet(os.path.join(lab_dir, "fleet"), cache, os.path.abspath(inventory))
    port_base = args.port_base
    if port_base is None and os.environ.get("DBFLEET_LAB_PORT_BASE"):
        port_base = int(os.environ["DBFLEET_LAB_PORT_BASE"])
    inventory = args.inventory or os.path.join(REPO, "inventories", "lab", "hosts.yml")
    return Lab(lab_dir, cache, port_base, os.path.abspath(inventory))


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == "leftovers":
            return leftovers_check(args)
        lab = make_lab(args)
        if args.command == "up":
            lab.up(args.hosts)
        elif args.command == "down":
            lab.down(args.hosts, purge=args.purge)
        elif args.command == "status":
            lab.status(as_json=args.json)
        elif args.command == "start":
            lab.up([args.host])
        elif args.command == "stop":
            lab.down([args.host])
        elif args.command == "restart":
            lab.restart(args.host)
        elif args.command == "inventory":
            with lab.locked():
                lab.write_inventory()
        elif args.command == "sql":
            lab.sql(args.host, args.statement)
    except LabError as exc:
        print("lab.py: ERROR: %s" % exc, file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
