"""The desired state of each role (module_utils/roles/desired.py), from variables and server facts."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import states as role_states
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import flush_neighbors as flush_neighbors_role
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import memcached as memcached_role
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))


def facts(flavor='mysql', version=(8, 0, 40), runtime=None, runs_as_root=False, aurora_reader=None,
          datadir='/var/lib/mysql/'):
    """server_facts as the module builds them, from the version table (a server with no surprises)."""
    identity = server_identity.ServerIdentity(flavor, tuple(version), '%d.%d.%d' % tuple(version), aurora_reader)
    variables = {}
    runtime = runtime or {}
    for role_names in [desired.server_variable_names(desired.ROLES)]:
        for name in role_names:
            resolved = flavors.resolve_name(name, flavor, version)
            if resolved is None:
                variables[name] = dict(resolved_name=None, exists=False, runtime=None, settable=False,
                                       reason='%s has no such variable' % flavor)
                continue
            ok, why = flavors.settable(resolved, identity)
            default = flavors.variable_facts(resolved, flavor, version).default
            variables[name] = dict(resolved_name=resolved, exists=True, runtime=runtime.get(name, default),
                                   settable=ok, reason=why or None)
    return dict(flavor=flavor, version=list(version), version_text=flavors.format_version(version),
                capabilities=capability_facts.capabilities(flavor, version), variables=variables,
                runs_as_root=runs_as_root, datadir=datadir)


def error_of(func, *args):
    with pytest.raises(desired.InputError) as info:
        func(*args)
    return str(info.value)


# ---------------------------------------------------------------- shared
def spec_defaults(role):
    """The one source of a role's defaults: the `default` of each option of meta/argument_specs.yml."""
    with open(os.path.join(ROOT, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        specs = yaml.safe_load(handle)['argument_specs']
    return specs, dict((name, option.get('default')) for name, option in specs['main']['options'].items())


@pytest.mark.parametrize('role', desired.ROLES)
def test_python_defaults_come_from_the_argument_specs(role):
    assert desired.INPUTS[role] == spec_defaults(role)[1]


@pytest.mark.parametrize('role', desired.ROLES)
def test_every_entry_point_takes_the_same_options(role):
    specs = spec_defaults(role)[0]
    for entry in specs.values():
        assert entry['options'] == specs['main']['options']


def test_every_role_with_a_prefix_has_a_desired_state():
    roles = sorted(r for r in os.listdir(os.path.join(ROOT, 'roles')) if r not in ('restart', 'scaffold'))
    assert roles == sorted(desired.ROLES)


def test_unknown_variables_are_named():
    names = ['adaptive_hash_part', 'adaptive_hash_parts', 'adaptive_hash_report', 'memcached_port', 'other']
    assert desired.unknown_variables('adaptive_hash', names) == ['adaptive_hash_part']
    assert desired.unknown_variables('memcached', ['memcached_prot', 'memcached_port']) == ['memcached_prot']


def test_option_file_refuses_line_breaks():
    with pytest.raises(desired.InputError) as info:
        option_writer.option_file([('x', 'a\nb = 1')])
    assert "x must be on one line" in str(info.value) and "'a\\nb = 1'" in str(info.value)


# Every character a reader could take for a line break (str.splitlines() splits at each), the other
# control characters, and the invisible format characters.
LINE_BREAKING = ['\n', '\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029']
OTHER_CONTROLS = ['\x00', '\x07', '\x1b', '\x7f', '\x9b', '\ufeff', '\u200b', '\u202e', '\u2066']


def test_the_line_breaking_list_is_every_break_of_splitlines():
    assert sorted(c for c in map(chr, range(0x110000)) if len(('a%sb' % c).splitlines()) > 1) == sorted(LINE_BREAKING)


@pytest.mark.parametrize('char', LINE_BREAKING + OTHER_CONTROLS, ids=lambda c: 'U+%04X' % ord(c))
@pytest.mark.parametrize('kind', ['text', 'word'])
def test_option_file_refuses_every_line_breaking_and_control_character(char, kind):
    with pytest.raises(desired.InputError) as info:
        option_writer.option_file([('init_file', '/x%sinit_file=/evil' % char, kind)])
    assert 'init_file' in str(info.value)
    with pytest.raises(desired.InputError):
        option_writer.option_file([('init_file%s' % char, '1')])
    with pytest.raises(desired.InputError):
        option_writer.option_file_text([], [dict(name='init_file', value='/x%s[client]' % char)])
    assert '\n' not in option_writer.comment_line('a%sb' % char) and char not in option_writer.comment_line('a%sb' % char)


def test_option_file_text_keeps_every_line_it_is_given_on_one_line():
    lines = option_writer.option_file([('max_connections', 10), ('init_file', '/a b')])
    text = option_writer.option_file_text(['made by a test'], lines)
    assert text.split('\n') == ['# made by a test', '[mysqld]', 'max_connections = 10', 'init_file = "/a b"', '']


# ---------------------------------------------------------------- adaptive_hash
@pytest.mark.parametrize('flavor,version,expected', [
    ('mysql', (8, 0, 33), 'innodb_adaptive_hash_index_parts'),
    ('percona', (5, 6, 40), 'innodb_adaptive_hash_index_partitions'),
    ('mariadb', (10, 11, 6), 'innodb_adaptive_hash_index_parts'),
    ('mysql', (5, 6, 51), None),
])
def test_adaptive_hash_partitions_per_flavor(flavor, version, expected):
    out = role_states.adaptive_hash({'adaptive_hash_parts': 16}, facts(flavor, version))
    if expected:
        assert out['settings'] == {expected: 16} and not out['unsupported']
        assert out['option_file'] == [dict(name=expected, value='16')]
        assert out['partition_variable'] == expected and out['pending_restart'] is True
        assert out['restart_settings'] == {expected: 16}
    else:
        # verify still sees it, and reports it unsupported; the role writes and sets nothing
        assert out['settings'] == {'innodb_adaptive_hash_index_parts': 16} and out['option_file'] == []
        assert out['pending_restart'] is False
        assert out['unsupported'][0]['name'] == 'innodb_adaptive_hash_index_parts'
        assert out['issues'] == out['unsupported']


def test_adaptive_hash_parts_equal_to_running_value_is_not_pending():
    out = role_states.adaptive_hash({'adaptive_hash_parts': 8}, facts(runtime={'innodb_adaptive_hash_index_parts': '8'}))
    assert out['settings'] == {'innodb_adaptive_hash_index_parts': 8}
    assert out['pending_restart'] is False and out['restart_settings'] == {} and out['issues'] == []


def test_adaptive_hash_enabled_at_runtime_and_in_the_dropin():
    out = role_states.adaptive_hash({'adaptive_hash_enabled': 'yes'}, facts())
    assert out['settings'] == out['runtime'] == {'innodb_adaptive_hash_index': True}
    assert out['option_file'] == [dict(name='innodb_adaptive_hash_index', value='ON')]
    off = role_states.adaptive_hash({'adaptive_hash_enabled': False}, facts())
    assert off['option_file'] == [dict(name='innodb_adaptive_hash_index', value='OFF')]


def test_adaptive_hash_null_leaves_alone():
    out = role_states.adaptive_hash({}, facts())
    assert out['settings'] == {} and out['option_file'] == [] and out['runtime'] == {} and out['issues'] == []


def test_adaptive_hash_aurora_reader_not_settable():
    out = role_states.adaptive_hash({'adaptive_hash_enabled': True}, facts(flavors.AURORA, (8, 0, 28), aurora_reader=True))
    assert out['runtime'] == {} and out['option_file'] == []
    assert out['settings'] == {'innodb_adaptive_hash_index': True}
    assert out['not_settable'][0]['name'] == 'innodb_adaptive_hash_index'
    assert 'Aurora reader' in out['not_settable'][0]['reason']


@pytest.mark.parametrize('variables,fact_args,message', [
    ({'adaptive_hash_parts': 513}, {}, 'adaptive_hash_parts must be 1-512 on MySQL 8.0; got 513'),
    ({'adaptive_hash_parts': 0}, {}, 'adaptive_hash_parts must be 1-512 on MySQL 8.0; got 0'),
    ({'adaptive_hash_parts': 65}, dict(flavor='percona', version=(5, 6, 40)),
     'adaptive_hash_parts must be 1-64 on Percona Server 5.6; got 65'),
    ({'adaptive_hash_parts': 600}, dict(flavor='mariadb', version=(10, 11, 6)),
     'adaptive_hash_parts must be 1-512 on MariaDB 10.11; got 600'),
    ({'adaptive_hash_parts': 'ten'}, {}, "adaptive_hash_parts must be a whole number; got 'ten'"),
    ({'adaptive_hash_parts': True}, {}, 'adaptive_hash_parts must be a whole number; got true'),
    ({'adaptive_hash_enabled': 'maybe'}, {}, "adaptive_hash_enabled must be true or false; got 'maybe'"),
    ({'adaptive_hash_restart': 'sometimes'}, {}, "adaptive_hash_restart must be one of never, allowed; got 'sometimes'"),
    ({'adaptive_hash_restart_timeout': -5}, {}, 'adaptive_hash_restart_timeout must be 1 or more; got -5'),
    ({'adaptive_hash_restart_max_lag': '-1'}, {}, "adaptive_hash_restart_max_lag must be 0 or more; got '-1'"),
])
def test_adaptive_hash_bad_input_names_variable_and_value(variables, fact_args, message):
    assert message in error_of(role_states.adaptive_hash, variables, facts(**fact_args))


def test_adaptive_hash_parts_as_a_numeric_string_is_accepted():
    assert role_states.adaptive_hash({'adaptive_hash_parts': '16'}, facts())['settings'] == {
        'innodb_adaptive_hash_index_parts': 16}


def test_adaptive_hash_reports_every_bad_variable_at_once():
    text = error_of(role_states.adaptive_hash, {'adaptive_hash_parts': 'x', 'adaptive_hash_enabled': 'maybe'}, facts())
    assert 'adaptive_hash_parts' in text and 'adaptive_hash_enabled' in text


# ---------------------------------------------------------------- shared by the roles' own tests
# (test_flush_neighbors.py, test_memcached.py): what storage_facts detects, a memcached container
SSD = dict(storage_class='ssd', confidence='high', reasons=['sda is non-rotational'], mount='/',
           devices=[dict(name='sda')])
UNKNOWN = dict(storage_class='unknown', confidence='low', reasons=['no block device'], devices=[])
CONTAINER = dict(name='token', schema='s', table='t', key_column='id', value_columns=['v'], unique_index='PRIMARY')


def mc(**variables):
    return dict(dict(memcached_containers=[CONTAINER]), **variables)


# ---------------------------------------------------------------- every role at once (verify, site.yml)
def no_storage(datadir, probe):
    return dict(storage_class='ssd', confidence='high', reasons=['test: ssd under %s' % datadir],
                probe=None if not probe else dict(storage_class='ssd'))


def test_for_roles_equals_each_role_alone_with_the_defaults_filling_in():
    variables = dict(adaptive_hash_parts=16, flush_neighbors_io_profile=True, memcached_r_batch_size=7,
                     flush_neighbors_typo=1)
    server = facts('mysql', (8, 0, 33))
    settings, states, unknown = desired.for_roles(['flush_neighbors', 'adaptive_hash', 'memcached'], variables,
                                                  server, no_storage)
    alone = dict(flush_neighbors=flush_neighbors_role.flush_neighbors(dict(flush_neighbors_io_profile=True), server,
                                                                      no_storage('/var/lib/mysql/', False)),
                 adaptive_hash=role_states.adaptive_hash(dict(adaptive_hash_parts=16), server),
                 memcached=memcached_role.memcached(dict(memcached_r_batch_size=7), server))
    assert sorted(states) == sorted(alone)
    for role, state in alone.items():
        # for_role() adds the scaffold's keys (dropin, runtime_steps, inputs ...) and changes nothing else.
        assert state.items() <= states[role].items(), role
        assert states[role]['inputs'] == dict(desired.INPUTS[role], **desired.role_inputs(role, variables)[0])
    assert states['adaptive_hash']['dropin'] == 'write' and states['adaptive_hash']['runtime_steps'] == []
    assert states['flush_neighbors']['runtime_steps'] == states['flush_neighbors']['runtime']
    assert states['flush_neighbors']['runtime_variables'] == desired.runtime_in_order(
        'flush_neighbors', states['flush_neighbors']['runtime_steps'])
    assert states['memcached']['pending_restart'] is False and states['memcached']['restart_settings'] == {}
    assert settings['innodb_io_capacity'] == 2000 and settings['innodb_adaptive_hash_index_parts'] == 16
    assert settings['daemon_memcached_r_batch_size'] == 7
    assert unknown == ['flush_neighbors_typo']


def test_the_state_publishes_the_outputs_it_says():
    """What the scaffold sets as facts for a role (its tasks set only the rest): the record's outputs the state
    says, each from its own key; a restart the scaffold's restart step accounts for later."""
    server = facts('mysql', (8, 0, 33))
    _settings, states, _unknown = desired.for_roles(['flush_neighbors', 'adaptive_hash', 'memcached'],
                                                    dict(adaptive_hash_parts=16), server, no_storage)
    hash_state, flush_state = states['adaptive_hash'], states['flush_neighbors']
    assert hash_state['published'] == dict(adaptive_hash_desired_settings=hash_state['settings'],
                                           adaptive_hash_pending_restart=True, adaptive_hash_restarted=False)
    assert flush_state['published'] == dict(flush_neighbors_desired_settings=flush_state['settings'],
                                            flush_neighbors_storage=flush_state['storage'])
    assert states['memcached']['published'] == dict(memcached_desired_settings=states['memcached']['settings'],
                                                    memcached_restarted=False)
    for role, state in states.items():
        assert set(state['published']) < set(desired.RECORDS[role].outputs), role
        assert role + '_report' not in state['published']


def test_for_roles_names_the_role_of_every_bad_variable():
    message = error_of(desired.for_roles, ['adaptive_hash', 'memcached'],
                       dict(adaptive_hash_parts=0, memcached_port='x'), facts(), no_storage)
    assert 'adaptive_hash: adaptive_hash_parts must be 1-512' in message
    assert 'memcached: memcached_port must be a whole number' in message


def test_check_roles():
    assert desired.check_roles(['memcached', 'adaptive_hash', 'memcached']) == ['memcached', 'adaptive_hash']
    with pytest.raises(ValueError, match="desired_from: 'restart' is not a role with a desired state"):
        desired.check_roles(['restart'])


def test_flush_neighbors_probe_variable_reaches_the_detection():
    seen = []
    desired.for_role('flush_neighbors', dict(flush_neighbors_probe=True), facts(),
                     lambda datadir, probe: seen.append(probe) or no_storage(datadir, probe))
    assert seen == [True]


# ---------------------------------------------------------------- myrocks
def rocks(loaded=False, tables=0, running=None, dynamic=None):
    """MariaDB 11.8 facts; with loaded, the rocksdb_* variables exist (running values, dynamic per name)."""
    out = facts('mariadb', (11, 8, 3))
    out['engines'] = dict(ROCKSDB=dict(loaded=loaded, tables=tables))
    out['variables'] = {}
    for name in desired.RECORDS['myrocks'].server_variables:
        out['variables'][name] = (dict(exists=True, runtime=(running or {}).get(name), dynamic=(dynamic or {}).get(name))
                                  if loaded else dict(exists=False, runtime=None, dynamic=None))
    return out


WANTED = dict(myrocks_enabled=True, myrocks_flush_log_at_trx_commit=2, myrocks_max_background_jobs=4,
              myrocks_default_cf_options='compression=kLZ4Compression;bottommost_compression=kZSTD')


def test_myrocks_load_takes_a_restart_and_writes_the_plugin_line():
    out = role_states.myrocks(WANTED, rocks())
    assert out['refusals'] == [] and out['plugin'] == 'ha_rocksdb'
    assert out['option_file'][0] == dict(name='plugin_load_add', value='ha_rocksdb')
    assert dict(name='loose-rocksdb_flush_log_at_trx_commit', value='2') in out['option_file']
    assert out['runtime'] == {} and out['pending_restart'] is True
    assert out['restart_reason'] == 'load MyRocks (ha_rocksdb)' and out['restart_settings'] == {}
    assert out['settings'] == {'rocksdb_flush_log_at_trx_commit': 2, 'rocksdb_max_background_jobs': 4,
                               'rocksdb_default_cf_options': WANTED['myrocks_default_cf_options']}


def test_myrocks_loaded_dynamic_at_runtime_read_only_waits_only_when_it_differs():
    same = rocks(True, running={'rocksdb_default_cf_options': WANTED['myrocks_default_cf_options']},
                 dynamic={'rocksdb_default_cf_options': False, 'rocksdb_flush_log_at_trx_commit': True})
    out = role_states.myrocks(WANTED, same)
    assert out['runtime'] == {'rocksdb_flush_log_at_trx_commit': 2, 'rocksdb_max_background_jobs': 4}
    assert out['pending_restart'] is False and out['restart_settings'] == {}
    other = rocks(True, running={'rocksdb_default_cf_options': 'compression=kNoCompression'})
    out = role_states.myrocks(WANTED, other)
    assert out['pending_restart'] is True
    assert out['restart_settings'] == {'rocksdb_default_cf_options': WANTED['myrocks_default_cf_options']}
    assert out['restart_reason'].startswith('MyRocks settings: rocksdb_default_cf_options=')


def test_myrocks_taken_out_needs_a_restart_and_no_tables():
    out = role_states.myrocks(dict(myrocks_enabled=False), rocks(True))
    assert out['pending_restart'] is True and out['restart_reason'] == 'unload MyRocks' and out['option_file'] == []
    assert role_states.myrocks(dict(myrocks_enabled=False), rocks(True, tables=2))['refusals'] == ['tables']
    left = role_states.myrocks(dict(myrocks_block_cache_size=1 << 20), rocks())
    assert left['settings'] == {} and left['pending_restart'] is False and left['notes']


@pytest.mark.parametrize('variables,message', [
    (dict(myrocks_flush_log_at_trx_commit=3), 'myrocks_flush_log_at_trx_commit must be 0-2; got 3'),
    (dict(myrocks_max_background_jobs=65), 'myrocks_max_background_jobs must be -1 to 64; got 65'),
    (dict(myrocks_block_cache_size='big'), "myrocks_block_cache_size must be a whole number; got 'big'"),
    (dict(myrocks_enabled='maybe'), "myrocks_enabled must be true or false; got 'maybe'"),
    (dict(myrocks_default_cf_options='[client]'), 'myrocks_default_cf_options must not start with ['),
    (dict(myrocks_restart='reboot'), "myrocks_restart must be one of never, allowed; got 'reboot'"),
])
def test_myrocks_bad_input(variables, message):
    assert message in error_of(role_states.myrocks, variables, rocks())


# ---------------------------------------------------------------- the settings' names, as data
@pytest.mark.parametrize('role, state', [
    ('adaptive_hash', lambda: role_states.adaptive_hash({'adaptive_hash_enabled': True, 'adaptive_hash_parts': 16},
                                                        facts('mysql', (8, 0, 33)))),
    ('adaptive_hash', lambda: role_states.adaptive_hash({'adaptive_hash_parts': 16}, facts('percona', (5, 6, 40)))),
    ('flush_neighbors', lambda: flush_neighbors_role.flush_neighbors({'flush_neighbors_io_profile': True}, facts(), SSD)),
    ('memcached', lambda: memcached_role.memcached(mc(memcached_r_batch_size=5, memcached_w_batch_size=2,
                                                   memcached_api_enable_binlog=True, memcached_api_enable_mdl=True,
                                                   memcached_api_trx_level=1), facts(version=(8, 0, 33)))),
    ('myrocks', lambda: role_states.myrocks(dict(WANTED, myrocks_block_cache_size=1 << 30), rocks(loaded=True))),
])
def test_every_setting_a_role_names_is_in_its_setting_variables(role, state):
    """The controller audit reads the variables it compares by name (verify.audit_variable_names()); a setting
    missing from its record's setting_variables would make it read every variable of every host."""
    settings = state()['settings']
    assert settings, 'the case must name settings'
    assert set(settings) <= set(desired.setting_variable_names([role]))


def test_for_roles_names_every_bad_role():
    variables = dict(adaptive_hash_parts=513, myrocks_flush_log_at_trx_commit=9)
    with pytest.raises(desired.InputError) as info:
        desired.for_roles(['adaptive_hash', 'flush_neighbors', 'myrocks'], variables, facts('mysql', (8, 0, 33)),
                          no_storage)
    assert sorted(info.value.by_role) == ['adaptive_hash', 'myrocks']
    assert 'adaptive_hash: adaptive_hash_parts must be 1-512 on MySQL 8.0; got 513' in info.value.messages
    assert any(m.startswith('myrocks: myrocks_flush_log_at_trx_commit must be 0-2') for m in info.value.messages)


# The roles of the first release: a role added later changes no line of the tests below.
KNOWN = ('adaptive_hash', 'flush_neighbors', 'memcached', 'myrocks', 'settings')


def test_every_table_by_role_derives_from_the_registry():
    assert desired.ROLES == tuple(sorted(r.name for r in desired.REGISTRY))
    assert sorted(desired.INPUTS) == sorted(desired.ROLES)
    assert desired.restart_roles(KNOWN) == ['adaptive_hash', 'memcached', 'myrocks', 'settings']
    assert desired.server_catalog(['adaptive_hash', 'myrocks']) is False and desired.server_catalog(['settings'])
    assert desired.setting_owner('innodb_flush_neighbors') == 'flush_neighbors' and desired.setting_owner('x') is None
    assert desired.server_engine_names(desired.ROLES) == ['ROCKSDB']
    assert desired.dropin_file('myrocks', '/etc/x') == ('/etc/x/60-dbfleet-myrocks.cnf', None)
    assert [r for r in desired.site_roles() if r in KNOWN] == ['flush_neighbors', 'adaptive_hash']
    assert [r for r in desired.site_roles(hosts=True) if r in KNOWN] == ['memcached']
    with pytest.raises(ValueError) as info:
        desired.check_roles(['adaptive_hash', 'myrock'], 'roles')
    assert "roles: 'myrock' is not a role with a desired state (%s)" % ', '.join(desired.ROLES) == str(info.value)


# ---------------------------------------------------------------- the record: each setting a role owns
@pytest.mark.parametrize('role, name', [(r.name, name) for r in desired.REGISTRY for name in r.setting_variables])
def test_every_setting_a_role_owns_has_its_range_in_the_version_table(role, name):
    """A role checks its input against the server's range (role_input.variable_range()): a setting of a record
    without spans in flavors.VARIABLES would have no check at all. A number has a bound in every span."""
    spans = flavors.VARIABLES.get(name)
    assert spans, '%s: %s has no entry in flavors.VARIABLES (add its spans, with their source)' % (role, name)
    for span in spans:
        if span.value['kind'] in ('int', 'size'):
            assert span.value['minimum'] is not None or span.value['maximum'] is not None, (role, name, span)


def test_a_variable_without_spans_has_no_range_and_says_so():
    with pytest.raises(ValueError) as info:
        role_input.variable_range('innodb_purge_no_such_setting', facts('mysql', (8, 0, 33)))
    assert 'innodb_purge_no_such_setting' in str(info.value) and 'flavors.VARIABLES' in str(info.value)


@pytest.mark.parametrize('name, owned', [
    ('innodb_adaptive_hash_index', ('adaptive_hash', ('adaptive_hash_enabled',))),
    ('innodb_adaptive_hash_index_parts', ('adaptive_hash', ('adaptive_hash_parts',))),
    ('innodb_adaptive_hash_index_partitions', ('adaptive_hash', ('adaptive_hash_parts',))),
    # not a setting of the role's: its prefix is
    ('innodb_adaptive_hash_index_cells', ('adaptive_hash', ('adaptive_hash_enabled',))),
    ('innodb_flush_neighbors', ('flush_neighbors', ('flush_neighbors_storage_class', 'flush_neighbors_map'))),
    ('daemon_memcached_enable_binlog',
     ('memcached', ('memcached_port', 'memcached_bind_address', 'memcached_daemon_extra_options'))),
    ('innodb_api_trx_level', ('memcached', ('memcached_api_trx_level',))),
    ('rocksdb_max_background_jobs', ('myrocks', ('myrocks_max_background_jobs',))),
    ('rocksdb_wal_dir', ('myrocks', ('myrocks_* (myrocks_enabled, myrocks_block_cache_size, ...)',))),
    # set by flush_neighbors with flush_neighbors_io_profile, owned by no role
    ('innodb_io_capacity', None),
    ('innodb_buffer_pool_size', None),
])
def test_the_owner_of_a_setting_and_its_inputs_come_from_the_records(name, owned):
    assert desired.owning_role(name) == owned


def test_the_input_that_pins_a_setting_is_named_by_the_record_only_when_one_input_holds_its_value():
    ahi, fn, myrocks = desired.RECORDS['adaptive_hash'], desired.RECORDS['flush_neighbors'], desired.RECORDS['myrocks']
    assert ahi.pinning_input('innodb_adaptive_hash_index_partitions') == 'adaptive_hash_parts'
    assert myrocks.pinning_input('rocksdb_block_cache_size') == 'myrocks_block_cache_size'
    assert fn.pinning_input('innodb_flush_neighbors') is None and fn.pinning_input('innodb_io_capacity') is None
    assert desired.RECORDS['memcached'].pinning_input('daemon_memcached_option') is None


@pytest.mark.parametrize('role', [r.name for r in desired.REGISTRY])
def test_every_input_a_record_names_is_an_input_of_the_roles_specs(role):
    record = desired.RECORDS[role]
    named = [i for _name, inputs in record.owns if inputs for i in ((inputs,) if isinstance(inputs, str) else inputs)]
    named += [i for _prefix, inputs in record.owns_prefixes for i in inputs if ' ' not in i]
    if record.detects_storage:
        named += [record.storage_class_input, role + '_probe']
    assert [i for i in named if i not in desired.INPUTS[role]] == []


def test_the_myrocks_settings_take_their_kinds_and_ranges_from_the_version_table():
    rows = role_states.myrocks_settings(rocks())
    assert [row[1::-1] for row in rows] == list(desired.RECORDS['myrocks'].owns)
    assert rows[2] == ('myrocks_max_background_jobs', 'rocksdb_max_background_jobs', 'int', -1, 64, True)
    assert rows[3] == ('myrocks_default_cf_options', 'rocksdb_default_cf_options', 'text', None, None, False)
    # MySQL has no MyRocks: the newest span checks the input all the same.
    assert role_states.myrocks_settings(facts('mysql', (8, 0, 33)))[1][2:5] == ('int', 0, 2)


# ---------------------------------------------------------------- a role whose record says all of it
@pytest.fixture
def recorded_role(monkeypatch):
    """A role that exists only as a record (states.from_record()): a read-only and a dynamic setting, restarts."""
    record = desired.Role('lru', ('role_states', 'from_record'), outputs=('lru_report',),
                          server_variables=('innodb_read_io_threads', 'innodb_lru_scan_depth'),
                          owns=(('innodb_read_io_threads', 'lru_read_threads'), ('innodb_lru_scan_depth', 'lru_depth')),
                          restarts=True)
    monkeypatch.setitem(desired.INPUTS, 'lru', dict(lru_read_threads=None, lru_depth=None, lru_restart='never',
                                                    lru_restart_timeout=300, lru_restart_max_lag=60))
    return record


def server_with(**running):
    out = facts('mysql', (8, 0, 33))
    out['variables'] = dict((name, dict(exists=True, runtime=str(value), settable=True,
                                        dynamic=flavors.variable_facts(name, 'mysql', (8, 0, 33)).dynamic))
                            for name, value in running.items())
    return out


def test_a_record_alone_gives_the_desired_state(recorded_role):
    state = recorded_role.function(dict(lru_read_threads=8, lru_depth=2048),
                                   server_with(innodb_read_io_threads=4, innodb_lru_scan_depth=1024))
    assert state['settings'] == dict(innodb_read_io_threads=8, innodb_lru_scan_depth=2048)
    assert state['runtime'] == dict(innodb_lru_scan_depth=2048)
    assert state['restart_settings'] == dict(innodb_read_io_threads=8) and state['pending_restart'] is True
    assert state['option_file_text'].splitlines()[-2:] == ['innodb_read_io_threads = 8', 'innodb_lru_scan_depth = 2048']
    assert 'Managed by the dbfleet.innodb.lru role' in state['option_file_text']
    same = recorded_role.function(dict(lru_read_threads=4), server_with(innodb_read_io_threads=4))
    assert same['pending_restart'] is False and same['runtime'] == {} and same['settings'] == dict(innodb_read_io_threads=4)


def test_a_record_alone_checks_the_ranges_of_the_version_table_and_its_restart_inputs(recorded_role):
    with pytest.raises(desired.InputError) as info:
        recorded_role.function(dict(lru_read_threads=65, lru_depth='deep', lru_restart='yes'), server_with())
    assert info.value.messages == ['lru_read_threads must be 1-64 on MySQL 8.0; got 65',
                                   "lru_depth must be a whole number; got 'deep'",
                                   "lru_restart must be one of never, allowed; got 'yes'"]


def test_a_record_alone_leaves_what_the_server_lacks_unsupported(recorded_role):
    state = recorded_role.function(dict(lru_depth=2048), facts('mysql', (8, 0, 33)))
    assert state['unsupported'][0]['name'] == 'innodb_lru_scan_depth' and state['option_file'] == []


def test_the_runtime_steps_are_one_mapping_in_their_order():
    """runtime_variables, what the scaffold sets in one global_variables run: the steps in their order (the maximum
    first when the capacity goes above the running maximum), each name once."""
    steps = [{'innodb_flush_neighbors': 0}, {'innodb_io_capacity_max': 4000}, {'innodb_io_capacity': 3000}]
    assert list(desired.runtime_in_order('flush_neighbors', steps).items()) == [
        ('innodb_flush_neighbors', 0), ('innodb_io_capacity_max', 4000), ('innodb_io_capacity', 3000)]
    assert desired.runtime_in_order('memcached', [{'b': 1, 'a': 2}]) == {'b': 1, 'a': 2}
    assert list(desired.runtime_in_order('memcached', [{'b': 1, 'a': 2}])) == ['b', 'a']
    assert desired.runtime_in_order('adaptive_hash', []) == {}
    with pytest.raises(ValueError, match='flush_neighbors: runtime_steps set innodb_io_capacity twice'):
        desired.runtime_in_order('flush_neighbors', [{'innodb_io_capacity': 1}, {'innodb_io_capacity': 2}])


def test_the_runtime_steps_leave_out_what_the_server_runs_already():
    """runtime_to_set(): a step whose every setting the server runs already (a dynamic, settable variable whose running
    value means the desired one) is left out, so the scaffold runs no global_variables for it; with SET PERSIST every
    step stays; a setting without facts, or one that cannot be compared, stays (global_variables decides)."""
    def fact(runtime, kind='int', **more):
        return dict(dict(exists=True, dynamic=True, settable=True, kind=kind, runtime=runtime), **more)
    server = dict(variables=dict(innodb_flush_neighbors=fact('0'), innodb_io_capacity_max=fact('2000'),
                                 innodb_io_capacity=fact('200'), innodb_adaptive_hash_index=fact('ON', 'bool'),
                                 read_only_one=fact('1', dynamic=False), not_settable=fact('1', settable=False),
                                 unknown_kind=fact('1', kind=None)))
    steps = [{'innodb_flush_neighbors': 0}, {'innodb_io_capacity_max': 4000}, {'innodb_io_capacity': 200}]
    assert desired.runtime_to_set(steps, server, False) == [{'innodb_io_capacity_max': 4000}]
    assert desired.runtime_to_set(steps, server, True) == steps
    assert desired.runtime_to_set([{'innodb_adaptive_hash_index': True}], server, False) == []
    assert desired.runtime_to_set([{'innodb_adaptive_hash_index': False}], server, False) == [
        {'innodb_adaptive_hash_index': False}]
    # A step with two settings stays while one of them differs.
    assert desired.runtime_to_set([{'innodb_flush_neighbors': 0, 'innodb_io_capacity': 300}], server, False) == [
        {'innodb_flush_neighbors': 0, 'innodb_io_capacity': 300}]
    for name in ('read_only_one', 'not_settable', 'unknown_kind', 'no_facts'):
        assert desired.runtime_to_set([{name: 1}], server, False) == [{name: 1}], name
    # A value that cannot be read as its kind is global_variables' to refuse.
    assert desired.runtime_to_set([{'innodb_io_capacity': 'many'}], server, False) == [{'innodb_io_capacity': 'many'}]


def test_for_role_sets_at_runtime_only_what_differs():
    server = facts('mysql', (8, 0, 33))
    server['variables']['innodb_adaptive_hash_index'].update(dynamic=True, kind='bool', runtime='ON')
    state = desired.for_role('adaptive_hash', dict(adaptive_hash_enabled=True), server, no_storage)
    assert state['runtime'] == {'innodb_adaptive_hash_index': True}     # what the role manages, as before
    assert state['runtime_steps'] == [] and state['runtime_variables'] == {}
    state = desired.for_role('adaptive_hash', dict(adaptive_hash_enabled=False), server, no_storage)
    assert state['runtime_variables'] == {'innodb_adaptive_hash_index': False}
