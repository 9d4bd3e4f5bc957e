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
from ansible_collections.dbfleet.innodb.tests.unit.plugins.modules.module_result import module_result

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


# ---------------------------------------------------------------- main(): the SETs in the order given, on a fake server
class FakeServer(object):
    """A MySQL 8.0 server as main() sees it: SHOW GLOBAL VARIABLES and SET GLOBAL. Like MySQL, it lowers an
    innodb_io_capacity above innodb_io_capacity_max to the maximum (a warning, no error); fail_on: a SET it refuses."""

    def __init__(self, running, fail_on=None):
        self.running = dict(running, version='8.0.36', version_comment='MySQL Community Server - GPL')
        self.sets, self.fail_on = [], fail_on

    def show(self, conn, names=None):
        return dict((n, v) for n, v in self.running.items() if names is None or n in names)

    def execute(self, conn, sql, args=None):
        name = sql.split()[2]
        if name == self.fail_on:
            raise RuntimeError('(1231, "Variable %r can\'t be set")' % name)
        self.sets.append((name, args[0]))
        value = args[0]
        if name == 'innodb_io_capacity':
            value = min(int(value), int(self.running['innodb_io_capacity_max']))
        self.running[name] = str(value)

    def close(self):
        pass


@pytest.fixture
def fake_server(monkeypatch):
    """run(variables, check_mode=False, fail_on=None): main()'s result on a fake server that runs innodb_io_capacity
    200 and innodb_io_capacity_max 2000, and the server (its SETs in order)."""
    def run(capsys, variables, check_mode=False, fail_on=None):
        server = FakeServer(dict(RUNNING, innodb_io_capacity='200', innodb_io_capacity_max='2000',
                                 innodb_lru_scan_depth='1024'), fail_on)
        monkeypatch.setattr(global_variables.conn_utils, 'connect', lambda module: server)
        monkeypatch.setattr(global_variables.conn_utils, 'require_pymysql', lambda module: None)
        monkeypatch.setattr(global_variables, 'global_variables', server.show)
        monkeypatch.setattr(global_variables, 'execute', server.execute)
        monkeypatch.setattr(server_facts, 'variable_table', lambda conn, identity, names: ({}, None))
        args = dict(variables=variables, _ansible_check_mode=check_mode, _ansible_diff=True)
        return module_result(capsys, global_variables.main, args), server
    return run


RAISE = dict(innodb_io_capacity_max=4000, innodb_io_capacity=3000)     # the maximum first: the order that works


def test_variables_are_set_in_the_order_given_and_check_mode_says_that_order(capsys, fake_server):
    predicted, server = fake_server(capsys, RAISE, check_mode=True)
    assert server.sets == [] and predicted['changed'] is True, predicted
    assert predicted['order'] == ['innodb_io_capacity_max', 'innodb_io_capacity']
    assert predicted['diff']['after'] == {'innodb_io_capacity_max': '4000', 'innodb_io_capacity': '3000'}
    done, server = fake_server(capsys, RAISE)
    assert done['_rc'] == 0 and done['changed'] is True, done
    assert server.sets == [('innodb_io_capacity_max', 4000), ('innodb_io_capacity', 3000)]
    assert done['order'] == predicted['order'] and done['diff'] == predicted['diff']
    assert done['variables']['innodb_io_capacity'] == dict(resolved_name='innodb_io_capacity', desired=3000,
                                                           before='200', after='3000', changed=True)


def test_the_other_order_is_kept_too_and_a_set_the_server_did_not_apply_fails_naming_what_was_set(capsys, fake_server):
    """The capacity first: the module does not reorder (the caller's order is the order); the fake server, like MySQL,
    keeps the capacity at the running maximum, and the read-back fails the task naming the variable."""
    out, server = fake_server(capsys, dict(innodb_lru_scan_depth=2048, innodb_io_capacity=3000,
                                           innodb_io_capacity_max=4000))
    assert server.sets == [('innodb_lru_scan_depth', 2048), ('innodb_io_capacity', 3000)]
    assert out['failed'] is True and out['_rc'] == 1
    assert out['msg'].startswith('SET GLOBAL innodb_io_capacity = 3000 was accepted but the server still runs with 2000')
    assert out['msg'].endswith('; set before it, and still set: innodb_lru_scan_depth'), out['msg']
    assert list(out['variables']) == ['innodb_lru_scan_depth'] and out['variables']['innodb_lru_scan_depth']['changed']


def test_a_failing_set_names_the_variable_and_those_already_set(capsys, fake_server):
    out, server = fake_server(capsys, dict(RAISE, innodb_lru_scan_depth=2048), fail_on='innodb_lru_scan_depth')
    assert server.sets == [('innodb_io_capacity_max', 4000), ('innodb_io_capacity', 3000)]
    assert out['failed'] is True
    assert out['msg'].startswith('SET GLOBAL innodb_lru_scan_depth failed: ')
    assert out['msg'].endswith('; set before it, and still set: innodb_io_capacity_max, innodb_io_capacity'), out['msg']
    assert sorted(out['variables']) == ['innodb_io_capacity', 'innodb_io_capacity_max']


def test_every_value_is_checked_before_the_first_set(capsys, fake_server):
    out, server = fake_server(capsys, dict(RAISE, innodb_flush_neighbors='lots', innodb_adaptive_hash_index='maybe'))
    assert server.sets == [] and out['failed'] is True
    # One message per variable, by name, whatever the order given.
    named = [e.split(' (')[0] for e in out['errors']]
    assert named == ["innodb_adaptive_hash_index: 'maybe' is not a boolean",
                     "innodb_flush_neighbors: 'lots' is not an integer"], out
    assert out['msg'].startswith('nothing was changed: ')
