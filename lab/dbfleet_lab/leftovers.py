"""What this clone's labs have on the machine, read from the kernel (`lab.py leftovers`), so that a run of the checks
starts from what the last one or a user left and leaves nothing that would break the next one.

- ``--save FILE`` (start of `make test`): cleans Molecule's private labs (``<lab>/molecule-*``: only the tests use them;
  a run that was interrupted leaves their servers, machines and namespaces up) with ``lab.py down --purge``, then
  records what the run takes over as it is: the local lab's and the SSH fleet's servers up or down, used datadirs,
  booted machines running (the fixtures use them as found and leave them so).
- ``--since FILE`` (end): what is there now and was not at the start - processes of the clone's labs, network
  namespaces and links of its fleet networks, mounts under its lab directory, listening ports of its labs' port
  ranges, booted machines' cgroups - each named; exit status 1 when there is any.

Everything is keyed by what the next run would trip over (a host's directory, a namespace's name, a port), not by
PID: a server a test restarted is the same server.
"""
import glob
import json
import os
import subprocess
import sys

from .machines import machine_cgroup_name

# What the end of a run is compared on; HOSTS (the host directories, up or down) is what the start reports only.
KINDS = ("processes", "netns", "links", "mounts", "ports", "cgroups")
HOSTS = "hosts"
# Directories of a lab that are no host's: the fleet's, its SSH keys, the lab's TLS material.
NOT_HOSTS = ("fleet", "ssh", "tls")
# Ports a lab uses above its port base (labs.py: servers base+11..+118, memcached +211, Galera +301..+333,
# Group Replication +351..+363).
PORT_SPAN = 400
LISTEN = "0A"


def lab_dirs(labs_root):
    """The clone's lab directories: the default one and Molecule's private ones (<lab>/molecule-<scenario>)."""
    return [labs_root] + sorted(d for d in glob.glob(os.path.join(labs_root, "molecule-*")) if os.path.isdir(d))


def host_key(path, labs_root):
    """The lab host a path belongs to ('fleet/pkg1', 'mysql80', 'molecule-fleet/fleet/pkg1'), or None."""
    rel = os.path.relpath(os.path.abspath(path), labs_root)
    if rel == "." or rel.startswith(".."):
        return None
    parts = rel.split(os.sep)
    key = []
    for part in parts:
        key.append(part)
        if not (part.startswith("molecule-") and len(key) == 1) and part != "fleet":
            break
    return "/".join(key)


def _paths_in(argv):
    for arg in argv:
        for piece in arg.split("="):
            if piece.startswith("/"):
                yield piece


def processes(labs_root, proc="/proc"):
    """host key -> PIDs of the processes whose command line or working directory is under the labs' directory."""
    found = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, "cmdline"), "rb") as handle:
                argv = [a.decode("utf-8", "replace") for a in handle.read().split(b"\0") if a]
        except OSError:
            continue        # gone meanwhile
        try:
            cwd = os.readlink(os.path.join(proc, entry, "cwd"))
        except OSError:
            cwd = "/"       # gone meanwhile, or not ours to read
        if argv and os.path.basename(argv[0]) == "ssh":
            continue        # Ansible's SSH connection masters (ControlPersist): they end by themselves
        for path in [cwd] + list(_paths_in(argv)):
            key = host_key(path, labs_root)
            if key:
                found.setdefault(key, []).append(int(entry))
                break
    return dict((k, sorted(v)) for k, v in found.items())


def net_names(net):
    """The names the fleet network N gives (netns.py): its bridge, its namespaces' and veths' prefixes."""
    if net == 7:
        return "dbfleet0", "dbfleet-", "dbf-"
    return "dbfleet%d" % net, "dbfleet%d-" % net, "dbf%d-" % net


def netns(nets, run_netns="/run/netns"):
    names = os.listdir(run_netns) if os.path.isdir(run_netns) else []
    prefixes = tuple(net_names(n)[1] for n in nets)
    return sorted(n for n in names if n.startswith(prefixes))


def links(nets, sys_class_net="/sys/class/net"):
    names = os.listdir(sys_class_net) if os.path.isdir(sys_class_net) else []
    bridges = set(net_names(n)[0] for n in nets)
    veths = tuple(net_names(n)[2] for n in nets)
    return sorted(n for n in names if n in bridges or n.startswith(veths))


def mounts(labs_root, mountinfo="/proc/self/mountinfo"):
    """Mount points under the labs' directory (a chroot's bind mounts, a machine's)."""
    found = []
    with open(mountinfo, encoding="utf-8") as handle:
        for line in handle:
            point = line.split()[4].replace("\\040", " ")
            if host_key(point, labs_root):
                found.append(point)
    return sorted(found)


def port_ranges(labs_root):
    """[base, base + PORT_SPAN) of each lab directory that recorded its port base (lab.json)."""
    ranges = []
    for directory in lab_dirs(labs_root):
        try:
            with open(os.path.join(directory, "lab.json"), encoding="utf-8") as handle:
                base = int(json.load(handle)["port_base"])
        except (OSError, ValueError, KeyError):
            continue
        ranges.append((base, base + PORT_SPAN))
    return ranges


def listening(ranges, tables=("/proc/net/tcp", "/proc/net/tcp6")):
    """TCP ports listened on (this network namespace) inside the ranges."""
    found = set()
    for table in tables:
        try:
            with open(table, encoding="ascii") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            port = int(fields[1].rsplit(":", 1)[1], 16)
            if fields[3] == LISTEN and any(low <= port < high for low, high in ranges):
                found.add(port)
    return sorted(found)


def machine_roots(labs_root):
    """host name -> root of each booted machine's copy the clone's labs hold (<lab>/fleet/<host>/root)."""
    roots = {}
    for directory in lab_dirs(labs_root):
        for root in glob.glob(os.path.join(directory, "fleet", "*", "root")):
            roots[root] = os.path.basename(os.path.dirname(root))
    return roots


def cgroups(labs_root, cgroup_mount):
    """The booted machines' own groups (machines.Machine.own_cgroup) of this clone's machines, where they exist."""
    if not cgroup_mount or not os.path.isdir(cgroup_mount):
        return []
    names = dict((machine_cgroup_name(host, root), root) for root, host in machine_roots(labs_root).items())
    found = []
    for directory, dirs, _files in os.walk(cgroup_mount):
        if directory.count(os.sep) - cgroup_mount.count(os.sep) >= 3:
            dirs[:] = []
        for name in dirs:
            if name in names:
                found.append(os.path.join(directory, name))
    return sorted(found)


def hosts(labs_root, running):
    """host key -> 'up' or 'down' of every host directory the labs keep (a datadir a user or a run used, a machine's
    copy): what a run takes over as it is; RUNNING: processes()."""
    found = {}
    for directory in lab_dirs(labs_root):
        for path in glob.glob(os.path.join(directory, "*", "")) + glob.glob(os.path.join(directory, "fleet", "*", "")):
            key = host_key(path, labs_root)
            if key and os.path.basename(key) not in NOT_HOSTS and not os.path.basename(key).startswith("molecule-"):
                found[key] = "up" if key in running else "down (its directory kept)"
    return found


def snapshot(labs_root, nets, cgroup_mount):
    """kind -> {item: what it is}; an item is what the next run would meet (a host, a name, a port)."""
    running = processes(labs_root)
    return dict(
        hosts=hosts(labs_root, running),
        processes=dict((k, "PIDs %s" % " ".join(map(str, v))) for k, v in running.items()),
        netns=dict((n, "network namespace") for n in netns(nets)),
        links=dict((n, "network link") for n in links(nets)),
        mounts=dict((m, "mount") for m in mounts(labs_root)),
        ports=dict((str(p), "listening") for p in listening(port_ranges(labs_root))),
        cgroups=dict((c, "cgroup") for c in cgroups(labs_root, cgroup_mount)))


def added(before, after):
    """What AFTER has that BEFORE had not, kind by kind: [(kind, item, what)]."""
    return [(kind, item, what) for kind in KINDS for item, what in sorted(after.get(kind, {}).items())
            if item not in before.get(kind, {})]


def describe(state):
    lines = []
    for kind in (HOSTS,) + KINDS:
        for item, what in sorted(state.get(kind, {}).items()):
            lines.append("  %-9s %s: %s" % (kind, item, what))
    return lines or ["  nothing"]


def molecule_down_argv(directory, lab_script):
    """(mode, argv) of `lab.py down --purge` for a Molecule lab directory, as the scenario's destroy runs it: its mode
    (ssh when it holds a fleet), and its own inventory (<dir>/hosts.yml, DBFLEET_LAB_INVENTORY of the scenarios), never
    the repository's inventories/, which lab.py rewrites at `down`."""
    mode = "ssh" if os.path.isdir(os.path.join(directory, "fleet")) else "local"
    return mode, [sys.executable, lab_script, "--mode", mode, "--lab-dir", directory,
                  "--inventory", os.path.join(directory, "hosts.yml"), "down", "--purge"]


def clean_molecule_labs(labs_root, lab_script, molecule_net):
    """Molecule's private labs down and purged (their scenarios create them again):
    [(lab dir, mode, exit status, lab.py's output)]."""
    done = []
    for directory in lab_dirs(labs_root)[1:]:
        mode, argv = molecule_down_argv(directory, lab_script)
        env = dict(os.environ, DBFLEET_FLEET_NET=str(molecule_net))
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)
        done.append((directory, mode, proc.returncode, (proc.stdout + proc.stderr).strip()))
    return done
