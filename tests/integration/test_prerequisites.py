"""playbooks/prerequisites.yml on an SSH fleet host whose Python starts without PyMySQL.

- pip method into a fresh virtualenv on the host (a host without PyPI: a wheel directory): check mode
  says it would install and installs nothing; the real run installs; a second run changes nothing;
  then a collection module runs with that interpreter.
- package method for the system Python (Debian family here): check mode only, as the run would install
  python3-pymysql system-wide on a machine the fleet hosts share.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)
HOST = "db1"
SYSTEM_PYTHON = "/usr/bin/python3"

pytestmark = pytest.mark.fleet


def ansible(fleet, *args, interpreter, check=False):
    cmd = [os.path.join(BIN, args[0]), "-i", fleet.inventory, "-l", HOST,
           "-e", "ansible_python_interpreter=" + interpreter] + list(args[1:]) + (["--check"] if check else [])
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".collections"), ANSIBLE_NOCOLOR="1")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False, cwd=ROOT, env=env)


def recap(proc):
    line = [out for out in proc.stdout.splitlines() if out.startswith(HOST + " ") and "ok=" in out][-1]
    return dict(part.split("=") for part in line.split(":", 1)[1].split())


def has(python, library):
    return subprocess.run([python, "-c", "import " + library], capture_output=True, check=False).returncode == 0


@pytest.fixture(scope="module")
def wheels(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheels")
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "-d", str(out),
                    "PyMySQL==1.2.4", "cryptography"], check=True, timeout=300)
    return str(out)


def test_pip_into_a_virtualenv_without_pymysql(fleet, tmp_path, wheels):
    venv = tmp_path / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    assert not has(python, "pymysql") and not has(python, "cryptography")
    playbook = ("ansible-playbook", "playbooks/prerequisites.yml", "-e", "prerequisites_pip_find_links=" + wheels)

    check = ansible(fleet, *playbook, interpreter=python, check=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert recap(check)["changed"] == "1", check.stdout
    assert not has(python, "pymysql"), "check mode installed something"

    run = ansible(fleet, *playbook, interpreter=python)
    assert run.returncode == 0, run.stdout + run.stderr
    assert recap(run)["changed"] == "1" and recap(run)["failed"] == "0", run.stdout
    assert has(python, "pymysql") and has(python, "cryptography")

    again = ansible(fleet, *playbook, interpreter=python)
    assert again.returncode == 0 and recap(again)["changed"] == "0", again.stdout

    # A collection module now runs on the host with that interpreter (over SSH, logging in to db1's server).
    facts = ansible(fleet, "ansible", HOST, "-m", "dbfleet.innodb.server_facts", interpreter=python)
    assert facts.returncode == 0 and "SUCCESS" in facts.stdout, facts.stdout + facts.stderr


def test_package_method_check_mode_for_the_system_python(fleet):
    assert not has(SYSTEM_PYTHON, "pymysql"), "the system Python already has PyMySQL: this check proves nothing"
    check = ansible(fleet, "ansible-playbook", "playbooks/prerequisites.yml", "-v", interpreter=SYSTEM_PYTHON,
                    check=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert recap(check)["changed"] == "1", check.stdout
    assert "Install the distribution packages" in check.stdout
    assert not has(SYSTEM_PYTHON, "pymysql")


def test_bad_method_is_named_before_anything(fleet):
    proc = ansible(fleet, "ansible-playbook", "playbooks/prerequisites.yml", "-e", "prerequisites_method=brew",
                   interpreter=SYSTEM_PYTHON)
    assert proc.returncode != 0 and "prerequisites_method" in proc.stdout, proc.stdout
    assert recap(proc)["changed"] == "0"
