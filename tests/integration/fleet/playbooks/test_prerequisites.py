"""playbooks/prerequisites.yml on an SSH fleet host whose Python starts without PyMySQL.

- pip method into a fresh virtualenv on the host (a host without PyPI: a wheel directory): check mode
  says it would install and installs nothing; the real run installs; a second run changes nothing;
  then a collection module runs with that interpreter.
- package method for the system Python (Debian family here): check mode only, as the run would install
  python3-pymysql system-wide on a machine the fleet hosts share.
On a booted db1 (DBFLEET_FLEET_BOOTED=1) the virtualenv and the wheels are in its machine, and its system Python
lacks cryptography (it has its PyMySQL package).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from dbfleet_testing.lab import REPO as ROOT
from dbfleet_testing.runs import env
BIN = os.path.dirname(sys.executable)
HOST = "db1"
SYSTEM_PYTHON = "/usr/bin/python3"


def ansible(fleet, *args, interpreter, check=False):
    cmd = [os.path.join(BIN, args[0]), "-i", fleet.inventory, "-l", HOST,
           "-e", "ansible_python_interpreter=" + interpreter] + list(args[1:]) + (["--check"] if check else [])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, cwd=ROOT, env=env())


def recap(proc):
    line = [out for out in proc.stdout.splitlines() if out.startswith(HOST + " ") and "ok=" in out][-1]
    return dict(part.split("=") for part in line.split(":", 1)[1].split())


def has(fleet, python, library):
    """Whether python on HOST imports library (on a booted HOST, inside its machine)."""
    machine = fleet.machine(HOST)
    if machine is not None:
        return machine.inside([python, "-c", "import " + library], check=False).returncode == 0
    return subprocess.run([python, "-c", "import " + library], capture_output=True, check=False).returncode == 0


def on_host(fleet, path):
    """Where a path of HOST is from this machine: the same path, or under a booted HOST's root."""
    machine = fleet.machine(HOST)
    return machine.host_path(path) if machine is not None else path


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d", str(out),
                    "PyMySQL==1.2.4", "cryptography"], check=True, timeout=300)
    return str(out)


@pytest.fixture
def venv_and_wheels(fleet, tmp_path, wheels):
    """A fresh virtualenv and the wheel directory on HOST (a booted HOST: made in its machine's root, its Python being
    this machine's version), removed again at the end."""
    if fleet.machine(HOST) is None:
        yield str(tmp_path / "venv"), wheels
        return
    assert fleet.machine(HOST).leader(), "%s is not booted: start the fleet with `make fleet-up`" % HOST
    venv, where = "/opt/dbfleet-it-prereq-venv", "/opt/dbfleet-it-prereq-wheels"
    shutil.rmtree(on_host(fleet, venv), ignore_errors=True)
    shutil.rmtree(on_host(fleet, where), ignore_errors=True)
    shutil.copytree(wheels, on_host(fleet, where))
    try:
        yield venv, where
    finally:
        shutil.rmtree(on_host(fleet, venv), ignore_errors=True)
        shutil.rmtree(on_host(fleet, where), ignore_errors=True)


def test_pip_into_a_virtualenv_without_pymysql(fleet, venv_and_wheels):
    venv, wheels = venv_and_wheels
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", on_host(fleet, venv)], check=True, timeout=120)
    python = os.path.join(venv, "bin", "python")
    assert not has(fleet, python, "pymysql") and not has(fleet, python, "cryptography")
    playbook = ("ansible-playbook", "playbooks/prerequisites.yml", "-e", "prerequisites_pip_find_links=" + wheels)

    check = ansible(fleet, *playbook, interpreter=python, check=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert recap(check)["changed"] == "1", check.stdout
    assert not has(fleet, python, "pymysql"), "check mode installed something"

    run = ansible(fleet, *playbook, interpreter=python)
    assert run.returncode == 0, run.stdout + run.stderr
    assert recap(run)["changed"] == "1" and recap(run)["failed"] == "0", run.stdout
    assert has(fleet, python, "pymysql") and has(fleet, python, "cryptography")

    again = ansible(fleet, *playbook, interpreter=python)
    assert again.returncode == 0 and recap(again)["changed"] == "0", again.stdout

    # A collection module now runs on the host with that interpreter (over SSH, logging in to db1's server).
    facts = ansible(fleet, "ansible", HOST, "-m", "dbfleet.innodb.server_facts", interpreter=python)
    assert facts.returncode == 0 and "SUCCESS" in facts.stdout, facts.stdout + facts.stderr


def test_package_method_check_mode_for_the_system_python(fleet):
    # The lab machine's system Python lacks PyMySQL; a booted host's has it (its package) but not cryptography.
    missing = [lib for lib in ("pymysql", "cryptography") if not has(fleet, SYSTEM_PYTHON, lib)]
    assert missing, "the system Python already has every library: this check proves nothing"
    check = ansible(fleet, "ansible-playbook", "playbooks/prerequisites.yml", "-v", interpreter=SYSTEM_PYTHON,
                    check=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert recap(check)["changed"] == "1", check.stdout
    assert [lib for lib in ("pymysql", "cryptography") if not has(fleet, SYSTEM_PYTHON, lib)] == missing
    assert "Install the distribution packages" in check.stdout


def test_bad_method_is_named_before_anything(fleet):
    proc = ansible(fleet, "ansible-playbook", "playbooks/prerequisites.yml", "-e", "prerequisites_method=brew",
                   interpreter=SYSTEM_PYTHON)
    # The inputs are checked where the play's hosts are worked out: the run stops before any task, naming the input.
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert "bad input, nothing was run: value of prerequisites_method must be one of: auto, package, pip, got: brew" \
        in said, said
    assert "TASK [" not in proc.stdout, proc.stdout
