# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""values: every spelling the collection and the servers accept, pinned; what the server does to a value."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import restart_gate
from ansible_collections.dbfleet.innodb.plugins.module_utils import values as v

MYSQL80 = server_identity.ServerIdentity(flavors.MYSQL, (8, 0, 36), '8.0.36', None)
MARIADB = server_identity.ServerIdentity(flavors.MARIADB, (10, 11, 9), '10.11.9-MariaDB', None)


# ---------------------------------------------------------------- booleans
@pytest.mark.parametrize('value', [True, 1, 1.0, 'ON', 'on', 'On', ' on ', 'true', 'TRUE', '1',
                                   'yes', 'Yes', 'y', 'Y', 't', 'T'])
def test_true_spellings(value):
    assert v.parse_bool(value) is True
    assert v.normalize(value, 'bool') == 'ON'


@pytest.mark.parametrize('value', [False, 0, 0.0, 'OFF', 'off', 'false', 'False', '0', 'no', 'NO', 'n', 'f'])
def test_false_spellings(value):
    assert v.parse_bool(value) is False
    assert v.normalize(value, 'bool') == 'OFF'


@pytest.mark.parametrize('value', ['maybe', 2, -1, 0.5, None, '', 'onn', 'enabled', 'tru', [], {}])
def test_bad_booleans(value):
    with pytest.raises(v.ValueError_) as e:
        v.normalize(value, 'bool')
    assert 'is not a boolean' in str(e.value)


def test_boolean_words_server_versus_input():
    # mysqld (my_getopt get_bool_argument, MySQL and MariaDB) reads exactly these; the collection adds
    # Ansible's words on input and always hands the server ON/OFF.
    assert v.SERVER_TRUE == ('on', 'true', '1') and v.SERVER_FALSE == ('off', 'false', '0')
    assert set(v.INPUT_TRUE) - set(v.SERVER_TRUE) == {'yes', 'y', 't'}
    assert set(v.INPUT_FALSE) - set(v.SERVER_FALSE) == {'no', 'n', 'f'}


@pytest.mark.parametrize('text, on, understood', [
    ('ON', True, True), ('true', True, True), ('1', True, True), ('Off', False, True), ('FALSE', False, True),
    ('0', False, True), ('yes', False, False), ('y', False, False), ('t', False, False), ('enabled', False, False),
])
def test_server_reads_booleans_like_mysqld(text, on, understood):
    assert v.server_bool(text) == (on, understood)


def test_option_file_yes_is_off_to_the_server():
    equal, note = v.compare(True, 'yes', 'bool')
    assert equal is False and "reads 'yes' as OFF" in note
    equal, note = v.compare('off', 'yes', 'bool')
    assert equal is True and 'as OFF' in note
    assert v.compare('on', 'TRUE', 'bool') == (True, None)


# ---------------------------------------------------------------- numbers
@pytest.mark.parametrize('value, expected', [
    ('1G', 1 << 30), ('512M', 512 << 20), ('64k', 64 << 10), ('64K', 64 << 10), ('2t', 2 << 40), ('1P', 1 << 50),
    ('1e', 1 << 60), (134217728, 134217728), ('134217728', 134217728), (' 8M ', 8 << 20), (2.0, 2),
    ('1GiB', 1 << 30), ('1GB', 1 << 30), ('0', 0),
])
def test_sizes(value, expected):
    assert v.parse_size(value) == expected
    assert v.normalize(value, 'size') == expected


@pytest.mark.parametrize('value', ['1.5G', 'big', '-1', -1, True, '1X', '2 G', '512b', '', None, 1.5, 'G'])
def test_bad_sizes(value):
    with pytest.raises(v.ValueError_) as e:
        v.parse_size(value)
    assert 'is not a size' in str(e.value)


@pytest.mark.parametrize('value, expected', [
    (5, 5), ('5', 5), ('-1', -1), ('+3', 3), ('2K', 2048), ('2k', 2048), ('1M', 1 << 20), (4.0, 4),
])
def test_integers_take_the_suffixes_mysqld_takes(value, expected):
    # Option files accept K..E on any numeric option, so an int variable written 2K is 2048 for both
    # the setter (which sends 2048) and the auditor.
    assert v.parse_int(value) == expected
    assert v.normalize(value, 'int') == expected


@pytest.mark.parametrize('value', ['lots', '2 K', '1.5', 1.5, True, False, '', '2X', None])
def test_bad_integers(value):
    with pytest.raises(v.ValueError_) as e:
        v.parse_int(value)
    assert 'is not an integer' in str(e.value)


@pytest.mark.parametrize('value, expected', [(90, 90.0), ('90.000000', 90.0), ('75.5', 75.5), ('1e2', 100.0),
                                             ('.5', 0.5), (0.25, 0.25)])
def test_floats(value, expected):
    assert v.normalize(value, 'float') == expected


@pytest.mark.parametrize('value', ['ninety', '90%', True, '1.2.3', ''])
def test_bad_floats(value):
    with pytest.raises(v.ValueError_):
        v.normalize(value, 'float')


def test_floats_compare_to_the_six_decimals_servers_show():
    assert v.equal(90, '90.000000', 'float')
    assert v.equal('0.1', '0.100000', 'float')
    assert not v.equal(90.5, '90.000000', 'float')


# ---------------------------------------------------------------- enums and strings
def test_enum_case_insensitive():
    choices = ('fsync', 'O_DIRECT')
    assert v.equal('o_direct', 'O_DIRECT', 'enum', choices)
    assert v.normalize('FSYNC', 'enum', choices) == 'fsync'
    with pytest.raises(v.ValueError_) as e:
        v.normalize('direct', 'enum', choices)
    assert 'not one of fsync, O_DIRECT' in str(e.value)
    assert v.normalize(True, 'enum', ('OFF', 'ON', 'IF_SPECIFIED')) == 'ON'


def test_equal_by_meaning():
    assert v.equal(True, 'ON', 'bool')
    assert not v.equal(True, 'OFF', 'bool')
    assert v.equal('1G', '1073741824', 'size')
    assert v.equal(0, '0', 'int')
    assert not v.equal(1, None, 'int')


@pytest.mark.parametrize('desired, actual, kind, equal', [
    ('64K', '65536', 'int', True),
    (-1, '-1', 'int', True),
    ('1G', '1073741823', 'size', False),
    ('yes', 'ON', 'bool', True),
    (0, 'OFF', 'bool', True),
    ('a  ', 'a', 'str', True),
    ('/var/lib/mysql', '/var/lib/mysql/', 'str', True),
    ('/var/lib/mysql', '/var/lib/mysql2/', 'str', False),
    ('on', None, 'bool', False),
    ('1', 'garbage', 'int', False),
])
def test_compare(desired, actual, kind, equal):
    assert v.compare(desired, actual, kind)[0] is equal


def test_compare_refuses_a_bad_desired_value():
    with pytest.raises(v.ValueError_):
        v.compare('12Q', '1', 'size')


# ---------------------------------------------------------------- what the server does to a number
def test_buffer_pool_rounding():
    chunk = 128 << 20
    assert v.buffer_pool_effective(200 << 20, chunk, 1) == 256 << 20
    assert v.buffer_pool_effective(1 << 30, chunk, 8) == 1 << 30
    assert v.buffer_pool_effective(1 << 30, 0, 1) == 1 << 30
    # Below one unit the chunk shrinks at startup: the size asked for is the size run.
    assert v.buffer_pool_effective(64 << 20, chunk, 1) == 64 << 20
    equal, note = v.compare('1000M', str(1 << 30), 'size', rounding=(chunk, 2))
    assert equal and 'rounds' in note


def test_buffer_pool_below_one_unit_cannot_be_reached_at_runtime():
    with pytest.raises(v.ValueError_) as e:
        v.check_buffer_pool_runtime(64 << 20, 128 << 20, 1)
    assert 'rounds it up to 134217728' in str(e.value) and 'restart' in str(e.value)
    v.check_buffer_pool_runtime(256 << 20, 128 << 20, 1)
    v.check_buffer_pool_runtime(64 << 20, 0, 1)        # MariaDB 10.8+: autosized chunk


def test_option_file_values_are_clamped_and_rounded_as_the_server_does():
    limits = v.Limits(100, None, None)
    equal, note = v.compare(100, '50', 'int', limits=limits)
    assert equal and 'makes 50 100' in note
    block = v.Limits(None, None, 1024)
    equal, note = v.compare('4K', '5000', 'int', limits=block)
    assert equal and 'multiple of 1024' in note
    equal, note = v.compare(5000, '4096', 'int', limits=block)
    assert equal and 'rounds 5000 down to 4096' in note


def test_ranges_are_refused_with_the_value_as_written():
    limits = v.Limits(100, 20000, None)
    assert v.check('2K', 'int', None, limits) == 2048
    with pytest.raises(v.ValueError_) as e:
        v.check(50, 'int', None, limits)
    assert str(e.value) == '50 is below the minimum 100'
    with pytest.raises(v.ValueError_) as e:
        v.check('1M', 'int', None, limits)
    assert str(e.value) == '1M is above the maximum 20000'


def test_guess_kind():
    assert v.guess_kind('ON') == 'bool'
    assert v.guess_kind('42') == 'int'
    assert v.guess_kind('90.000000') == 'float'
    assert v.guess_kind('O_DIRECT') == 'str'


def test_values_for_the_server():
    assert v.sql_value('y', 'bool') == 'ON'
    assert v.sql_value('2K', 'int') == 2048
    assert v.sql_value('o_direct', 'enum', ('fsync', 'O_DIRECT')) == 'O_DIRECT'
    assert v.as_text(True) == 'ON' and v.as_text(8) == '8' and v.as_text(None) is None


# ---------------------------------------------------------------- names and kinds
def test_resolve_any_spelling():
    names = {'innodb_adaptive_hash_index_parts', 'innodb_flush_neighbors'}
    assert v.resolve('innodb_adaptive_hash_index_partitions', MYSQL80, names).resolved == \
        'innodb_adaptive_hash_index_parts'
    assert v.resolve('INNODB-FLUSH-NEIGHBORS', MYSQL80, names) == v.Resolved(
        'INNODB-FLUSH-NEIGHBORS', 'innodb_flush_neighbors', None, None)


def test_resolve_problems():
    names = {'innodb_flush_neighbors'}
    bad = v.resolve('a;b', MYSQL80, names)
    assert bad.problem == v.UNKNOWN and 'invalid variable name' in bad.reason
    typo = v.resolve('innodb_flush_neighbours', MYSQL80, names)
    assert typo.problem == v.UNKNOWN and 'did you mean innodb_flush_neighbors?' in typo.reason
    other = v.resolve('innodb_adaptive_hash_index_cells', MYSQL80, names)
    assert other.problem == v.UNSUPPORTED and 'known on other flavors or versions' in other.reason
    plugin = v.resolve('innodb_log_write_ahead_size', MYSQL80, names)
    assert plugin.problem == v.UNSUPPORTED and plugin.resolved == 'innodb_log_write_ahead_size'
    assert 'not loaded' in plugin.reason


def test_describe_prefers_the_tables_then_the_server():
    known = v.describe('innodb_io_capacity', MYSQL80, '200')
    assert (known.kind, known.dynamic, known.limits.minimum) == ('int', True, 100)
    # MariaDB's own type and read-only flag for a variable the tables do not list.
    row = dict(type='DOUBLE', read_only=False, default='90.000000', block_size=None)
    other = v.describe('innodb_max_dirty_pages_pct', MARIADB, '90.000000', row)
    assert (other.kind, other.dynamic, other.default) == ('float', True, '90.000000')
    # MySQL: the kind from the running value, dynamic as a fresh lab server of the version answered (runtime_flags).
    guessed = v.describe('innodb_max_dirty_pages_pct', MYSQL80, '90.000000')
    assert guessed.kind == 'float' and guessed.dynamic is True
    assert v.describe('innodb_autoinc_lock_mode', MYSQL80, '2').dynamic is False
    assert v.describe('no_such_variable_here', MYSQL80, '4').dynamic is None
    aurora = server_identity.ServerIdentity(flavors.AURORA, (8, 0, 32), '8.0.32', True)
    assert v.describe('innodb_adaptive_hash_index', aurora, 'OFF').settable is False


# ---------------------------------------------------------------- desired state reads booleans here too
@pytest.mark.parametrize('word', v.INPUT_TRUE + v.INPUT_FALSE + tuple(w.upper() for w in v.INPUT_TRUE + v.INPUT_FALSE))
def test_role_booleans_are_the_same_words(word):
    checker = role_input.Checker({'x_enabled': word}, {}, {})
    assert checker.boolean('x_enabled') is v.parse_bool(word)
    assert checker.errors == []


def test_role_booleans_refuse_what_values_refuses():
    checker = role_input.Checker({'x_enabled': 'enabled'}, {}, {})
    assert checker.boolean('x_enabled') is None
    assert checker.errors == ["x_enabled must be true or false; got 'enabled'"]


# ---------------------------------------------------------------- the restart gate compares here too
def test_settings_check_compares_as_the_setter_and_verify_do():
    running = {'innodb_io_capacity': '2048', 'innodb_adaptive_hash_index': 'OFF',
               'innodb_adaptive_hash_index_parts': '8', 'innodb_flush_neighbors': '0'}
    got = restart_gate.settings_check(MYSQL80, running, {
        'innodb_io_capacity': '2K', 'innodb_adaptive_hash_index': 'n',
        'innodb_adaptive_hash_index_partitions': 16, 'innodb_flush_neighbors': 'lots'})
    assert got == [('innodb_adaptive_hash_index', 'n', 'OFF', True),
                   ('innodb_adaptive_hash_index_parts', 16, '8', False),
                   ('innodb_flush_neighbors', 'lots', '0', False),
                   ('innodb_io_capacity', '2K', '2048', True)]


def test_bound_problems_names_the_option_and_the_value_in_the_order_given():
    bounds = (('timeout', 1, 86400, 'must be between 1 and 86400 seconds'), ('max_lag', 0, None, 'must be 0 or more'),
              ('ratio', 0.0, 1.0, 'must be between 0 and 1'), ('size', 1, None, 'must be 1 or more'))
    assert v.bound_problems(dict(timeout=300, max_lag=0, ratio=1.0, size=None), bounds) == []
    assert v.bound_problems(dict(timeout=0, max_lag=-1, ratio=float('nan'), size=0), bounds) == [
        'timeout must be between 1 and 86400 seconds, got 0', 'max_lag must be 0 or more, got -1',
        'ratio must be between 0 and 1, got nan', 'size must be 1 or more, got 0']
    assert v.bound_problems(dict(timeout=86401), bounds) == ['timeout must be between 1 and 86400 seconds, got 86401']


# ---------------------------------------------------------------- the shared readers of server values
@pytest.mark.parametrize('value, expected', [('ON', True), (' yes ', True), (1, True), ('TRUE', True), ('OFF', False),
                                             ('0', False), ('', False), (None, None)])
def test_onoff(value, expected):
    assert v.onoff(value) is expected


def test_as_int_and_pick():
    assert v.as_int('12') == 12 and v.as_int(None) is None and v.as_int('x', 0) == 0 and v.as_int('', 5) == 5
    row = dict(Source_Host='', Master_Host='db1', Channel_Name=None)
    assert v.pick(row, 'Source_Host', 'Master_Host') == 'db1'
    assert v.pick(row, 'Channel_Name', 'Connection_name') is None
