"""The collection on booted hosts shaped like production (lab/dbfleet_lab/machines.py, docs/hosts.md).

pkg1 -> pkg2: Debian 12 machines booted by systemd-nspawn, MariaDB 10.11 from Debian's packages under
systemd (mariadb.service), GTID replication. Ansible arrives over SSH as the unprivileged user `deploy`
with `become`; the inventory (inventories/booted/hosts.yml) names no path, unit, socket, restart command
or login. What the collection finds by itself is checked against what the package really has, read
inside the machine; then site.yml (check mode exact, applied, idempotent) and verify.yml run there.
"""
import json
import os
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "lab"))

from conftest import LabHandle, _default_lab_dir, lab_py  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.fleet

HOSTS = ("pkg1", "pkg2")
# Never set on a user's host by its inventory in this test: the collection must find them (or be told).
TOLD_PREFIXES = ("dbfleet_login_", "dbfleet_option_", "dbfleet_restart_", "dbfleet_service_name", "dbfleet_config_file")
# MariaDB 10.11 defaults innodb_adaptive_hash_index to OFF: ON is a real change.
SITE_VARS = {"adaptive_hash_enabled": True}


@pytest.fixture(scope="module")
def booted():
    """pkg1 and pkg2 booted (left as found: stopped again at the end when this module booted them)."""
    lab_dir = _default_lab_dir()
    status = json.loads(lab_py("--mode", "ssh", "--lab-dir", lab_dir, "status", "--json").stdout)
    rows = {r["host"]: r for r in status["hosts"]}
    brought_up = any(rows.get(h, {}).get("state") != "up" for h in HOSTS)
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "up", *HOSTS)
    handle = LabHandle("ssh", lab_dir)
    handle.booted_inventory = json.loads(handle.run("status", "--json").stdout)["booted_inventory"]
    yield handle
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "down", *HOSTS)


def env():
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
                ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".collections"), ANSIBLE_NOCOLOR="1",
                ANSIBLE_FORCE_COLOR="0", PATH=os.path.join(ROOT, ".venv", "bin") + ":" + os.environ["PATH"])


def playbook(inventory, name, extra=None, check=False):
    cmd = [os.path.join(ROOT, ".venv", "bin", "ansible-playbook"), "-i", inventory,
           os.path.join(ROOT, "playbooks", name)]
    if extra:
        cmd += ["-e", json.dumps(extra)]
    if check:
        cmd.append("--check")
    proc = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def recap(output):
    """{host: {ok, changed, failed, ...}} from the PLAY RECAP lines."""
    counts = {}
    for line in output.splitlines():
        parts = line.split(":", 1)
        if len(parts) == 2 and parts[0].strip() in HOSTS and "changed=" in parts[1]:
            counts[parts[0].strip()] = dict((k, int(v)) for k, v in (f.split("=") for f in parts[1].split()))
    return counts


def module_result(inventory, host, module, tmp_path, args=""):
    """One ad-hoc module run through the inventory (SSH as deploy, become): its result dict (ansible --tree)."""
    tree = tmp_path / ("tree-" + host)
    proc = subprocess.run([os.path.join(ROOT, ".venv", "bin", "ansible"), "-i", inventory, host, "-m", module,
                           "-a", args, "-t", str(tree)], env=env(), capture_output=True, text=True, timeout=300,
                          cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(tree / host, encoding="utf-8") as handle:
        return json.load(handle)


def inside(lab, host, *argv):
    """A command inside the booted machine (nsenter at its PID 1), as the package's files really are."""
    with open(os.path.join(lab.lab_dir, "fleet", host, "nspawn.pid"), encoding="utf-8") as handle:
        nspawn = handle.read().strip()
    with open("/proc/%s/task/%s/children" % (nspawn, nspawn), encoding="utf-8") as handle:
        leader = handle.read().split()[0]
    return subprocess.run(["nsenter", "-t", leader, "-a"] + list(argv), capture_output=True, text=True,
                          check=True, timeout=60).stdout


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


def test_what_the_collection_finds_is_what_the_package_has(booted, tmp_path):
    for host in HOSTS:
        facts = module_result(booted.booted_inventory, host, "dbfleet.innodb.server_facts", tmp_path)["server_facts"]
        # The package's layout, read inside the machine: the last !includedir of /etc/mysql/my.cnf.
        includes = [line.split(None, 1)[1].strip().rstrip("/") for line in
                    inside(booted, host, "cat", "/etc/mysql/my.cnf").splitlines() if line.startswith("!includedir")]
        assert includes[-1] == "/etc/mysql/mariadb.conf.d"
        assert facts["dropin_dir"] == includes[-1], facts["dropin_dir_source"]
        assert "/etc/mysql/my.cnf" in facts["option_files"]
        # The unit systemd runs the server under, and its main PID is the process the facts read.
        unit = inside(booted, host, "systemctl", "show", "-p", "Id", "-p", "MainPID", "mariadb").split()
        assert "Id=mariadb.service" in unit
        assert "MainPID=%d" % facts["process"]["pid"] in unit
        assert facts["unit"] == "mariadb", facts["unit_source"]
        # Logged in as root through the socket the client files name (root's unix_socket login, no password).
        client_socket = [line.split("=", 1)[1].strip() for line in inside(
            booted, host, "cat", "/etc/mysql/mariadb.cnf").splitlines() if line.startswith("socket")]
        assert facts["socket"] == client_socket[-1] == "/run/mysqld/mysqld.sock"
        assert facts["login_socket_source"] == "socket of the client groups in /etc/mysql/my.cnf"
        assert facts["runs_as_user"] == "mysql"
        assert facts["flavor"] == "mariadb" and facts["version"][:2] == [10, 11]


def test_site_check_mode_exact_then_applied_then_idempotent(booted):
    before = {h: booted.query(h, "SELECT @@innodb_adaptive_hash_index AS v")[0]["v"] for h in HOSTS}
    assert before == {h: 0 for h in HOSTS}
    code, out = playbook(booted.booted_inventory, "site.yml", SITE_VARS, check=True)
    assert code == 0, out[-3000:]
    checked = recap(out)
    assert all(checked[h]["changed"] >= 2 for h in HOSTS), checked      # the drop-in and the runtime value
    assert {h: booted.query(h, "SELECT @@innodb_adaptive_hash_index AS v")[0]["v"] for h in HOSTS} == before
    dropin = "/etc/mysql/mariadb.conf.d/60-dbfleet-adaptive_hash.cnf"
    for host in HOSTS:
        assert not os.path.exists(os.path.join(booted.lab_dir, "fleet", host, "root", dropin.lstrip("/")))

    code, out = playbook(booted.booted_inventory, "site.yml", SITE_VARS)
    assert code == 0, out[-3000:]
    applied = recap(out)
    assert {h: applied[h]["changed"] for h in HOSTS} == {h: checked[h]["changed"] for h in HOSTS}, (checked, applied)
    for host in HOSTS:
        assert booted.query(host, "SELECT @@innodb_adaptive_hash_index AS v")[0]["v"] == 1
        text = inside(booted, host, "cat", dropin)
        assert "innodb_adaptive_hash_index = ON" in text
        # The server reads it: its own option-file reader prints it among the [mysqld] options.
        assert "--innodb_adaptive_hash_index=ON" in inside(booted, host, "my_print_defaults", "--mysqld")

    code, out = playbook(booted.booted_inventory, "site.yml", SITE_VARS)
    assert code == 0, out[-3000:]
    assert {h: recap(out)[h]["changed"] for h in HOSTS} == {h: 0 for h in HOSTS}, out[-3000:]
    code, out = playbook(booted.booted_inventory, "site.yml", SITE_VARS, check=True)
    assert code == 0 and {h: recap(out)[h]["changed"] for h in HOSTS} == {h: 0 for h in HOSTS}, out[-3000:]


def test_verify_both_modes(booted, tmp_path):
    # Host mode: the verify module on the host, logged in through the socket as root.
    code, out = playbook(booted.booted_inventory, "verify.yml",
                         dict(SITE_VARS, verify_report_dir=str(tmp_path / "host"), verify_fail_on_drift=True))
    assert code == 0, out[-3000:]
    with open(tmp_path / "host" / "verify.json", encoding="utf-8") as handle:
        report = json.load(handle)
    assert json.dumps(report).count('"pkg') >= 2
    # Controller mode reads no file of the host: it needs a login, told as a user would (vault / extra vars).
    creds = dict(dbfleet_login_user=booted.admin_user, dbfleet_login_password=booted.admin_password)
    code, out = playbook(booted.booted_inventory, "verify.yml",
                         dict(SITE_VARS, verify_mode="controller", verify_report_dir=str(tmp_path / "ctl"),
                              verify_fail_on_drift=True, **creds))
    assert code == 0, out[-3000:]
    assert booted.admin_password not in out
