"""The SSH fleet of the lab (lab.py --mode ssh): reachable over SSH, its inventory of db1-db4, replication (the local
lab's tests are local/lab/test_lab.py)."""
import os
import subprocess
import sys
import time

import yaml

from dbfleet_lab.inventory import hosts_in
from dbfleet_testing.lab import REPO
from dbfleet_testing.runs import env


def test_fleet_is_reachable_over_ssh(fleet):
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "-i", fleet.inventory, "all",
                           "-m", "ansible.builtin.setup", "-a", "filter=ansible_default_ipv4"],
                          cwd=REPO, env=env(), capture_output=True, text=True, check=False, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The hosts of the fleet's inventory (the booted machines, up for their tests, have an inventory of their own).
    with open(fleet.inventory, encoding="utf-8") as handle:
        listed = hosts_in(yaml.safe_load(handle))
    assert {"db1", "db2", "db3", "db4"} <= set(listed), sorted(listed)
    for host, row in fleet.hosts.items():
        if host not in listed:
            continue
        assert "%s | SUCCESS" % host in proc.stdout
        assert "address: %s" % row["address"] in proc.stdout


# What a user's inventory would not say of a host (the collection finds it, docs/hosts.md).
NOT_IN_A_USERS_INVENTORY = ("dbfleet_login_password", "dbfleet_login_user", "dbfleet_login_unix_socket",
                            "dbfleet_option_file", "dbfleet_option_dropin_dir", "dbfleet_restart_command",
                            "dbfleet_restart_method", "dbfleet_service_name")


def test_fleet_inventory_of_db1_to_db4(fleet):
    """Booted (DBFLEET_FLEET_BOOTED=1 at up): reached as deploy with become, and nothing a user's inventory would
    not say; as tarball servers in namespaces: root, and lab.py restarts them (dbfleet_restart_command)."""
    with open(fleet.inventory, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    hostvars = {name: values for group in data["all"]["children"].values()
                for name, values in ((group or {}).get("hosts") or {}).items() if values}
    for host in ("db1", "db2", "db3", "db4"):
        values = dict(data["all"]["vars"], **hostvars[host])
        if fleet.booted(host):
            assert (values["ansible_user"], values["ansible_become"]) == ("deploy", True), values
            assert not [k for k in NOT_IN_A_USERS_INVENTORY if k in values], values
            assert fleet.hosts[host]["unit"] == ("mysql.service" if host in ("db1", "db2") else "mariadb.service")
        else:
            assert values["ansible_user"] == "root" and values["dbfleet_restart_command"][-2:] == ["restart", host]


def test_fleet_replicates(fleet):
    for replica, primary in (("db2", "db1"), ("db4", "db3")):
        assert fleet.hosts[replica]["replication"] == "IO Yes, SQL Yes", fleet.hosts[replica]
        assert fleet.query(replica, "SELECT @@global.read_only AS ro") == [{"ro": 1}]
        fleet.query(primary, "CREATE DATABASE IF NOT EXISTS lab_replication_check")
        try:
            deadline = time.monotonic() + 20
            while not fleet.query(replica, "SHOW DATABASES LIKE 'lab_replication_check'"):
                assert time.monotonic() < deadline, "%s did not receive a change made on %s" % (replica, primary)
                time.sleep(0.2)
        finally:
            fleet.query(primary, "DROP DATABASE IF EXISTS lab_replication_check")
