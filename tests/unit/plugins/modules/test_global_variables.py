# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The setter (global_variables) and the auditor (verdict.decide) agree on every value: what one refuses
the other reports as an error, and what one leaves alone the other finds in place."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import values
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verdict as audit_verdict
from ansible_collections.dbfleet.innodb.plugins.modules import global_variables

MYSQL80 = server_identity.ServerIdentity(flavors.MYSQL, (8, 0, 36), '8.0.36', None)
CHUNK = 128 << 20
RUNNING = {
    'innodb_io_capacity': '2048',
    'innodb_flush_neighbors': '0',
    'innodb_adaptive_hash_index': 'ON',
    'innodb_buffer_pool_size': str(1 << 30),
    'innodb_buffer_pool_chunk_size': str(CHUNK),
    'innodb_buffer_pool_instances': '1',
    'innodb_max_dirty_pages_pct': '90.000000',
    'innodb_adaptive_hash_index_parts': '8',
    'innodb_flush_method': 'O_DIRECT',
}
FILE = '/etc/mysql/conf.d/60-dbfleet.cnf:2 [mysqld]'


class FakeModule(object):
    def __init__(self, persist=False):
        self.params = dict(persist=persist, persist_only=False, resize_timeout=300)
        self.check_mode = True


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setattr(global_variables, 'global_variables', lambda conn, names=None: dict(RUNNING))
    monkeypatch.setattr(server_facts, 'variable_table', lambda conn, identity, names: ({}, None))


def setter(name, desired):
    """('error', message) or ('change', None) or ('same', None) from global_variables' plan."""
    plan, errors = global_variables._plan(FakeModule(), None, MYSQL80, {name: desired})
    if errors:
        return 'error', errors[0]
    return ('change' if plan[0]['change'] else 'same'), None


def auditor(name, desired):
    """verdict.decide's status for the same server, its option file saying what it runs."""
    resolved = values.resolve(name, MYSQL80, RUNNING).resolved
    variable = values.describe(resolved, MYSQL80, RUNNING[resolved])
    rounding = (str(CHUNK), '1') if resolved == 'innodb_buffer_pool_size' else None
    return audit_verdict.decide(desired, variable.kind, RUNNING[resolved], audit_verdict.Startup(RUNNING[resolved], FILE),
                                variable.dynamic, variable.choices, rounding=rounding, limits=variable.limits,
                                settable=(variable.settable, variable.reason or ''))


# (variable, desired as written, setter verdict, auditor status, fragment of the setter's message)
AGREEMENT = [
    ('innodb_io_capacity', '2K', 'same', audit_verdict.OK, None),
    ('innodb_io_capacity', 2048, 'same', audit_verdict.OK, None),
    ('innodb_io_capacity', '2 K', 'error', audit_verdict.ERROR, "innodb_io_capacity: '2 K' is not an integer"),
    ('innodb_io_capacity', 50, 'error', audit_verdict.ERROR, 'innodb_io_capacity: 50 is below the minimum 100'),
    ('innodb_io_capacity', '1.5K', 'error', audit_verdict.ERROR, 'is not an integer'),
    ('innodb_flush_neighbors', '1', 'change', audit_verdict.DRIFT_RUNTIME, None),
    ('innodb_flush_neighbors', 3, 'error', audit_verdict.ERROR, 'innodb_flush_neighbors: 3 is above the maximum 2'),
    ('innodb_adaptive_hash_index', 'y', 'same', audit_verdict.OK, None),
    ('innodb_adaptive_hash_index', 't', 'same', audit_verdict.OK, None),
    ('innodb_adaptive_hash_index', 'Yes', 'same', audit_verdict.OK, None),
    ('innodb_adaptive_hash_index', 'n', 'change', audit_verdict.DRIFT_RUNTIME, None),
    ('innodb_adaptive_hash_index', 'maybe', 'error', audit_verdict.ERROR, "'maybe' is not a boolean"),
    ('innodb_buffer_pool_size', '1000M', 'same', audit_verdict.OK, None),
    ('innodb_buffer_pool_size', '1G', 'same', audit_verdict.OK, None),
    ('innodb_buffer_pool_size', '2 G', 'error', audit_verdict.ERROR, "'2 G' is not a size"),
    ('innodb_buffer_pool_size', '2G', 'change', audit_verdict.DRIFT_RUNTIME, None),
    ('innodb_max_dirty_pages_pct', 90, 'same', audit_verdict.OK, None),
    ('innodb_max_dirty_pages_pct', '75.5', 'change', audit_verdict.DRIFT_RUNTIME, None),
    ('innodb_max_dirty_pages_pct', 'lots', 'error', audit_verdict.ERROR, "'lots' is not a number"),
    ('innodb_flush_method', 'o_direct', 'same', audit_verdict.OK, None),
    ('innodb_flush_method', 'fsync', 'error', audit_verdict.DRIFT_RUNTIME, 'innodb_flush_method is read-only'),
    ('innodb_flush_method', 'direct', 'error', audit_verdict.ERROR, "'direct' is not one of"),
]


@pytest.mark.parametrize('name, desired, set_verdict, audit_status, fragment', AGREEMENT,
                         ids=['%s=%r' % (a[0], a[1]) for a in AGREEMENT])
def test_setter_and_auditor_agree(server, name, desired, set_verdict, audit_status, fragment):
    verdict, message = setter(name, desired)
    status, notes = auditor(name, desired)
    assert (verdict, status) == (set_verdict, audit_status), (message, notes)
    if fragment:
        assert fragment in message
    if status == audit_verdict.ERROR:
        # The auditor names the same problem.
        assert message.split(': ', 1)[1] in notes[0]


def test_buffer_pool_below_one_chunk_is_refused_by_the_setter_and_drift_for_the_auditor(server):
    verdict, message = setter('innodb_buffer_pool_size', '64M')
    assert verdict == 'error' and 'a running server rounds it up to 134217728' in message
    status, notes = auditor('innodb_buffer_pool_size', '64M')
    assert status == audit_verdict.DRIFT_RUNTIME, notes


def test_unknown_names_are_named_with_a_close_match(server):
    verdict, message = setter('innodb_flush_neighbours', 1)
    assert verdict == 'error'
    assert "innodb_flush_neighbours: unknown variable 'innodb_flush_neighbours'" in message
    assert 'did you mean innodb_flush_neighbors?' in message
