"""pkg5: MySQL 8.0.33 (the lab's tarball, with the memcached plugin) under a unit written the way Oracle's Debian
package writes its own (mysql.service, Type=forking, mysqld --daemonize), with that package's option layout and
root's auth_socket login, in a booted Debian 12 machine reached over SSH as deploy with become
(lab/dbfleet_lab/machines.py BOOKWORM_MYSQL80, docs/hosts.md).

- what the collection finds there by itself (server_facts): the socket, the drop-in directory, the unit, the login;
  the inventory tells none of them;
- site.yml on it: check mode exact, then applied, then idempotent (its runs over all the booted hosts, shared with
  test_booted_hosts.py: dbfleet_testing.booted_site).

The start-failure fault test on pkg5 is tests/integration/fleet/faults/test_restart_systemd.py (pkg5 among its hosts).
"""
import json
import os
import sys

import pytest
import yaml

from dbfleet_testing.lab import REPO as ROOT
sys.path.insert(0, os.path.join(ROOT, "lab"))

from dbfleet_testing.lab import LabHandle, default_lab_dir, lab_py  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_testing.lab import inside as inside_host  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_testing.booted_site import SITE_DROPINS  # noqa: E402  pylint: disable=wrong-import-position

HOST = "pkg5"
TOLD_PREFIXES = ("dbfleet_login_", "dbfleet_option_", "dbfleet_restart_", "dbfleet_service_name", "dbfleet_config_file")
DROPIN = "/etc/mysql/mysql.conf.d/60-dbfleet-adaptive_hash.cnf"


@pytest.fixture(scope="module")
def booted():
    """pkg5 booted (left as found: stopped again at the end when this module booted it)."""
    lab_dir = default_lab_dir()
    status = json.loads(lab_py("--mode", "ssh", "--lab-dir", lab_dir, "status", "--json").stdout)
    rows = {r["host"]: r for r in status["hosts"]}
    brought_up = rows.get(HOST, {}).get("state") != "up"
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "up", HOST)
    handle = LabHandle("ssh", lab_dir)
    handle.booted_inventory = json.loads(handle.run("status", "--json").stdout)["booted_inventory"]
    yield handle
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "down", HOST)


def inside(lab, *argv):
    """A command inside pkg5 (dbfleet_testing.lab.inside)."""
    return inside_host(lab, HOST, *argv)


def test_the_collection_finds_the_vendor_layout_by_itself(booted, booted_facts):
    with open(booted.booted_inventory, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    from dbfleet_lab.inventory import hosts_in  # pylint: disable=import-outside-toplevel
    host_vars = hosts_in(data)[HOST]
    told = [k for k in list(host_vars) + list(data["all"]["vars"]) if k.startswith(TOLD_PREFIXES)]
    assert told == [], told
    # The vendor's unit as systemd runs it: forking, its main PID the daemonized tarball mysqld.
    text = inside(booted, "systemctl", "show", "-p", "Type", "-p", "MainPID", "-p", "ExecStartPre", "mysql.service")
    shown = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert shown["Type"] == "forking" and "mysql-systemd-start" in shown["ExecStartPre"], shown
    assert inside(booted, "readlink", "/proc/%s/exe" % shown["MainPID"]).strip() == "/usr/local/mysql/bin/mysqld"
    assert os.path.exists(os.path.join(booted.lab_dir, "fleet", HOST, "root", "usr/local/mysql/lib/plugin/libmemcached.so"))

    facts = booted_facts[HOST]
    assert (facts["flavor"], facts["version_text"], facts["runs_as_user"]) == ("mysql", "8.0.33", "mysql"), facts
    # The package's layout: /etc/mysql/my.cnf -> mysql.cnf, whose last !includedir is mysql.conf.d.
    assert "/etc/mysql/my.cnf" in facts["option_files"]
    assert facts["dropin_dir"] == "/etc/mysql/mysql.conf.d", facts["dropin_dir_source"]
    assert facts["unit"] == "mysql" and int(shown["MainPID"]) == facts["process"]["pid"], (facts["unit_source"], shown)
    # Logged in as root through the socket the client groups name: root's auth_socket login, no password anywhere.
    assert facts["socket"] == "/var/run/mysqld/mysqld.sock" == booted.query(HOST, "SELECT @@socket AS s")[0]["s"]
    assert facts["login_socket_source"] == "socket of the client groups in /etc/mysql/my.cnf", facts
    assert booted.query(HOST, "SELECT plugin FROM mysql.user WHERE user = 'root' AND host = 'localhost'") == \
        [{"plugin": "auth_socket"}]


def test_site_check_mode_exact_then_applied_then_idempotent(site_runs):
    """site.yml's runs over the booted hosts (dbfleet_testing.booted_site, shared with test_booted_hosts.py), for
    pkg5: check mode says what the run changes and changes nothing, the run changes that, a second run and a second
    check mode run change nothing."""
    assert site_runs.ahi["before"][HOST] == 0
    assert all(HOST in site_runs.changed[run] for run in site_runs.changed), site_runs.output
    checked = site_runs.changed["checked"][HOST]
    assert checked >= 2                     # the drop-in and the runtime value
    assert site_runs.ahi["checked"][HOST] == 0
    assert SITE_DROPINS[HOST] == DROPIN and not site_runs.dropin_after_check[HOST]
    assert site_runs.changed["applied"][HOST] == checked
    assert site_runs.ahi["applied"][HOST] == 1
    # The server reads the role's file: its own option-file reader prints it among the [mysqld] options.
    assert "--innodb_adaptive_hash_index=ON" in site_runs.print_defaults[HOST]
    assert site_runs.changed["again"][HOST] == 0, site_runs.output["again"]
    assert site_runs.changed["checked_again"][HOST] == 0, site_runs.output["checked_again"]
