"""The collection on booted hosts shaped like production (lab/dbfleet_lab/machines.py, docs/hosts.md).

pkg1 -> pkg2: Debian 12 machines booted by systemd-nspawn, MariaDB 10.11 from Debian's packages under
systemd (mariadb.service), GTID replication; pkg3: Debian 13, MariaDB 11.8; pkg4: Debian sid, MySQL 9.7
(mysql.service), each from its package. Ansible arrives over SSH as the unprivileged user `deploy`
with `become`; the inventory (inventories/booted/hosts.yml) names no path, unit, socket, restart command
or login. What the collection finds by itself is checked against what the package really has, read
inside the machine; then site.yml (check mode exact, applied, idempotent; its runs shared with test_vendor_unit.py,
dbfleet_testing.booted_site) and verify.yml run there.
"""
import datetime
import json
import os
import sys
import time

import pytest
import yaml

from dbfleet_testing.lab import REPO as ROOT
sys.path.insert(0, os.path.join(ROOT, "lab"))

from dbfleet_testing.lab import BOOTED_HOSTS, inside  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_testing.runs import playbook, recap  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_testing.booted_site import (  # noqa: E402  pylint: disable=wrong-import-position
    SITE_DROPINS, SITE_VARS, module_results)

# The distributions' packages; pkg5 (a tarball under a vendor-style unit, also booted) has test_vendor_unit.py.
HOSTS = tuple(h for h in BOOTED_HOSTS if h != "pkg5")
# What each package has: flavor, unit, the directory its option files include last, the client file with its socket.
PACKAGES = {"pkg1": ("mariadb", "mariadb", "/etc/mysql/mariadb.conf.d", "/etc/mysql/my.cnf"),
            "pkg2": ("mariadb", "mariadb", "/etc/mysql/mariadb.conf.d", "/etc/mysql/my.cnf"),
            "pkg3": ("mariadb", "mariadb", "/etc/mysql/mariadb.conf.d", "/etc/mysql/my.cnf"),
            "pkg4": ("mysql", "mysql", "/etc/mysql/mysql.conf.d", None)}
# Never set on a user's host by its inventory in this test: the collection must find them (or be told).
TOLD_PREFIXES = ("dbfleet_login_", "dbfleet_option_", "dbfleet_restart_", "dbfleet_service_name", "dbfleet_config_file")


@pytest.fixture(scope="module")
def booted(booted_machines):
    """pkg1-pkg5 booted (conftest.booted_machines: once for the session, left as found)."""
    return booted_machines


def test_the_inventory_says_only_what_a_users_would(booted):
    with open(booted.booted_inventory, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    top = data["all"]["vars"]
    assert (top["ansible_user"], top["ansible_become"]) == ("deploy", True)
    from dbfleet_lab.inventory import hosts_in  # pylint: disable=import-outside-toplevel
    hosts = hosts_in(data)
    assert set(HOSTS) <= set(hosts)
    for name, host_vars in hosts.items():
        told = [k for k in list(host_vars) + list(top) if k.startswith(TOLD_PREFIXES)]
        assert told == [], "%s: the inventory tells %s" % (name, told)


def test_what_the_collection_finds_is_what_the_package_has(booted, booted_facts):
    from dbfleet_lab.inventory import read_hosts  # pylint: disable=import-outside-toplevel
    expected = read_hosts(booted.booted_inventory)
    assert [expected[h]["dbfleet_lab_expected_version"][:5] for h in HOSTS] == ["10.11", "10.11", "11.8.", "9.7.4"]
    for host in HOSTS:
        facts = booted_facts[host]
        flavor, unit, last_dir, client_file = PACKAGES[host]
        # The package's layout, read inside the machine: the last !includedir of /etc/mysql/my.cnf.
        includes = [line.split(None, 1)[1].strip().rstrip("/") for line in
                    inside(booted, host, "cat", "/etc/mysql/my.cnf").splitlines() if line.startswith("!includedir")]
        assert includes[-1] == last_dir
        assert facts["dropin_dir"] == last_dir, facts["dropin_dir_source"]
        assert "/etc/mysql/my.cnf" in facts["option_files"]
        # The unit systemd runs the server under, and its main PID is the process the facts read.
        shown = inside(booted, host, "systemctl", "show", "-p", "Id", "-p", "MainPID", unit).split()
        assert "Id=%s.service" % unit in shown
        assert "MainPID=%d" % facts["process"]["pid"] in shown
        assert facts["unit"] == unit, facts["unit_source"]
        # Logged in as root through the server's socket (root's unix_socket / auth_socket login, no password):
        # named by the client files of MariaDB's package; MySQL's names none, the Debian place is used.
        server_socket = booted.query(host, "SELECT @@socket AS s")[0]["s"]
        assert os.path.realpath(os.path.join(booted.lab_dir, "fleet", host, "root", facts["socket"].lstrip("/"))) == \
            os.path.realpath(os.path.join(booted.lab_dir, "fleet", host, "root", server_socket.lstrip("/")))
        if client_file:
            assert facts["login_socket_source"] == "socket of the client groups in %s" % client_file
        else:
            assert facts["login_socket_source"] == "where the debian packages put the server's socket"
        assert facts["runs_as_user"] == "mysql"
        assert facts["flavor"] == flavor
        assert facts["version_text"] == expected[host]["dbfleet_lab_expected_version"]


def test_site_check_mode_exact_then_applied_then_idempotent(site_runs):
    """site.yml's runs over the booted hosts (dbfleet_testing.booted_site, shared with test_vendor_unit.py), for these
    hosts: check mode says what the run changes and changes nothing, the run changes that, a second run and a second
    check mode run change nothing."""
    dropins = {h: PACKAGES[h][2] + "/60-dbfleet-adaptive_hash.cnf" for h in HOSTS}
    assert {h: site_runs.ahi["before"][h] for h in HOSTS} == {h: 0 for h in HOSTS}
    checked = site_runs.changed["checked"]
    assert all(checked[h] >= 2 for h in HOSTS), checked      # the drop-in and the runtime value
    assert {h: site_runs.ahi["checked"][h] for h in HOSTS} == {h: 0 for h in HOSTS}
    assert {h: site_runs.dropin_after_check[h] for h in HOSTS} == {h: False for h in HOSTS}

    applied = site_runs.changed["applied"]
    assert {h: applied[h] for h in HOSTS} == {h: checked[h] for h in HOSTS}, (checked, applied)
    for host in HOSTS:
        assert site_runs.ahi["applied"][host] == 1
        assert SITE_DROPINS[host] == dropins[host]
        assert "innodb_adaptive_hash_index = ON" in site_runs.dropin_text[host]
        # The server reads it: its own option-file reader prints it among the [mysqld] options.
        assert "--innodb_adaptive_hash_index=ON" in site_runs.print_defaults[host]

    for run in ("again", "checked_again"):
        assert {h: site_runs.changed[run][h] for h in HOSTS} == {h: 0 for h in HOSTS}, site_runs.output[run]


def test_verify_both_modes(booted, site_runs, tmp_path):  # pylint: disable=unused-argument
    """verify.yml where site.yml applied adaptive_hash (site_runs)."""
    pattern = ":".join(HOSTS)
    # Host mode: the verify module on the host, logged in through the socket as root; the option files read there.
    code, out = playbook(booted.booted_inventory, "verify.yml",
                         dict(SITE_VARS, verify_hosts=pattern, verify_report_dir=str(tmp_path / "host"),
                              verify_fail_on_drift=True))
    assert code == 0, out[-3000:]
    with open(tmp_path / "host" / "verify.json", encoding="utf-8") as handle:
        hosts = json.load(handle)["hosts"]
    assert {h: hosts[h]["status"] for h in HOSTS} == {h: "ok" for h in HOSTS}, hosts
    for host in HOSTS:
        seen = hosts[host]["variables"]["innodb_adaptive_hash_index"]
        assert seen["configured"]["file"] == PACKAGES[host][2] + "/60-dbfleet-adaptive_hash.cnf", seen
    # Controller mode reads no file of the host: it needs a login, told as a user would (vault / extra vars).
    # These servers offer no TLS (Debian's MariaDB as installed): the unverified login is chosen explicitly.
    creds = dict(dbfleet_login_user=booted.admin_user, dbfleet_login_password=booted.admin_password,
                 dbfleet_login_ssl_mode="preferred")
    code, out = playbook(booted.booted_inventory, "verify.yml",
                         dict(SITE_VARS, verify_hosts=pattern, verify_mode="controller",
                              verify_report_dir=str(tmp_path / "ctl"), **creds))
    assert code == 0, out[-3000:]
    assert booted.admin_password not in out
    with open(tmp_path / "ctl" / "verify.json", encoding="utf-8") as handle:
        hosts = json.load(handle)["hosts"]
    for host in HOSTS:      # the running value matches; what a restart keeps is not visible over SQL
        assert hosts[host]["summary"]["drift_runtime"] == 0 and hosts[host]["status"] != "error", hosts[host]
        # set at runtime: MariaDB's GLOBAL_VALUE_ORIGIN says SQL, MySQL's variables_info DYNAMIC
        assert hosts[host]["variables"]["innodb_adaptive_hash_index"]["origin"] in ("SQL", "DYNAMIC")


def test_drop_table_on_the_replicated_pair(booted):
    """drop_table.yml reads the topology from the servers (pkg2 replicates from pkg1) and drops once on the
    primary; the replica follows. Check mode drops nothing."""
    schema = "dbfleet_it_booted"
    booted.query("pkg1", "CREATE DATABASE IF NOT EXISTS %s" % schema)
    booted.query("pkg1", "CREATE TABLE IF NOT EXISTS %s.t1 (id INT PRIMARY KEY) ENGINE=InnoDB" % schema)
    count = "SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 't1'"
    deadline = time.monotonic() + 30
    while booted.query("pkg2", count, (schema,))[0]["n"] != 1 and time.monotonic() < deadline:
        time.sleep(0.5)
    now = datetime.datetime.now(datetime.timezone.utc)
    extra = dict(drop_tables_tables=["%s.t1" % schema], drop_tables_hosts="pkg1:pkg2", drop_tables_confirm=True,
                 drop_tables_window="%s-%s" % ((now - datetime.timedelta(hours=1)).strftime("%H:00"),
                                               (now + datetime.timedelta(hours=2)).strftime("%H:00")))
    code, out = playbook(booted.booted_inventory, "drop_table.yml", extra, check=True)
    assert code == 0, out[-3000:]
    assert [booted.query(h, count, (schema,))[0]["n"] for h in ("pkg1", "pkg2")] == [1, 1]
    code, out = playbook(booted.booted_inventory, "drop_table.yml", extra)
    assert code == 0, out[-3000:]
    deadline = time.monotonic() + 30
    while booted.query("pkg2", count, (schema,))[0]["n"] != 0 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert [booted.query(h, count, (schema,))[0]["n"] for h in ("pkg1", "pkg2")] == [0, 0]
    state = booted.query("pkg2", "SHOW SLAVE STATUS")[0]
    assert (state["Slave_IO_Running"], state["Slave_SQL_Running"]) == ("Yes", "Yes")


def test_convert_tables_on_a_standalone_host(booted):
    """convert_tables.yml turns a MyISAM table of pkg3 (MariaDB 11.8 from its package) into InnoDB: check
    mode changes nothing, the run converts with its rows kept, a second run has nothing to do."""
    schema = "dbfleet_it_booted"
    booted.query("pkg3", "CREATE DATABASE IF NOT EXISTS %s" % schema)
    booted.query("pkg3", "DROP TABLE IF EXISTS %s.m1" % schema)
    booted.query("pkg3", "CREATE TABLE %s.m1 (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=MyISAM" % schema)
    booted.query("pkg3", "INSERT INTO %s.m1 VALUES (1, 'a'), (2, 'b'), (3, 'c')" % schema)
    engine = "SELECT ENGINE AS e FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 'm1'"
    now = datetime.datetime.now(datetime.timezone.utc)
    extra = dict(convert_tables_tables=["%s.m1" % schema], convert_tables_hosts="pkg3",
                 convert_tables_window="%s-%s" % ((now - datetime.timedelta(hours=1)).strftime("%H:00"),
                                                  (now + datetime.timedelta(hours=2)).strftime("%H:00")))
    code, out = playbook(booted.booted_inventory, "convert_tables.yml", extra, check=True)
    assert code == 0, out[-3000:]
    assert booted.query("pkg3", engine, (schema,))[0]["e"] == "MyISAM"
    code, out = playbook(booted.booted_inventory, "convert_tables.yml", extra)
    assert code == 0, out[-3000:]
    assert booted.query("pkg3", engine, (schema,))[0]["e"] == "InnoDB"
    assert booted.query("pkg3", "SELECT COUNT(*) AS n FROM %s.m1" % schema)[0]["n"] == 3
    code, out = playbook(booted.booted_inventory, "convert_tables.yml", extra)
    assert code == 0, out[-3000:]
    assert recap(out)["pkg3"]["changed"] == 0, out[-3000:]


def test_flush_neighbors_says_what_it_sees_of_the_storage(booted, tmp_path):
    """From inside the machine the datadir's mount is the host's disk under the machine's root: the role names
    that device and, where its flags say nothing (virtio-blk here), says it cannot tell and leaves the server alone."""
    result = module_results(booted.booted_inventory, ["pkg1"], "dbfleet.innodb.desired_settings", tmp_path,
                            "role=flush_neighbors")["pkg1"]["desired"]
    storage = result["storage"]
    root = os.path.join(booted.lab_dir, "fleet", "pkg1", "root")
    seen_here = os.stat(os.path.join(root, "var", "lib", "mysql"))
    assert storage["mount"]["maj_min"] == "%d:%d" % (os.major(seen_here.st_dev), os.minor(seen_here.st_dev))
    assert storage["mount"]["root"] == os.path.realpath(root)
    assert storage["reasons"][0].startswith("/var/lib/mysql is on /")
    if storage["storage_class"] == "unknown":
        assert any("no trustworthy answer" in r for r in storage["reasons"]), storage["reasons"]
        assert result["left_alone"] is True and result["settings"] == {}
    assert result["dropin_file"] == "/etc/mysql/mariadb.conf.d/60-dbfleet-flush_neighbors.cnf"
