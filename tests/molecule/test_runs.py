"""What each run of the scenario's converge playbook changed, task by task and host by host, as Ansible's junit callback
recorded it (the base config's JUNIT_OUTPUT_DIR; JUNIT_FAIL_ON_CHANGE records a changed task as a failure): the
check-mode run before converge named exactly the tasks, host by host, that the real run then changed, the real run
changed every host of the scenario (each starts away from what it converges to), and the idempotence run nothing.

The scenarios whose sequence is check, converge, idempotence name this file in their verifier. It reads the three
latest records of the converge playbook (Molecule's `check`, `converge` and `idempotence` steps run it, in that
order, and no other step does), once for the scenario: no host connection, no Ansible run.
"""
import glob
import os
import re
import xml.etree.ElementTree as ET

import pytest
import yaml

HOST = re.compile(r'^\[([^\]]+)\] ')


def _scenario():
    """The scenario's configuration as Molecule runs it (MOLECULE_FILE: molecule.yml merged over the base config)."""
    with open(os.environ['MOLECULE_FILE'], encoding='utf-8') as handle:
        return yaml.safe_load(handle)


def _converge_playbook():
    """The converge playbook's name as the junit callback names its records (the playbook file's, without .yml)."""
    config = _scenario()
    playbooks = (config.get('ansible') or config['provisioner'])['playbooks']
    return os.path.splitext(os.path.basename(playbooks['converge']))[0]


def changed_tasks(path):
    """The sorted names ("[host] play: task") of the tasks a run recorded as changed (a testcase with a failure)."""
    return sorted(case.get('name') for case in ET.parse(path).iter('testcase') if case.find('failure') is not None)


@pytest.fixture(scope='module')
def runs():
    """{step: changed tasks} of the check, converge and idempotence runs, oldest first."""
    playbook = _converge_playbook()
    records = sorted(glob.glob(os.path.join(os.environ['JUNIT_OUTPUT_DIR'], '%s-*.xml' % playbook)),
                     key=os.path.getmtime)
    assert len(records) >= 3, 'fewer than three runs of %s recorded in %s: %s' % (
        playbook, os.environ['JUNIT_OUTPUT_DIR'], records)
    return dict(zip(('check', 'converge', 'idempotence'), (changed_tasks(path) for path in records[-3:])))


def test_check_mode_named_exactly_what_converge_changed(runs):
    assert runs['check'] == runs['converge'], runs


def test_converge_changed_every_host(runs):
    hosts = sorted(set(HOST.match(name).group(1) for name in runs['converge']))
    assert hosts == sorted(platform['name'] for platform in _scenario()['platforms']), runs['converge']


def test_idempotence_changed_nothing(runs):
    assert runs['idempotence'] == []
