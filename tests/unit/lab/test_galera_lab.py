"""The local lab's Galera cluster: ports, option lines and which node bootstraps."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import galera  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.labs import Lab  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.servers import Instance  # noqa: E402  pylint: disable=wrong-import-position


def test_ports_come_from_the_port_base():
    assert galera.ports(36000, 302) == {"server port": 36302, "galera gmcast port": 36312,
                                        "galera IST port": 36322, "galera SST port": 36332}


def test_option_lines_name_every_peer_and_own_ports():
    lines = galera.option_lines("galera2", 36000, 302, [301, 302, 303])
    assert "wsrep_cluster_address = gcomm://127.0.0.1:36311,127.0.0.1:36312,127.0.0.1:36313" in lines
    assert any("gmcast.listen_addr=tcp://127.0.0.1:36312;ist.recv_addr=127.0.0.1:36322" in line for line in lines)
    assert "wsrep_sst_receive_address = 127.0.0.1:36332" in lines
    assert "innodb_autoinc_lock_mode = 2" in lines and "binlog_format = ROW" in lines


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
