"""The flavor scenarios start each host away from what the roles want (molecule/_lab/prepare.yml):
the start differs from the wanted values, and the converged host runs the wanted ones, so the
scenario fails when a role does nothing. The flavor scenarios (flavors, mysql57), whose prepare is
molecule/_lab/prepare.yml, name this file in their verifier."""
import json
import os

import pytest

from dbhelpers import global_value


@pytest.fixture
def start(hostvars):
    path = os.path.join(os.environ['DBFLEET_LAB_DIR'], 'molecule-start.json')
    assert os.path.exists(path), 'molecule/_lab/prepare.yml did not run for this scenario (%s missing)' % path
    with open(path) as handle:
        started = json.load(handle)
    assert hostvars['inventory_hostname'] in started, 'prepare did not start %s away: %s' % (
        hostvars['inventory_hostname'], path)
    return started[hostvars['inventory_hostname']]


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
