"""Fixtures for integration tests against the lab's real servers (lab/lab.py).

- ``lab`` (session): the local lab, brought up when one of its default hosts is down (and left
  running), and made a used one (``used_lab()``: playbooks/used_lab.yml, once per lab; before the first test
  of any session with local tests, ``used_lab_first``). ``lab.hosts`` maps host -> status row (``port``,
  ``socket``, ``version``, ``expected_flavor``, ``option_file``, ``dropin_dir``...), ``lab.connect(host)``
  opens a PyMySQL connection as the admin user, ``lab.run(...)`` runs lab.py for this lab.
- ``fleet`` (session): the SSH fleet (the tests under fleet/, each marked ``fleet`` by its place); brought up when it
  is down, and then stopped again at the end of the session. Deselect with ``-m "not fleet"`` (or run local/ alone).
- ``booted_machines`` (session): the SSH fleet's booted hosts pkg1-pkg5.

The tests are laid out by subject, local/<subject>/ and fleet/<subject>/ (docs/development.md); what they share is the
package dbfleet_testing beside this file, their subject's fixtures in the conftest.py of its directory.
DBFLEET_LAB_DIR chooses the lab directory, as for lab.py.
"""
import json
import os

import pytest

from dbfleet_testing import cpu_profile
from dbfleet_testing.lab import BOOTED_HOSTS, DEFAULT_HOSTS, LabHandle, default_lab_dir, lab_py, used_lab
from dbfleet_testing.layout import INTEGRATION, fleet_by_place, marker_mismatch


def pytest_configure(config):
    cpu_profile.register(config, default_lab_dir())   # DBFLEET_CPU_PROFILE=<path>: CPU per test (cpu_profile.py)
    config.addinivalue_line("markers", "fleet: needs the SSH fleet (lab.py --mode ssh up; root, network "
                                       "namespaces); every test under fleet/ has it, by its place")
    config.addinivalue_line("markers", "extended: a scenario `make test` already runs (a fault again on another flavor, "
                                       "or on the local lab what the SSH fleet's tests run); run by `make "
                                       "test-extended`, not by `make test` (its 35-minute budget)")
    config.addinivalue_line("markers", "own_lab: a local test that uses no server of the shared lab (a private lab of "
                                       "its own on its own ports, or none): `make test` runs these beside the "
                                       "shared lab's tests, after Molecule")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Local vs fleet by directory: every test under fleet/ is marked fleet here, by its place (before `-m` selects:
    tests/run-all.sh and the Makefile select by marker), none of local/ may be; a mismatch stops the collection,
    naming the tests."""
    for item in items:
        if fleet_by_place(os.path.relpath(str(item.fspath), INTEGRATION)) and not item.get_closest_marker("fleet"):
            item.add_marker(pytest.mark.fleet)
    wrong = sorted(set(filter(None, (marker_mismatch(os.path.relpath(str(item.fspath), INTEGRATION),
                                                     item.get_closest_marker("fleet") is not None)
                                     for item in items))))
    if wrong:
        raise pytest.UsageError("integration tests in the wrong place:\n  " + "\n  ".join(wrong))
    # The modules with tests that run jobs inside the execution environment image (fixture `image`) run last: make test
    # builds the image beside the lab's start and the first tests (dbfleet_testing.awx_runner.wait_for_image_build).
    last = set(str(item.fspath) for item in items if "image" in getattr(item, "fixturenames", ()))
    items[:] = ([item for item in items if str(item.fspath) not in last] +
                [item for item in items if str(item.fspath) in last])


@pytest.fixture(scope="session")
def lab():
    """The local lab, up (lab.py up brings back any server left down) and used (used_lab())."""
    lab_dir = default_lab_dir()
    status = json.loads(lab_py("--lab-dir", lab_dir, "status", "--json").stdout)
    wanted = [r for r in status["hosts"] if r["host"] in DEFAULT_HOSTS]
    if any(row["state"] != "up" for row in wanted):
        lab_py("--lab-dir", lab_dir, "up")
    handle = LabHandle("local", lab_dir)
    used_lab(handle)
    return handle


@pytest.fixture(scope="session", autouse=True)
def used_lab_first(request):
    """A session with tests of the local lab (any not marked fleet) makes the lab a used one before its first test,
    also for the tests that read the lab's servers without the `lab` fixture (test_verify's own helpers)."""
    if any(item.get_closest_marker("fleet") is None and item.get_closest_marker("own_lab") is None
           for item in request.session.items):
        request.getfixturevalue("lab")


@pytest.fixture(scope="session")
def booted_machines():
    """The booted hosts, booted once for every module that uses them (left as found: stopped again at the end of
    the session when this booted them): a LabHandle of the SSH fleet with .booted_inventory."""
    lab_dir = default_lab_dir()
    status = json.loads(lab_py("--mode", "ssh", "--lab-dir", lab_dir, "status", "--json").stdout)
    rows = {r["host"]: r for r in status["hosts"]}
    brought_up = any(rows.get(h, {}).get("state") != "up" for h in BOOTED_HOSTS)
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "up", *BOOTED_HOSTS)
    handle = LabHandle("ssh", lab_dir)
    handle.booted_inventory = json.loads(handle.run("status", "--json").stdout)["booted_inventory"]
    yield handle
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "down", *BOOTED_HOSTS)


@pytest.fixture(scope="session")
def fleet():
    """The SSH fleet as found: the hosts that were down are brought up and stopped again at the end of the session,
    the ones a user (or an earlier run) left up are taken over and left up."""
    lab_dir = default_lab_dir()
    status = json.loads(lab_py("--mode", "ssh", "--lab-dir", lab_dir, "status", "--json").stdout)
    brought_up = [row["host"] for row in status["hosts"] if row["state"] != "up" or row["sshd"] != "up"]
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "up")
    yield LabHandle("ssh", lab_dir)
    if brought_up:
        lab_py("--mode", "ssh", "--lab-dir", lab_dir, "down", *brought_up)
