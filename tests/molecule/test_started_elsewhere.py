"""The flavor scenarios start each host away from what the roles want (molecule/_lab/prepare.yml):
the start differs from the wanted values, and the converged host runs the wanted ones, so the
scenario fails when a role does nothing."""
import json
import os

import pytest

from dbhelpers import global_value

PREPARED = ('mysql80', 'mariadb', 'mysql57', 'lts')
pytestmark = pytest.mark.skipif(os.environ.get('MOLECULE_SCENARIO_NAME') not in PREPARED,
                                reason='this scenario has its own start state')


@pytest.fixture
def start(host, hostvars):
    path = os.path.join(os.environ['DBFLEET_LAB_DIR'], 'molecule-start-%s.json' % hostvars['inventory_hostname'])
    assert os.path.exists(path), 'molecule/_lab/prepare.yml did not run for this scenario (%s missing)' % path
    with open(path) as handle:
        return json.load(handle)


def _on(value):
    return str(value).upper() in ('ON', '1', 'TRUE', 'YES')


def test_adaptive_hash_started_elsewhere_and_was_changed(db, hostvars, start):
    wanted = bool(hostvars['adaptive_hash_enabled'])
    assert _on(start['innodb_adaptive_hash_index']) is not wanted
    assert _on(global_value(db, 'innodb_adaptive_hash_index')) is wanted


def test_flush_neighbors_started_elsewhere_and_was_changed(db, hostvars, start):
    wanted = 0 if hostvars['flush_neighbors_storage_class'] == 'ssd' else 1
    assert int(start['innodb_flush_neighbors']) != wanted
    assert int(global_value(db, 'innodb_flush_neighbors')) == wanted
