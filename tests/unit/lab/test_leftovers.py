"""lab.py leftovers: what a clone's labs have on the machine, from fake /proc, /run/netns, /sys and cgroup trees."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import leftovers  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.machines import machine_cgroup_name  # noqa: E402  pylint: disable=wrong-import-position


def test_a_path_is_keyed_by_the_host_it_belongs_to(tmp_path):
    labs = str(tmp_path / ".lab")

    def key(rel):
        return leftovers.host_key(os.path.join(labs, rel), labs)
    assert key("mysql80/data/ibdata1") == "mysql80"
    assert key("fleet/pkg1/root") == "fleet/pkg1"
    assert key("molecule-booted/fleet/pkg1/root/var") == "molecule-booted/fleet/pkg1"
    assert key("molecule-mariadb/mariadb1011/my.cnf") == "molecule-mariadb/mariadb1011"
    assert leftovers.host_key(str(tmp_path / "elsewhere"), labs) is None
    assert leftovers.host_key(labs, labs) is None


def fake_proc(tmp_path, procs):
    proc = tmp_path / "proc"
    for pid, (argv, cwd) in procs.items():
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        os.symlink(cwd, str(proc / str(pid) / "cwd"))
    (proc / "self").mkdir()
    return str(proc)


def test_processes_of_the_labs_by_host_not_the_ssh_masters_nor_others(tmp_path):
    labs = str(tmp_path / ".lab")
    proc = fake_proc(tmp_path, {
        10: (["/usr/sbin/mysqld", "--defaults-file=%s/mysql80/my.cnf" % labs], "/"),
        11: (["systemd-nspawn", "--boot", "--directory=%s/fleet/pkg1/root" % labs], "/"),
        12: (["/bin/sh"], "%s/mariadb118" % labs),
        13: (["ssh", "-o", "IdentityFile=%s/fleet/ssh/id_ed25519" % labs, "10.231.7.51"], "/"),
        14: (["/usr/sbin/mysqld", "--defaults-file=/elsewhere/my.cnf"], "/"),
        15: (["/usr/sbin/mysqld", "--datadir=%s/mysql80/data" % labs], "/")})
    assert leftovers.processes(labs, proc) == {"mysql80": [10, 15], "fleet/pkg1": [11], "mariadb118": [12]}


def test_namespaces_and_links_of_the_clones_fleet_networks_only(tmp_path):
    run_netns, net = tmp_path / "netns", tmp_path / "net"
    for name in ("dbfleet39-pkg1", "dbfleet-db1", "dbfleet41-db1", "dbfleet40-db3"):
        (run_netns / name).mkdir(parents=True)
    for name in ("dbfleet39", "dbf39-pkg1", "dbfleet0", "dbf-db1", "dbf41-db1", "eth0"):
        (net / name).mkdir(parents=True)
    assert leftovers.netns([39, 40], str(run_netns)) == ["dbfleet39-pkg1", "dbfleet40-db3"]
    assert leftovers.netns([7], str(run_netns)) == ["dbfleet-db1"]
    assert leftovers.links([39], str(net)) == ["dbf39-pkg1", "dbfleet39"]
    assert leftovers.links([7], str(net)) == ["dbf-db1", "dbfleet0"]
    assert leftovers.netns([39], str(tmp_path / "none")) == []


def test_mounts_under_the_labs(tmp_path):
    labs = str(tmp_path / ".lab")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text("22 1 0:21 / /proc rw - proc proc rw\n"
                         "90 1 8:1 /x %s/mariadb118/chroot/var/lib/mysql rw - ext4 /dev/vda rw\n"
                         "91 1 8:1 /y %s rw - ext4 /dev/vda rw\n" % (labs, labs))
    assert leftovers.mounts(labs, str(mountinfo)) == ["%s/mariadb118/chroot/var/lib/mysql" % labs]


def test_listening_ports_in_the_labs_ranges(tmp_path):
    labs = tmp_path / ".lab"
    (labs / "molecule-lts").mkdir(parents=True)
    (labs / "lab.json").write_text(json.dumps({"port_base": 41000}))
    (labs / "molecule-lts" / "lab.json").write_text(json.dumps({"port_base": 34400}))
    ranges = leftovers.port_ranges(str(labs))
    assert ranges == [(41000, 41400), (34400, 34800)]
    tcp = tmp_path / "tcp"
    head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    rows = [("0100007F:%04X" % 41080, "0A"), ("0100007F:%04X" % 41011, "01"), ("00000000:%04X" % 34497, "0A"),
            ("00000000:%04X" % 33080, "0A")]
    tcp.write_text(head + "".join("   0: %s 00000000:0000 %s 0 0 0 0 0 0\n" % row for row in rows))
    assert leftovers.listening(ranges, (str(tcp), str(tmp_path / "no-tcp6"))) == [34497, 41080]


def test_cgroups_of_the_clones_machines_only(tmp_path):
    labs = tmp_path / ".lab"
    root = labs / "fleet" / "pkg4" / "root"
    root.mkdir(parents=True)
    mount = tmp_path / "cgroup"
    ours = mount / "lab" / machine_cgroup_name("pkg4", str(root))
    ours.mkdir(parents=True)
    (mount / "lab" / machine_cgroup_name("pkg4", "/elsewhere/fleet/pkg4/root")).mkdir()
    assert leftovers.cgroups(str(labs), str(mount)) == [str(ours)]
    assert leftovers.cgroups(str(labs), None) == []


def test_hosts_up_or_down_and_what_the_end_adds(tmp_path):
    labs = tmp_path / ".lab"
    for rel in ("mysql80/data", "mariadb118", "tls", "fleet/pkg1/root", "fleet/ssh", "molecule-lts/mysql84"):
        (labs / rel).mkdir(parents=True)
    assert leftovers.hosts(str(labs), {"fleet/pkg1": [11]}) == {
        "mysql80": "down (its directory kept)", "mariadb118": "down (its directory kept)", "fleet/pkg1": "up",
        "molecule-lts/mysql84": "down (its directory kept)"}
    before = dict(hosts={"mysql80": "up"}, processes={"fleet/pkg1": "PIDs 11"}, ports={"41080": "listening"})
    after = dict(hosts={"mysql80": "down", "mysql97": "down"}, processes={"fleet/pkg1": "PIDs 99"},
                 netns={"dbfleet39-pkg1": "network namespace"}, ports={})
    # A restarted machine is the same one; a host's directory is no leftover; a namespace new since the start is.
    assert leftovers.added(before, after) == [("netns", "dbfleet39-pkg1", "network namespace")]
    assert leftovers.describe({}) == ["  nothing"]


def test_a_molecule_lab_is_purged_with_its_own_inventory_and_mode(tmp_path):
    (tmp_path / "molecule-booted" / "fleet").mkdir(parents=True)
    (tmp_path / "molecule-lts").mkdir()
    mode, argv = leftovers.molecule_down_argv(str(tmp_path / "molecule-booted"), "/repo/lab/lab.py")
    assert mode == "ssh"
    assert argv[1:] == ["/repo/lab/lab.py", "--mode", "ssh", "--lab-dir", str(tmp_path / "molecule-booted"),
                        "--inventory", str(tmp_path / "molecule-booted" / "hosts.yml"), "down", "--purge"]
    assert leftovers.molecule_down_argv(str(tmp_path / "molecule-lts"), "lab.py")[0] == "local"
