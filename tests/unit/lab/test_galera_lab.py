"""The local lab's Galera cluster: ports, option lines and which node bootstraps."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import galera  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab import clusters  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.labs import Fleet, Lab  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.servers import Instance  # noqa: E402  pylint: disable=wrong-import-position


def test_ports_come_from_the_port_base():
    assert galera.ports(36000, 302) == {"server port": 36302, "galera gmcast port": 36312,
                                        "galera IST port": 36322, "galera SST port": 36332}


def test_option_lines_name_every_peer_and_own_ports():
    peers = galera.peers(("127.0.0.1", 36000 + o + galera.GMCAST_OFFSET) for o in (301, 302, 303))
    lines = galera.option_lines("galera2", "127.0.0.1", galera.ports(36000, 302), peers, 302)
    assert "wsrep_cluster_address = gcomm://127.0.0.1:36311,127.0.0.1:36312,127.0.0.1:36313" in lines
    assert any("gmcast.listen_addr=tcp://127.0.0.1:36312;ist.recv_addr=127.0.0.1:36322" in line for line in lines)
    assert "wsrep_sst_receive_address = 127.0.0.1:36332" in lines
    assert "innodb_autoinc_lock_mode = 2" in lines and "binlog_format = ROW" in lines
    # one GTID history for every node (an async replica survives a node's full state transfer)
    assert "wsrep_gtid_mode = ON" in lines and "wsrep_gtid_domain_id = 1" in lines and "gtid_domain_id = 302" in lines


def test_the_node_runs_as_mysql_not_root(tmp_path):
    lab = Lab(str(tmp_path), str(tmp_path / "cache"), 36000, str(tmp_path / "hosts.yml"))
    server = lab.instance("galera1").option_text("/usr").split("[mysqld]")[1]
    assert "user = mysql" in server and "user = root" not in server
    other = Instance("x", lab.hosts["mariadb1011"].kind, str(tmp_path), 1, 1, "127.0.0.1").option_text("/usr")
    assert "user = root" in other.split("[mysqld]")[1]


def test_galera_hosts_are_optional(tmp_path, monkeypatch):
    lab = Lab(str(tmp_path), str(tmp_path / "cache"), 36000, str(tmp_path / "hosts.yml"))
    monkeypatch.delenv("DBFLEET_LAB_HOSTS", raising=False)
    monkeypatch.delenv(galera.OPT_IN, raising=False)
    assert not [h for h in lab.select(()) if h.cluster]
    monkeypatch.setenv(galera.OPT_IN, "1")
    assert [h.name for h in lab.select(()) if h.cluster] == ["galera1", "galera2", "galera3"]


class Node:
    def __init__(self, tmp_path, name, grastate):
        self.name = name
        self.datadir = str(tmp_path / name)
        os.makedirs(self.datadir)
        if grastate is not None:
            with open(os.path.join(self.datadir, "grastate.dat"), "w", encoding="utf-8") as handle:
                handle.write("# GALERA saved state\nversion: 2.1\nuuid: x\nseqno: 5\nsafe_to_bootstrap: %d\n" % grastate)


def test_bootstrap_from_the_node_safe_to_bootstrap(tmp_path):
    nodes = [(n, Node(tmp_path, n, s)) for n, s in (("galera1", 0), ("galera2", 1), ("galera3", 0))]
    assert [n for n, _i in galera.bootstrap_order(nodes)][0] == "galera2"


def test_bootstrap_when_no_node_is_safe_marks_the_first(tmp_path):
    nodes = [(n, Node(tmp_path, n, 0)) for n in ("galera1", "galera2", "galera3")]
    first = galera.bootstrap_order(nodes)[0][1]
    assert galera.safe_to_bootstrap(first.datadir) is True
    assert galera.safe_to_bootstrap(Node(tmp_path, "fresh", None).datadir) is None


def test_fleet_nodes_use_their_namespace_address(tmp_path):
    fleet = Fleet(str(tmp_path), str(tmp_path / "cache"), str(tmp_path / "hosts.yml"))
    text = fleet.instance("galera2").option_text("/usr")
    address = {h.name: h.address for h in fleet.HOSTS}
    assert "wsrep_cluster_address = gcomm://%s:4567,%s:4567,%s:4567" % (
        address["galera1"], address["galera2"], address["galera3"]) in text
    assert "wsrep_node_address = %s" % address["galera2"] in text
    assert "wsrep_sst_receive_address = %s:4444" % address["galera2"] in text
    assert "127.0.0.1" not in text.split("[mysqld]")[1]
    gr2 = fleet.instance("gr2").option_text("/usr")
    assert "report_host = %s" % address["gr2"] in gr2
    assert "loose-group_replication_local_address = %s:33061" % address["gr2"] in gr2
    assert "loose-group_replication_group_seeds = %s:33061,%s:33061,%s:33061" % (
        address["gr1"], address["gr2"], address["gr3"]) in gr2
    assert clusters.members(fleet) == ["gr1", "gr2", "gr3"]


def test_fleet_clusters_are_optional(tmp_path, monkeypatch):
    fleet = Fleet(str(tmp_path), str(tmp_path / "cache"), str(tmp_path / "hosts.yml"))
    monkeypatch.delenv("DBFLEET_LAB_HOSTS", raising=False)
    assert [h.name for h in fleet.select(())] == ["db1", "db2", "db3", "db4"]
    monkeypatch.setenv("DBFLEET_FLEET_WITH_GALERA", "1")
    assert [h.name for h in fleet.select(()) if h.name.startswith("galera")] == [
        "galera1", "galera2", "galera3", "galera_replica"]


def test_long_host_names_get_a_short_veth():
    from dbfleet_lab import netns  # pylint: disable=import-outside-toplevel
    names = [netns.veth_name(h) for h in ("galera_replica", "gr_replica", "db1")]
    assert all(len(n) <= netns.IFNAMSIZ for n in names) and len(set(names)) == 3


def test_the_fleet_runs_a_second_galera_cluster_of_mariadb_118(tmp_path):
    fleet = Fleet(str(tmp_path), str(tmp_path / "cache"), str(tmp_path / "hosts.yml"))
    address = {h.name: h.address for h in fleet.HOSTS}
    nodes = [h.name for h in fleet.HOSTS if h.cluster == galera.GROUP_118]
    assert nodes == ["galera118_1", "galera118_2", "galera118_3"]
    assert all(fleet.hosts[n].kind.key == "mariadb118-trixie" and galera.is_node(fleet.hosts[n].cluster) for n in nodes)
    text = fleet.instance("galera118_2").option_text("/usr")
    # its own peers and cluster name: never gcomm to a node of the 10.11 cluster
    assert "wsrep_cluster_address = gcomm://%s:4567,%s:4567,%s:4567" % tuple(address[n] for n in nodes) in text
    assert "wsrep_cluster_name = dbfleet_galera118" in text and address["galera1"] not in text
    assert "wsrep_cluster_name = dbfleet_galera\n" in fleet.instance("galera2").option_text("/usr")
    assert "galera-4" in fleet.hosts["galera118_1"].kind.packages
    # its async replica: MariaDB 11.8 too, a replica of galera118_1 at the next address of the plan
    replica = fleet.hosts["galera118_replica"]
    assert (replica.kind.key, replica.source, replica.address, replica.cluster) == (
        "mariadb118-trixie", "galera118_1", address["galera118_3"][:-2] + "38", "")
    # by name, or with DBFLEET_FLEET_WITH_GALERA118=1 (make fleet-up); never with DBFLEET_FLEET_WITH_GALERA alone
    assert all(fleet.hosts[n].optional and fleet.hosts[n].opt_in == "DBFLEET_FLEET_WITH_GALERA118"
               for n in nodes + ["galera118_replica"])


def test_make_fleet_up_opts_in_to_every_cluster(tmp_path, monkeypatch):
    fleet = Fleet(str(tmp_path), str(tmp_path / "cache"), str(tmp_path / "hosts.yml"))
    monkeypatch.delenv("DBFLEET_LAB_HOSTS", raising=False)
    for variable in ("DBFLEET_FLEET_WITH_GALERA", "DBFLEET_FLEET_WITH_GALERA118", "DBFLEET_FLEET_WITH_GR"):
        monkeypatch.setenv(variable, "1")
    names = [h.name for h in fleet.select(())]
    assert names == ["db1", "db2", "db3", "db4", "galera1", "galera2", "galera3", "galera_replica", "galera118_1",
                     "galera118_2", "galera118_3", "galera118_replica", "gr1", "gr2", "gr3", "gr_replica"]
    # the Makefile's fleet-up opts in to exactly the fleet's cluster variables
    makefile = open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "Makefile"), encoding="utf-8").read()
    line = next(l for l in makefile.splitlines() if l.startswith("FLEET_CLUSTERS_ENV :="))
    assert sorted(line.split(":=")[1].split()) == sorted("%s=1" % v for v in set(h.opt_in for h in fleet.HOSTS if h.opt_in))


def test_a_chroot_node_belongs_to_the_chroots_mysql_user(tmp_path, monkeypatch):
    root = tmp_path / "chroot"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "passwd").write_text("root:x:0:0::/root:/bin/sh\nmysql:x:100:101:MariaDB Server:/nonexistent:/bin/false\n")
    calls = []
    monkeypatch.setattr(galera, "run", calls.append)
    galera.own("/lab/galera118_1", str(root))
    assert calls == [["chown", "-R", "100:101", "/lab/galera118_1"]]
    (root / "etc" / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    try:
        galera.own("/lab/galera118_1", str(root))
    except galera.LabError as exc:
        assert "user mysql is missing in the chroot %s" % root in str(exc)
    else:
        raise AssertionError("no error for a chroot without the mysql user")


def test_the_provider_is_looked_for_in_the_nodes_chroot(tmp_path):
    try:
        galera.check_machine(str(tmp_path))
    except galera.LabError as exc:
        assert galera.PROVIDER in str(exc) and "in the chroot %s" % tmp_path in str(exc)
    else:
        raise AssertionError("no error for a chroot without galera-4")
    (tmp_path / "usr" / "lib" / "galera").mkdir(parents=True)
    (tmp_path / "usr" / "lib" / "galera" / "libgalera_smm.so").write_text("")
    (tmp_path / "usr" / "bin").mkdir(parents=True)
    (tmp_path / "usr" / "bin" / "rsync").write_text("")
    (tmp_path / "usr" / "bin" / "rsync").chmod(0o755)
    galera.check_machine(str(tmp_path))


def test_a_chroot_server_sees_proc_and_the_resolv_conf_of_where_it_runs(tmp_path):
    from dbfleet_lab import chroots  # pylint: disable=import-outside-toplevel
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "resolv.conf").write_text("nameserver 10.255.255.53\n")
    argv = chroots.wrap(str(tmp_path), ["/lab/galera118_1"], ["/usr/sbin/mariadbd"])
    script = argv[argv.index("-c") + 1]
    assert "mount --bind /proc '%s/proc'" % tmp_path in script
    assert "mount --bind /etc/resolv.conf '%s/etc/resolv.conf'" % tmp_path in script
    assert script.endswith('exec chroot \'%s\' "$@"' % tmp_path) and argv[-1] == "/usr/sbin/mariadbd"


def test_a_namespace_keeps_its_mac_when_made_again():
    """The namespace side's MAC follows from its address (neighbour caches stay right across down --purge / up)."""
    from dbfleet_lab import netns  # pylint: disable=import-outside-toplevel
    assert netns.mac_of("10.231.7.31") == "02:db:0a:e7:07:1f"
    assert netns.mac_of("10.231.12.11") != netns.mac_of("10.231.7.11")
