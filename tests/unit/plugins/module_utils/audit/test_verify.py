# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""verify.decide(): one row per situation, every status covered."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify as v
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.verify import Startup
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity

FILE = '/etc/mysql/conf.d/60-dbfleet-x.cnf:3 [mysqld]'
NOTHING = Startup()                                   # nothing configures it, default unknown
UNAVAILABLE = Startup(state='unavailable', reason='the server (10.0.0.5) is not on this host')
UNREADABLE = Startup(state='error', reason='/etc/my.cnf: Permission denied')
GIB = 1 << 30

# (id, kwargs for decide, expected status, a fragment expected in the notes or None)
TABLE = [
    ('ok: runs it, file says it', dict(desired='ON', kind='bool', runtime='ON', startup=Startup('1', FILE)),
     v.OK, None),
    ('ok: bool spelled as YAML true', dict(desired=True, kind='bool', runtime='ON', startup=Startup('on', FILE)),
     v.OK, None),
    ('ok: size suffix', dict(desired='1G', kind='size', runtime=str(GIB), startup=Startup('1024M', FILE)),
     v.OK, None),
    ('ok: enum case', dict(desired='o_direct', kind='enum', runtime='O_DIRECT', dynamic=False,
                           choices=('fsync', 'O_DIRECT'), startup=Startup('O_DIRECT', FILE)), v.OK, None),
    ('ok: compiled default, nothing configures it',
     dict(desired=0, kind='int', runtime='0', startup=NOTHING, origin='COMPILED'), v.OK, None),
    ('ok: default known and equal',
     dict(desired=1, kind='int', runtime='1', startup=Startup(default='1')), v.OK, None),
    ('ok: buffer pool rounded up by the server',
     dict(desired='1000M', kind='size', runtime=str(GIB), startup=Startup('1000M', FILE),
          rounding=(128 << 20, 2)), v.OK, 'rounds'),
    ('drift_runtime: below chunk x instances the chunk shrinks, no rounding up',
     dict(desired='64M', kind='size', runtime=str(128 << 20), startup=Startup('64M', FILE), dynamic=True,
          rounding=(128 << 20, 1)), v.DRIFT_RUNTIME, None),
    ('ok: option files not readable from here, the server says the value came from one at startup',
     dict(desired=0, kind='int', runtime='0', startup=UNAVAILABLE, origin='CONFIG'), v.OK, 'only the running value'),
    ('startup_unknown: option files not read and no origin either',
     dict(desired=0, kind='int', runtime='0', startup=UNAVAILABLE), v.STARTUP_UNKNOWN, 'only the running value'),
    ('startup_unknown: set at runtime, option files not read: says it is not known (not drift)',
     dict(desired=0, kind='int', runtime='0', startup=UNAVAILABLE, origin='DYNAMIC'), v.STARTUP_UNKNOWN,
     'whether a restart keeps it is not known'),
    ('drift_runtime: option files not read, running value differs',
     dict(desired=0, kind='int', runtime='2', startup=UNAVAILABLE, origin='DYNAMIC', dynamic=True),
     v.DRIFT_RUNTIME, 'the server runs 2'),
    ('drift_runtime: running differs, nothing configured',
     dict(desired=0, kind='int', runtime='2', startup=Startup(default='1'), dynamic=True), v.DRIFT_RUNTIME,
     'the server runs 2'),
    ('drift_runtime: configured right, changed at runtime',
     dict(desired=0, kind='int', runtime='2', startup=Startup('0', FILE), dynamic=True, origin='DYNAMIC'),
     v.DRIFT_RUNTIME, 'set at runtime'),
    ('drift_runtime: file edited after start (dynamic)',
     dict(desired=300, kind='int', runtime='200', startup=Startup('300', FILE), dynamic=True,
          origin='COMPILE-TIME'), v.DRIFT_RUNTIME, 'SET GLOBAL or a restart'),
    ('drift_runtime: read-only, configured wrong too',
     dict(desired=16, kind='int', runtime='8', startup=Startup('8', FILE), dynamic=False), v.DRIFT_RUNTIME,
     'needs the option file and a restart'),
    ('drift_runtime: config unreadable and running differs',
     dict(desired=0, kind='int', runtime='1', startup=UNREADABLE, dynamic=True), v.DRIFT_RUNTIME,
     'Permission denied'),
    ('drift_config: set at runtime only (default differs)',
     dict(desired=0, kind='int', runtime='0', startup=Startup(default='1'), dynamic=True, origin='SQL'),
     v.DRIFT_CONFIG, 'default 1'),
    ('drift_config: set at runtime only, default unknown, origin says SET',
     dict(desired=0, kind='int', runtime='0', startup=NOTHING, dynamic=True, origin='DYNAMIC'),
     v.DRIFT_CONFIG, 'lost at the next restart'),
    ('drift_config: file says something else',
     dict(desired='OFF', kind='bool', runtime='OFF', startup=Startup('ON', FILE)), v.DRIFT_CONFIG, FILE),
    ('drift_config: persisted value overrides',
     dict(desired='512M', kind='size', runtime=str(512 << 20),
          startup=Startup('268435456', 'performance_schema.persisted_variables')), v.DRIFT_CONFIG,
     'persisted_variables'),
    ('pending_restart: read-only, configured right',
     dict(desired=16, kind='int', runtime='8', startup=Startup('16', FILE), dynamic=False),
     v.PENDING_RESTART, 'a restart applies it'),
    ('pending_restart: dynamic unknown, configured right',
     dict(desired='O_DIRECT', kind='str', runtime='fsync', startup=Startup('O_DIRECT', FILE), dynamic=None),
     v.PENDING_RESTART, 'not known'),
    ('unsupported', dict(desired=1, kind='int', runtime=None, startup=NOTHING, exists=False), v.UNSUPPORTED,
     None),
    ('not_settable: AHI on an Aurora reader',
     dict(desired='ON', kind='bool', runtime='OFF', startup=NOTHING,
          settable=(False, 'Aurora reader instances run without the adaptive hash index')), v.NOT_SETTABLE,
     'Aurora'),
    ('error: malformed size', dict(desired='12Q', kind='size', runtime='1', startup=NOTHING), v.ERROR,
     "'12Q' is not a size"),
    ('error: malformed integer', dict(desired='lots', kind='int', runtime='1', startup=NOTHING), v.ERROR,
     "'lots' is not an integer"),
    ('error: not a boolean', dict(desired='maybe', kind='bool', runtime='ON', startup=NOTHING), v.ERROR,
     'not a boolean'),
    ('error: list as a value', dict(desired=[1, 2], kind='int', runtime='1', startup=NOTHING), v.ERROR,
     'scalar'),
    ('error: runs right but the option files cannot be read',
     dict(desired=0, kind='int', runtime='0', startup=UNREADABLE), v.ERROR, 'Permission denied'),
]


@pytest.mark.parametrize('kwargs, status, fragment', [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_decide(kwargs, status, fragment):
    got, notes = v.decide(**kwargs)
    assert got == status, notes
    if fragment:
        assert any(fragment in n for n in notes), notes


def test_table_covers_every_status():
    assert set(t[2] for t in TABLE) == set(v.STATUSES)


def test_summarize_counts_every_status_and_flags_drift():
    summary, drift = v.summarize({'a': {'status': 'ok'}, 'b': {'status': 'unsupported'}})
    assert summary['ok'] == 1 and summary['unsupported'] == 1 and summary['error'] == 0
    assert set(summary) == set(v.STATUSES)
    assert drift is False
    assert v.summarize({'a': {'status': 'pending_restart'}})[1] is True
    # runtime matches, startup unknown: counted on its own, not drift
    summary, drift = v.summarize({'a': {'status': 'startup_unknown'}, 'b': {'status': 'ok'}})
    assert summary['startup_unknown'] == 1 and drift is False


@pytest.mark.parametrize('settings', ['a=1', ['a'], 3, None])
def test_check_settings_refuses_non_dicts(settings):
    with pytest.raises(ValueError) as e:
        v.check_settings(settings)
    assert 'settings must be a dict' in str(e.value)


# ---------------------------------------------------------------- the option-file state of an earlier per-host run
NOW = v.parse_time('2026-11-25T16:00:00Z')
CACHE = {'read_at': '2026-11-25T15:00:00Z', 'variables': {
    'innodb_io_capacity': {'value': '300', 'source': '/etc/mysql/conf.d/x.cnf:2 [mysqld]', 'state': 'known'},
    'innodb_flush_neighbors': {'value': None, 'source': None, 'state': 'known'}}}


def test_cached_startup_gives_the_value_its_source_and_age():
    startup, note = v.cached_startup(CACHE, 'innodb_io_capacity', NOW, 86400)
    assert note is None and startup.state == 'known' and startup.value == '300'
    assert startup.read_at == '2026-11-25T15:00:00Z' and startup.age == 3600
    assert startup.source == '/etc/mysql/conf.d/x.cnf:2 [mysqld] (as the per-host run read it at 2026-11-25T15:00:00Z, 1h ago)'
    # nothing sets it: a restart brings the default, so a value set at runtime is drift_config again
    startup, note = v.cached_startup(CACHE, 'innodb_flush_neighbors', NOW, 86400)
    startup.default = '1'
    assert v.decide(0, 'int', '0', startup, True, origin='SQL')[0] == v.DRIFT_CONFIG
    assert v.decide(300, 'int', '300', v.cached_startup(CACHE, 'innodb_io_capacity', NOW)[0], True,
                    origin='SQL')[0] == v.OK


@pytest.mark.parametrize('cache, name, fragment', [
    (dict(CACHE, read_at='2026-11-24T15:00:00Z'), 'innodb_io_capacity', 'beyond the bound of 1h'),
    (dict(CACHE, read_at='2026-11-25T17:00:00Z'), 'innodb_io_capacity', 'later than now'),
    (dict(CACHE, read_at='yesterday'), 'innodb_io_capacity', 'no read_at time'),
    (dict(CACHE, read_at='2026-11-25T15:00:00'), 'innodb_io_capacity', 'no read_at time'),   # no timezone
    (CACHE, 'innodb_lru_scan_depth', 'did not read what a restart brings for innodb_lru_scan_depth'),
    (['not', 'a', 'dict'], 'innodb_io_capacity', 'not a mapping'),
])
def test_cached_startup_refuses_stale_future_malformed_and_missing(cache, name, fragment):
    startup, note = v.cached_startup(cache, name, NOW, 3600)
    assert startup is None and fragment in note, note


def test_no_cache_is_no_note():
    assert v.cached_startup(None, 'x', NOW) == (None, None)


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


# ---------------------------------------------------------------- decide()'s steps
def test_step_restart_ok_from_the_files_the_compiled_value_or_the_default():
    notes = []
    assert v._restart_ok('1G', 'size', None, None, None, Startup('1024M', FILE), None, '1', False, notes) is True  # pylint: disable=protected-access
    assert v._restart_ok(200, 'int', None, None, None, NOTHING, 'COMPILED', '200', True, []) is True  # pylint: disable=protected-access
    with_default = Startup()
    with_default.default = '100'
    assert v._restart_ok(200, 'int', None, None, None, with_default, None, None, False, []) is False  # pylint: disable=protected-access
    assert v._restart_ok(200, 'int', None, None, None, UNAVAILABLE, None, '200', True, []) is None  # pylint: disable=protected-access


def test_step_verdicts_running_and_differing():
    assert v._running_verdict(True, NOTHING, None, []) == (v.OK, [])  # pylint: disable=protected-access
    status, notes = v._running_verdict(None, UNAVAILABLE, 'DYNAMIC', [])  # pylint: disable=protected-access
    assert status == v.STARTUP_UNKNOWN and 'set at runtime (DYNAMIC)' in notes[0]
    assert v._running_verdict(None, UNREADABLE, None, [])[0] == v.ERROR  # pylint: disable=protected-access
    status, notes = v._differing_verdict(True, Startup('400', FILE), None, '200', False, [])  # pylint: disable=protected-access
    assert status == v.PENDING_RESTART and notes == ['read-only variable: configured 400 in %s; a restart applies it' % FILE]
    status, notes = v._differing_verdict(False, NOTHING, None, '200', True, [])  # pylint: disable=protected-access
    assert status == v.DRIFT_RUNTIME and notes[0] == 'the server runs 200'
