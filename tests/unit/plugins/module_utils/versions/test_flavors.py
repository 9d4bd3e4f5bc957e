import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors as f
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data


def test_resolve_name_prefers_what_the_server_has():
    names = {'innodb_adaptive_hash_index_partitions'}
    assert f.resolve_name('innodb_adaptive_hash_index_parts', 'percona', (5, 6, 40), names) == \
        'innodb_adaptive_hash_index_partitions'
    assert f.resolve_name('innodb_adaptive_hash_index_parts', 'mysql', (5, 6, 14), set()) is None


@pytest.mark.parametrize('flavor, version, default', [
    ('mysql', (5, 7, 22), 'ON'), ('mysql', (8, 0, 33), 'ON'), ('mysql', (8, 4, 0), 'OFF'),
    ('mariadb', (10, 4, 30), 'ON'), ('mariadb', (10, 11, 19), 'OFF'),
])
def test_ahi_default(flavor, version, default):
    assert f.variable_facts('innodb_adaptive_hash_index', flavor, version).default == default


@pytest.mark.parametrize('flavor, version, default', [
    ('mysql', (5, 7, 22), 1), ('mysql', (8, 0, 33), 0), ('mariadb', (10, 11, 19), 1),
])
def test_flush_neighbors_default(flavor, version, default):
    assert f.variable_facts('innodb_flush_neighbors', flavor, version).default == default


def test_partitions_are_static():
    assert f.variable_facts('innodb_adaptive_hash_index_parts', 'mysql', (8, 0, 33)).dynamic is False


def test_aurora_reader_cannot_take_ahi():
    reader = server_identity.ServerIdentity('aurora-mysql', (8, 0, 28), '8.0.28', True)
    writer = server_identity.ServerIdentity('aurora-mysql', (8, 0, 28), '8.0.28', False)
    assert f.settable('innodb_adaptive_hash_index', reader)[0] is False
    assert f.settable('innodb_adaptive_hash_index', writer)[0] is True


def test_every_span_is_well_formed():
    for table in (f.VARIABLES, capability_facts.CAPABILITIES):
        for name, spans in table.items():
            for span in spans:
                assert set(span.flavors) <= set(f.FLAVORS), name
                assert span.until is None or span.since < span.until, name


def test_log_file_size_online_resize_since_mariadb_10_9():
    assert f.variable_facts('innodb_log_file_size', 'mariadb', (10, 11, 19)).dynamic is True
    assert f.variable_facts('innodb_log_file_size', 'mariadb', (10, 6, 16)).dynamic is False
    assert f.variable_facts('innodb_log_file_size', 'mysql', (8, 0, 33)).dynamic is False


# ---------------------------------------------------------------- corrections proven or documented
@pytest.mark.parametrize('name, flavor, version, field, expected', [
    # Aurora MySQL 8.4 has both (the collection called them absent before); defaults are the parameter group's
    ('innodb_adaptive_hash_index', 'aurora-mysql', (8, 4, 7), 'default', None),
    ('innodb_io_capacity', 'aurora-mysql', (8, 4, 7), 'dynamic', True),
    ('innodb_adaptive_hash_index', 'aurora-mysql', (8, 0, 36), 'default', 'ON'),
    # MariaDB
    ('innodb_buffer_pool_instances', 'mariadb', (10, 5, 27), 'dynamic', False),
    ('innodb_lru_scan_depth', 'mariadb', (10, 5, 6), 'default', 1024),
    ('innodb_lru_scan_depth', 'mariadb', (10, 5, 7), 'default', 1536),
    ('innodb_log_write_ahead_size', 'mariadb', (10, 6, 20), 'dynamic', True),
    ('innodb_log_write_ahead_size', 'mariadb', (10, 11, 9), 'default', 512),
    ('innodb_log_write_ahead_size', 'mariadb', (11, 4, 3), 'dynamic', False),
    ('innodb_log_write_ahead_size', 'mariadb', (11, 8, 9), 'maximum', 4096),
    ('innodb_buffer_pool_chunk_size', 'mariadb', (10, 8, 0), 'default', 134217728),
    ('innodb_buffer_pool_chunk_size', 'mariadb', (10, 8, 1), 'default', 0),
    ('lock_wait_timeout', 'mariadb', (10, 11, 19), 'default', 86400),
    ('lock_wait_timeout', 'mysql', (8, 0, 33), 'default', 31536000),
    ('innodb_adaptive_hash_index', 'mariadb', (13, 1, 1), 'choices', ('OFF', 'ON', 'IF_SPECIFIED')),
    ('innodb_adaptive_hash_index', 'mariadb', (13, 1, 0), 'kind', 'bool'),
    ('innodb_flush_log_at_trx_commit', 'mysql', (9, 7, 4), 'maximum', 2),
    ('innodb_flush_log_at_trx_commit', 'mariadb', (11, 8, 9), 'maximum', 3),
    # MySQL
    ('innodb_redo_log_capacity', 'mysql', (8, 0, 30), 'default', 104857600),
    ('innodb_redo_log_capacity', 'percona', (8, 4, 3), 'dynamic', True),
    ('innodb_api_trx_level', 'mysql', (9, 7, 4), 'dynamic', True),
    ('daemon_memcached_option', 'mysql', (8, 0, 33), 'plugin', 'daemon_memcached'),
])
def test_corrected_facts(name, flavor, version, field, expected):
    facts = f.variable_facts(name, flavor, version)
    assert facts is not None, '%s should exist on %s %s' % (name, flavor, version)
    assert getattr(facts, field) == expected


@pytest.mark.parametrize('name, flavor, version', [
    ('innodb_buffer_pool_instances', 'mariadb', (10, 6, 0)),
    ('innodb_log_write_ahead_size', 'mariadb', (10, 8, 0)),
    ('innodb_log_write_ahead_size', 'mariadb', (10, 11, 8)),
    ('innodb_log_write_ahead_size', 'mariadb', (11, 4, 2)),
    ('innodb_adaptive_hash_index_cells', 'mariadb', (11, 8, 3)),
    ('innodb_adaptive_hash_index_cells', 'mariadb', (12, 0, 2)),
    ('innodb_adaptive_hash_index_cells', 'mariadb', (12, 1, 1)),
    ('innodb_adaptive_hash_index_cells', 'mariadb', (12, 2, 0)),
    ('innodb_redo_log_capacity', 'mysql', (8, 0, 29)),
    ('innodb_redo_log_capacity', 'mariadb', (11, 8, 9)),
    ('innodb_log_file_size', 'mysql', (9, 7, 4)),
    ('daemon_memcached_option', 'mysql', (8, 3, 0)),
])
def test_absent_where_the_sources_say_so(name, flavor, version):
    assert f.variable_facts(name, flavor, version) is None


@pytest.mark.parametrize('flavor, version', [('mariadb', (11, 8, 4)), ('mariadb', (12, 1, 2)),
                                             ('mariadb', (12, 2, 1)), ('mariadb', (13, 0, 0))])
def test_ahi_cells_exist_where_documented(flavor, version):
    assert f.variable_facts('innodb_adaptive_hash_index_cells', flavor, version).dynamic is True


def test_the_memcached_plugin_brings_its_three_variables():
    # The version table says which variables a plugin brings; memcache/plugin.py takes them from it, not a list of its own.
    from ansible_collections.dbfleet.innodb.plugins.module_utils.memcache import plugin as memcached
    assert f.plugin_variables('daemon_memcached') == ('daemon_memcached_option', 'daemon_memcached_r_batch_size',
                                                      'daemon_memcached_w_batch_size')
    assert memcached.PLUGIN_VARIABLES == f.plugin_variables(memcached.PLUGIN_NAME)
    assert f.plugin_variables('no_such_plugin') == ()
    # The InnoDB API variables are InnoDB's own: they outlived the plugin (MySQL 9.7.4 has them).
    assert f.variable_facts('innodb_api_trx_level', 'mysql', (9, 7, 4)).plugin is None


# ---------------------------------------------------------------- the hand-checked spans against the servers' own data
def _span_disagreements(label, name, table, data):
    """What the table's VarFacts says of name on a version that the version's own data (flavor_data: read from a
    fresh server of it) contradicts: existence (a plugin's variable excepted: the data's server loaded no plugin),
    dynamic, minimum, maximum, choices, a compiled default that does not depend on the machine, the kind."""
    if table is None or data is None:
        if table is not None and table.plugin:
            return []
        return [] if (table is None) == (data is None) else [
            '%s %s: the table says it %s, the server %s' % (
                label, name, 'exists' if table else 'does not exist', 'has it' if data else 'has no such variable')]
    out = []
    for field in ('dynamic', 'minimum', 'maximum'):
        ours, theirs = getattr(table, field), getattr(data, field)
        if ours is not None and theirs is not None and ours != theirs:
            out.append('%s %s: %s %r in the table, %r on the server' % (label, name, field, ours, theirs))
    if table.choices and data.choices and {c.upper() for c in table.choices} != {c.upper() for c in data.choices}:
        out.append('%s %s: choices %s in the table, %s on the server' % (label, name, table.choices, data.choices))
    if table.default is not None and data.machine is None and str(table.default).upper() != str(data.default).upper():
        out.append('%s %s: default %r in the table, %r on the server' % (label, name, table.default, data.default))
    kind = {'size': 'int'}.get(table.kind, table.kind)
    # MySQL's catalog has no enumerations of its own: an enum of the table is a str there.
    if kind != data.kind and not (kind == 'enum' and data.kind == 'str' and not data.choices):
        out.append('%s %s: kind %s in the table, %s on the server' % (label, name, table.kind, data.kind))
    return out


@pytest.mark.parametrize('version_facts', sorted(flavor_data.FACTS.values(), key=lambda f: f.label), ids=str)
def test_every_span_of_the_version_table_agrees_with_the_servers_own_data(version_facts):
    """flavors.VARIABLES (hand-written, with its sources) and flavor_data (generated from the lab's real servers by
    lab/read_flavor_data.py) are two sources: where the data covers a variable of the table, they agree."""
    problems = []
    for name in sorted(flavors.VARIABLES):
        problems.extend(_span_disagreements(
            version_facts.label, name, flavors.variable_facts(name, version_facts.flavor, version_facts.version),
            version_facts.variable(name)))
    assert problems == []


def test_a_span_that_the_data_contradicts_is_named():
    data = flavor_data.facts_for('mysql', (8, 0))
    table = flavors.variable_facts('innodb_flush_neighbors', 'mysql', (8, 0, 33))
    assert _span_disagreements('mysql 8.0.33', 'innodb_flush_neighbors', table._replace(maximum=3),
                               data.variable('innodb_flush_neighbors')) == [
        'mysql 8.0.33 innodb_flush_neighbors: maximum 3 in the table, 2 on the server']
    assert _span_disagreements('mysql 8.0.33', 'innodb_io_capacity', None, data.variable('innodb_io_capacity'))


@pytest.mark.parametrize('name', sorted(n for n in flavors.RENAMED_VARIABLES if n in flavors.VARIABLES))
def test_a_renamed_variable_is_gone_where_its_spans_end(name):
    """A name both tables hold: RENAMED_VARIABLES' span of a flavor starts where its last VARIABLES span ends (the
    redo log's names: the cut-over is stated once, in VARIABLES)."""
    for span in flavors.RENAMED_VARIABLES[name]:
        for flavor in span.flavors:
            ends = [s.until for s in flavors.VARIABLES[name] if flavor in s.flavors]
            assert ends and ends[-1] == span.since, (name, flavor, ends, span.since)
