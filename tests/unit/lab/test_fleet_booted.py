"""db1-db4 of the SSH fleet as booted machines (DBFLEET_FLEET_BOOTED=1): the choice, the hosts and their inventory."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import LabError, machines  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.labs import FLEET_BOOTED_DEFAULT, FLEET_BOOTED_OPT_IN, Fleet, booted  # noqa: E402  pylint: disable=wrong-import-position

# What a user's inventory would not say of a host (docs/hosts.md): the collection finds it.
NOT_IN_A_USERS_INVENTORY = ("dbfleet_login_password", "dbfleet_login_user", "dbfleet_login_unix_socket",
                            "dbfleet_option_file", "dbfleet_option_dropin_dir", "dbfleet_restart_command",
                            "dbfleet_restart_method")


def fleet(tmp_path, monkeypatch, wanted):
    if wanted is None:
        monkeypatch.delenv(FLEET_BOOTED_OPT_IN, raising=False)
    else:
        monkeypatch.setenv(FLEET_BOOTED_OPT_IN, wanted)
    root = tmp_path / "fleet"
    root.mkdir(exist_ok=True)
    return Fleet(str(root), str(tmp_path / "cache"), str(tmp_path / "inventories" / "fleet" / "hosts.yml"))


def test_the_default_unless_asked(tmp_path, monkeypatch):
    lab = fleet(tmp_path, monkeypatch, None)
    assert lab.booted_db is FLEET_BOOTED_DEFAULT
    assert all(booted(lab.hosts[name]) is FLEET_BOOTED_DEFAULT for name in ("db1", "db2", "db3", "db4"))
    assert not fleet(tmp_path, monkeypatch, "0").booted_db


def test_booted_db1_to_db4_keep_names_addresses_and_replication(tmp_path, monkeypatch):
    lab = fleet(tmp_path, monkeypatch, "1")
    plain = {h.name: h for h in Fleet.HOSTS}
    assert lab.hosts["db1"].kind is lab.hosts["db2"].kind is machines.MACHINE_MYSQL80
    assert lab.hosts["db3"].kind is lab.hosts["db4"].kind is machines.MACHINE_MARIADB1011
    for name, host in lab.hosts.items():
        assert (host.address, host.source, host.server_id, host.optional) == (
            plain[name].address, plain[name].source, plain[name].server_id, plain[name].optional)
        if name not in Fleet.BOOTED_DB:
            assert host is plain[name]
    # Class-level hosts are untouched: another Fleet in the same process still chooses for itself.
    assert not booted(plain["db1"])


def test_the_choice_is_what_the_fleet_holds_and_not_switched_under_it(tmp_path, monkeypatch):
    root = tmp_path / "fleet"
    (root / "db1" / "root").mkdir(parents=True)        # a booted db1's machine root
    assert fleet(tmp_path, monkeypatch, None).booted_db       # a later command without the variable follows it
    with pytest.raises(LabError, match="down --purge"):
        fleet(tmp_path, monkeypatch, "0")
    (root / "db1" / "root").rmdir()                     # a tarball db1's directory
    assert not fleet(tmp_path, monkeypatch, None).booted_db
    with pytest.raises(LabError, match="down --purge"):
        fleet(tmp_path, monkeypatch, "1")
    with pytest.raises(LabError, match=FLEET_BOOTED_OPT_IN):
        fleet(tmp_path, monkeypatch, "yes")


def test_inventory_of_a_booted_db_host_says_what_a_users_would(tmp_path, monkeypatch):
    lab = fleet(tmp_path, monkeypatch, "1")
    for name in ("db1", "db2", "db3", "db4"):
        host = lab.hosts[name]
        hostvars = lab.host_vars(host, lab.instance(name))
        assert (hostvars["ansible_user"], hostvars["ansible_become"]) == (machines.DEPLOY_USER, True)
        assert hostvars["ansible_python_interpreter"] == "/usr/bin/python3"
        assert hostvars["ansible_host"] == host.address
        assert hostvars.get("dbfleet_replication_source", "") == host.source
        assert not [key for key in NOT_IN_A_USERS_INVENTORY if key in hostvars], hostvars
    # pkg1-pkg5 keep their own inventory, whose group vars say how they are reached.
    assert "ansible_user" not in lab.host_vars(lab.hosts["pkg1"], lab.instance("pkg1"))
