"""The execution environment definition renders with ansible-builder, with the versions the project tests."""
import os
import re
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(ROOT, "tests"))
from venv_pins import venv_pins  # noqa: E402  pylint: disable=wrong-import-position


def _load(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    out = tmp_path_factory.mktemp("ee")
    proc = subprocess.run([os.path.join(BIN, "ansible-builder"), "create", "-f",
                           os.path.join(ROOT, "execution-environment.yml"), "-c", str(out),
                           "--output-filename", "Containerfile"],
                          capture_output=True, text=True, check=False, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def test_ee_pins_the_tested_ansible_core_and_runner():
    pins = venv_pins()
    deps = _load("execution-environment.yml")["dependencies"]
    assert deps["ansible_core"]["package_pip"] == "ansible-core==" + pins["ansible-core"]
    assert deps["ansible_runner"]["package_pip"] == "ansible-runner==" + pins["ansible-runner"]
    assert "PyMySQL==" + pins["pymysql"] in deps["python"]
    assert deps["galaxy"] == "collections/requirements.yml"


def test_rendered_context_installs_what_the_definition_says(context):
    pins = venv_pins()
    containerfile = (context / "Containerfile").read_text()
    assert 'ARG ANSIBLE_INSTALL_REFS="ansible-core==%s ansible-runner==%s"' % (
        pins["ansible-core"], pins["ansible-runner"]) in containerfile
    assert 'ARG PYCMD="/usr/bin/python3.11"' in containerfile
    assert "ansible-galaxy collection install" in containerfile
    # Project sync and the EE install the same collections.
    assert yaml.safe_load((context / "_build" / "requirements.yml").read_text()) == _load("collections/requirements.yml")
    assert "PyMySQL==%s" % pins["pymysql"] in (context / "_build" / "requirements.txt").read_text().splitlines()
    assert "openssh-clients [platform:rpm]" in (context / "_build" / "bindep.txt").read_text()


def test_collection_ee_file_has_only_what_ansible_builder_reads():
    meta = _load("meta/execution-environment.yml")
    assert set(meta["dependencies"]) == {"python", "system"}
    assert os.path.isfile(os.path.join(ROOT, meta["dependencies"]["python"]))
    assert os.path.isfile(os.path.join(ROOT, meta["dependencies"]["system"]))


def test_introspection_lists_the_collections_python_and_system_needs(tmp_path):
    # ansible-builder introspects installed collections as it does inside the build.
    link = tmp_path / "ansible_collections" / "dbfleet" / "innodb"
    link.parent.mkdir(parents=True)
    link.symlink_to(ROOT)
    proc = subprocess.run([os.path.join(BIN, "ansible-builder"), "introspect", "--sanitize", str(tmp_path)],
                          capture_output=True, text=True, check=True, timeout=60)
    found = yaml.safe_load(proc.stdout.split("\n", 1)[1])
    assert any(line.startswith("PyMySQL") and "dbfleet.innodb" in line for line in found["python"]), proc.stdout
    assert any(line.startswith("python3-PyMySQL [platform:rpm]") for line in found["system"]), proc.stdout


def test_project_sync_requirements_install_the_collection_from_git():
    req = _load("collections/requirements.yml")
    galaxy = _load("galaxy.yml")
    (entry,) = req["collections"]
    assert entry["type"] == "git"
    assert entry["name"].rstrip("/").removesuffix(".git") == galaxy["repository"].rstrip("/").removesuffix(".git")
    # The collection's own modules and roles need no other collection.
    assert not galaxy.get("dependencies")


def test_no_role_or_playbook_uses_the_mysql_collection():
    used = []
    for top in ("roles", "playbooks"):
        for base, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".yml", ".yaml")):
                    with open(os.path.join(base, name), encoding="utf-8") as handle:
                        text = handle.read()
                    if re.search(r"^\s*-?\s*(community|ansible)\.mysql\.\w+:", text, re.M):
                        used.append(os.path.join(base, name))
    assert not used, "these use the mysql collection, so galaxy.yml must depend on it: %s" % used
