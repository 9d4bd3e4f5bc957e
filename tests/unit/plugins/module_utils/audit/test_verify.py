# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""verify.audit(): the settings checked, each of its steps on its own."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify as v
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.audit.test_startup_cache import CACHE, NOW


@pytest.mark.parametrize('settings', ['a=1', ['a'], 3, None])
def test_check_settings_refuses_non_dicts(settings):
    with pytest.raises(ValueError) as e:
        v.check_settings(settings)
    assert 'settings must be a dict' in str(e.value)


# ---------------------------------------------------------------- audit()'s steps, each on its own
MYSQL80 = server_identity.ServerIdentity('mysql', (8, 0, 36), '8.0.36', None)


def test_step_without_roles_the_settings_are_the_task_s():
    settings = {'innodb_io_capacity': 200}
    assert v._with_role_settings(None, settings, (), None, None, MYSQL80, {}, {}) == (settings, {}, [])  # pylint: disable=protected-access


def test_step_resolve_names_skips_nulls_and_makes_bad_names_per_variable_errors():
    wanted, found_reason, results, skipped = v._resolve_names(  # pylint: disable=protected-access
        {'innodb_io_capacity': 200, 'innodb_flush_neighbors': None, 'no_such_variable_x': 1}, MYSQL80,
        frozenset(['innodb_io_capacity']))
    assert wanted == {'innodb_io_capacity': ('innodb_io_capacity', 200)} and skipped == ['innodb_flush_neighbors']
    assert set(found_reason) == {'innodb_io_capacity'} and results['no_such_variable_x']['status'] == 'error'


def test_step_startup_sources_states(tmp_path):
    cnf = tmp_path / 'my.cnf'
    cnf.write_text('[mysqld]\ninnodb_io_capacity = 400\n')
    plan = dict(files=[str(cnf)], groups=['mysqld'], explicit=True, command_line=None, source='option_files parameter',
                note='')
    parsed, command_options, state, reason = v._startup_sources(plan)  # pylint: disable=protected-access
    assert (command_options, state, reason) == ([], 'known', None) and parsed.entries[0].value == '400'
    missing = dict(plan, files=[str(tmp_path / 'gone.cnf')])
    assert v._startup_sources(missing)[2:] == ('error', '%s: no such file' % (tmp_path / 'gone.cnf'))  # pylint: disable=protected-access
    unavailable = dict(plan, files=[], source='unavailable', note='not on this host')
    assert v._startup_sources(unavailable)[2:] == ('unavailable', 'not on this host')  # pylint: disable=protected-access


def test_step_buffer_pool_rounding_only_where_the_server_rounds():
    assert v._buffer_pool_rounding(dict(innodb_buffer_pool_chunk_size='134217728'), MYSQL80) == ('134217728', 1)  # pylint: disable=protected-access
    assert v._buffer_pool_rounding({}, MYSQL80) is None  # pylint: disable=protected-access


def _evidence(**over):
    evidence = dict(identity=MYSQL80, variables=dict(innodb_io_capacity='200'), server_names=frozenset(['innodb_io_capacity']),
                    table={}, persisted={}, parsed=v.optionfiles.read_option_files([], []), command_options=[],
                    startup_state='known', startup_reason=None, startup_cache=None, startup_cache_max_age=3600,
                    now=NOW, rounding=None)
    evidence.update(over)
    return evidence


def test_step_startup_of_persisted_then_command_line_then_files_then_cache():
    entry = v.optionfiles.Entry('innodb_io_capacity', '400', '/etc/my.cnf', 3, 'mysqld', 'innodb_io_capacity = 400')
    none = (None, None)
    startup, note = v._startup_of('innodb_io_capacity', '200', '500', none, ('400', entry), _evidence())  # pylint: disable=protected-access
    assert (startup.value, startup.source, note) == ('500', 'performance_schema.persisted_variables (mysqld-auto.cnf)', None)
    startup = v._startup_of('innodb_io_capacity', '200', None, none, ('400', entry), _evidence())[0]  # pylint: disable=protected-access
    assert (startup.value, startup.source, startup.state) == ('400', '/etc/my.cnf:3 [mysqld]', 'known')
    startup = v._startup_of('innodb_io_capacity', '200', None, none, ('400', entry),  # pylint: disable=protected-access
                            _evidence(startup_state='error', startup_reason='/etc/x.cnf: denied'))[0]
    assert (startup.state, startup.reason) == ('error', '/etc/x.cnf: denied')
    remote = _evidence(startup_state='unavailable', startup_reason='remote', startup_cache=CACHE)
    startup, note = v._startup_of('innodb_io_capacity', None, None, none, none, remote)  # pylint: disable=protected-access
    assert (startup.value, startup.read_at, note) == ('300', CACHE['read_at'], None)
    startup, note = v._startup_of('innodb_buffer_pool_size', None, None, none, none, remote)  # pylint: disable=protected-access
    assert startup.state == 'unavailable' and startup.value is None and note


def test_step_audit_variable_gives_the_item_and_what_it_read():
    item, kept = v._audit_variable('innodb_io_capacity', 200, '', _evidence())  # pylint: disable=protected-access
    assert item['status'] == 'ok' and item['runtime'] == '200' and item['desired_normalized'] == '200'
    assert kept == dict(value=None, source=None, state='known')      # known: nothing configures it
    item, kept = v._audit_variable('innodb_io_capacity', 300, '', _evidence(persisted={'innodb_io_capacity': '300'}))  # pylint: disable=protected-access
    assert item['status'] != 'ok' and item['persisted'] == '300'
    assert kept == dict(value='300', source='performance_schema.persisted_variables (mysqld-auto.cnf)', state='known')
