# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of module_utils/memcache/containers.py: container checks, the rows written for containers, cache
policies and options."""

from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import containers as m


SPEC = dict(name='token', schema='app', table='token', key_column='id', value_columns=['token'],
            unique_index='PRIMARY', flags_column=None, cas_column=None, expire_column=None)
TABLE = dict(engine='InnoDB', table_type='BASE TABLE')
COLUMNS = {
    'id': dict(data_type='varchar', extra='', char_length=32),
    'token': dict(data_type='varchar', extra='', char_length=128),
    'note': dict(data_type='text', extra='', char_length=65535),
    'n': dict(data_type='int', extra='', char_length=None),
    'created': dict(data_type='datetime', extra='', char_length=None),
}
INDEXES = {'PRIMARY': dict(unique=True, columns=['id']), 'k_n': dict(unique=False, columns=['n']),
           'uk_pair': dict(unique=True, columns=['id', 'n'])}


def spec(**kw):
    s = dict(SPEC)
    s.update(kw)
    return s


def test_valid_container_has_no_problems():
    assert m.check_container_specs([spec()]) == []
    assert m.check_container_against_table(spec(), TABLE, COLUMNS, INDEXES) == []


def test_duplicate_names_and_delimiter_in_name():
    problems = m.check_container_specs([spec(), spec(), spec(name='a.b')])
    assert any("duplicate memcached container name 'token'" in p for p in problems)
    assert any('table_map_delimiter' in p for p in problems)


def test_bad_identifiers_and_missing_values():
    problems = m.check_container_specs([spec(table='tok`en'), spec(name='x', value_columns=[])])
    assert any('not a plain identifier' in p for p in problems)
    assert any('value_columns needs at least one column' in p for p in problems)


def test_missing_table():
    assert 'does not exist' in m.check_container_against_table(spec(), None, {}, {})[0]


def test_missing_column_with_case_hint():
    problems = m.check_container_against_table(spec(key_column='ID'), TABLE, COLUMNS, INDEXES)
    assert any("spelled 'id'" in p for p in problems)


def test_wrong_types():
    problems = m.check_container_against_table(
        spec(key_column='note', value_columns=['created'], flags_column='token'), TABLE, COLUMNS,
        dict(INDEXES, PRIMARY=dict(unique=True, columns=['note'])))
    text = ' '.join(problems)
    assert "key column 'note' is TEXT" in text
    assert "value column 'created' is DATETIME" in text
    assert "flags column 'token' is VARCHAR" in text


def test_index_missing_not_unique_or_on_other_columns():
    assert "index 'nope' does not exist" in ' '.join(
        m.check_container_against_table(spec(unique_index='nope'), TABLE, COLUMNS, INDEXES))
    text = ' '.join(m.check_container_against_table(spec(key_column='n', unique_index='k_n'), TABLE, COLUMNS, INDEXES))
    assert 'is not unique' in text
    text = ' '.join(m.check_container_against_table(spec(unique_index='uk_pair'), TABLE, COLUMNS, INDEXES))
    assert 'must be on the key column' in text


def test_engine_and_virtual_columns():
    cols = dict(COLUMNS, v=dict(data_type='int', extra='VIRTUAL GENERATED', char_length=None))
    text = ' '.join(m.check_container_against_table(spec(), dict(engine='MyISAM', table_type='BASE TABLE'), cols, INDEXES))
    assert 'MyISAM' in text and 'virtual columns (v)' in text


def test_container_row_round_trip_and_comparison():
    row = m.container_row(spec(value_columns=['token', 'note'], flags_column='n'))
    assert row['value_columns'] == 'token,note'
    assert row['flags'] == 'n' and row['cas_column'] == '0' and row['expire_time_column'] == '0'
    assert m.row_to_spec(row)['value_columns'] == ['token', 'note']
    # A row written by hand with '|' between value columns means the same.
    assert m.same_container(spec(value_columns=['token', 'note'], flags_column='n'),
                            dict(row, value_columns='token|note'))
    assert not m.same_container(spec(), row)


def test_container_statement_inserts_a_new_container_and_updates_one_by_name():
    row = m.container_row(dict(name='c', schema='s', table='t', key_column='k', value_columns=['v1', 'v2'],
                               unique_index='PRIMARY'))
    sql, args = m.container_statement(row, exists=False)
    assert sql == ('INSERT INTO `innodb_memcache`.`containers` (name, db_schema, db_table, key_columns, value_columns, '
                   'flags, cas_column, expire_time_column, unique_idx_name_on_key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)')
    assert args == ('c', 's', 't', 'k', 'v1,v2', '0', '0', '0', 'PRIMARY')
    sql, args = m.container_statement(row, exists=True)
    assert sql == ('UPDATE `innodb_memcache`.`containers` SET db_schema = %s, db_table = %s, key_columns = %s, '
                   'value_columns = %s, flags = %s, cas_column = %s, expire_time_column = %s, '
                   'unique_idx_name_on_key = %s WHERE name = %s')
    assert args == ('s', 't', 'k', 'v1,v2', '0', '0', '0', 'PRIMARY', 'c')


def test_policy_and_option_statements_keep_the_stock_tables_columns():
    policy = dict(name='cache_policy', get='innodb_only', set='caching', delete='disabled', flush='innodb_only')
    assert m.policy_statement(policy, exists=False) == (
        'INSERT INTO `innodb_memcache`.`cache_policies` (policy_name, get_policy, set_policy, delete_policy, flush_policy) '
        'VALUES (%s, %s, %s, %s, %s)', ('cache_policy', 'innodb_only', 'caching', 'disabled', 'innodb_only'))
    assert m.policy_statement(policy, exists=True) == (
        'UPDATE `innodb_memcache`.`cache_policies` SET get_policy = %s, set_policy = %s, delete_policy = %s, '
        'flush_policy = %s WHERE policy_name = %s', ('innodb_only', 'caching', 'disabled', 'innodb_only', 'cache_policy'))
    option = dict(name='separator', value='|')
    assert m.row_statement('config_options', ('name', 'value'), option, exists=True) == (
        'UPDATE `innodb_memcache`.`config_options` SET value = %s WHERE name = %s', ('|', 'separator'))
    assert m.row_statement('config_options', ('name', 'value'), option, exists=False) == (
        'INSERT INTO `innodb_memcache`.`config_options` (name, value) VALUES (%s, %s)', ('separator', '|'))
