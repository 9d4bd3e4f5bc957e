"""dbfleet_restart_method: service on booted hosts: the restart goes through systemd, and a server that refuses
to start is a handled fault (real systemd, real packaged servers, real SSH with become).

The hosts are the booted machines of the SSH fleet, pkg1 -> pkg2 (MariaDB 10.11, the distribution's package) and pkg5
(MySQL 8.0.33's tarball under a unit written as Oracle's Debian package writes it), systemd-nspawn machines with the server
under systemd, read from their inventory: inventories/booted/hosts.yml, or the file named by DBFLEET_BOOTED_INVENTORY.
The runs are playbooks/rolling_restart.yml, as a user would run it; what they did is read from systemd and the
servers (tests/integration/playbooks/systemd_state.yml, one run for all hosts):

- a restart through systemd gives every host a new main PID and a new InvocationID, and the gates pass;
- a drop-in the server refuses (a variable its version lacks) on one host of each flavor stops that run before the
  next host, names the refused file:line and the server's message, is put back (removed: it is new since the last
  start), and the server runs again, with the rows as they were and, on a replica, replication running.
"""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from conftest import _default_lab_dir, lab_py  # noqa: E402  pylint: disable=wrong-import-position

# The booted hosts of the SSH fleet (lab/dbfleet_lab/machines.py), or an inventory of other booted hosts.
HOSTS = ('pkg1', 'pkg2', 'pkg5')
INVENTORY = [os.environ.get('DBFLEET_BOOTED_INVENTORY')]
# A line each flavor refuses at start: a variable the version lacks (MySQL's redo log capacity on MariaDB,
# MariaDB's log file buffering on MySQL).
REFUSED = {'mariadb': 'innodb_redo_log_capacity = 1G', 'mysql': 'innodb_log_file_buffering = ON'}
FAULT_DROPIN = '60-dbfleet-fault.cnf'

pytestmark = pytest.mark.fleet


def env():
    return dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
                ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.collections'), ANSIBLE_NOCOLOR='1',
                ANSIBLE_FORCE_COLOR='0', PATH=os.path.join(ROOT, '.venv', 'bin') + ':' + os.environ['PATH'])


def flat(text):
    return ' '.join(text.split())


def ansible(args, timeout=600):
    proc = subprocess.run(args, env=env(), capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def playbook(path, extra, limit=None):
    args = [os.path.join(ROOT, '.venv', 'bin', 'ansible-playbook'), '-i', INVENTORY[0], path, '-e', json.dumps(extra)]
    return ansible(args + (['--limit', limit] if limit else []))


def state(tmp_path, setup=False):
    """host -> what systemd_state.yml read: flavor, unit, role, channels, dropin_dir, dropins, unit_state, table."""
    out = str(tmp_path / ('state-%d.json' % len(os.listdir(str(tmp_path)))))
    rc, text = playbook(os.path.join(ROOT, 'tests', 'integration', 'playbooks', 'systemd_state.yml'),
                        dict(systemd_state_out=out, systemd_state_setup=setup))
    assert rc == 0, text
    with open(out, encoding='utf-8') as handle:
        return json.load(handle)


@pytest.fixture(scope='module')
def booted(tmp_path_factory):
    """The booted hosts (pkg1 -> pkg2 booted when down, and stopped again at the end), their first state."""
    brought_up = False
    lab_dir = _default_lab_dir()
    if not INVENTORY[0]:
        status = json.loads(lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'status', '--json').stdout)
        rows = dict((r['host'], r) for r in status['hosts'])
        brought_up = any(rows.get(h, {}).get('state') != 'up' for h in HOSTS)
        if brought_up:
            lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'up', *HOSTS)
        INVENTORY[0] = json.loads(lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'status', '--json').stdout)[
            'booted_inventory']
    tmp = tmp_path_factory.mktemp('systemd')
    first = state(tmp, setup=True)
    assert first and all(h['unit_state'].get('ActiveState') == 'active' for h in first.values()), first
    yield tmp, first
    if brought_up:
        lab_py('--mode', 'ssh', '--lab-dir', lab_dir, 'down', *HOSTS)


def unit_file(unit):
    return unit if unit.endswith('.service') else unit + '.service'


def test_restart_through_systemd_gives_a_new_process_and_invocation(booted):
    tmp, before = booted
    rc, out = playbook(os.path.join(ROOT, 'playbooks', 'rolling_restart.yml'), dict(rolling_restart_all=True))
    assert rc == 0, out
    after = state(tmp)
    for host, was in before.items():
        now = after[host]
        assert now['unit_state']['ActiveState'] == 'active', (host, now)
        assert now['unit_state']['MainPID'] != was['unit_state']['MainPID'], (host, was, now)
        assert now['unit_state']['InvocationID'] != was['unit_state']['InvocationID'], (host, was, now)
        assert '%s restarted: main PID %s -> %s' % (unit_file(was['unit']), was['unit_state']['MainPID'],
                                                    now['unit_state']['MainPID']) in flat(out), out
        assert now['channels'] == was['channels'] and all(c == [True, True] for c in now['channels']), (host, now)


def test_a_refused_dropin_is_put_back_and_the_run_stops_naming_it(booted):
    tmp, dummy = booted
    before = state(tmp)
    # One host of each flavor and version, a replica where there is one.
    chosen = {}
    for host, facts in sorted(before.items(), key=lambda item: (item[1]['role'] != 'replica', item[0])):
        chosen.setdefault((facts['flavor'], facts['unit']), host)
    for host in sorted(chosen.values()):
        facts = before[host]
        dropin = '%s/%s' % (facts['dropin_dir'], FAULT_DROPIN)
        refused = REFUSED[facts['flavor']]
        rc, out = ansible([os.path.join(ROOT, '.venv', 'bin', 'ansible'), host, '-i', INVENTORY[0], '-m',
                           'ansible.builtin.copy', '-a', json.dumps(dict(dest=dropin, mode='0644',
                                                                         content='[mysqld]\n%s\n' % refused))])
        assert rc == 0, out
        rc, out = playbook(os.path.join(ROOT, 'playbooks', 'rolling_restart.yml'),
                           dict(rolling_restart_all=True, rolling_restart_hosts=host))
        text = flat(out)
        assert rc != 0, out
        assert '%s:2 (%s): unknown variable' % (dropin, refused) in text, out
        assert 'Put back: removed %s. Started again: yes, main PID' % dropin in text, out
        assert 'The run stopped at %s' % host in text, out
    after = state(tmp)
    for host in chosen.values():
        was, now = before[host], after[host]
        assert FAULT_DROPIN not in now['dropins'], (host, now)
        assert now['unit_state']['ActiveState'] == 'active', (host, now)
        assert now['unit_state']['MainPID'] not in ('0', was['unit_state']['MainPID']), (host, was, now)
        assert now['table'] == was['table'] and len(now['table']) == 2, (host, was, now)
        assert now['channels'] == was['channels'] and all(c == [True, True] for c in now['channels']), (host, now)
