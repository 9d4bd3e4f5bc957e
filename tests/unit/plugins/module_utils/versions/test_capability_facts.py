import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts


@pytest.mark.parametrize('flavor, version, expected', [
    ('mysql', (5, 6, 14), None),
    ('mysql', (5, 7, 22), 'innodb_adaptive_hash_index_parts'),
    ('mysql', (8, 0, 33), 'innodb_adaptive_hash_index_parts'),
    ('percona', (5, 6, 40), 'innodb_adaptive_hash_index_partitions'),
    ('percona', (8, 0, 36), 'innodb_adaptive_hash_index_parts'),
    ('mariadb', (10, 1, 48), None),
    ('mariadb', (10, 11, 19), 'innodb_adaptive_hash_index_parts'),
])
def test_ahi_partition_variable(flavor, version, expected):
    assert capability_facts.ahi_partition_variable(flavor, version) == expected


@pytest.mark.parametrize('flavor, version, supported', [
    ('mysql', (5, 6, 14), True), ('mysql', (8, 0, 33), True), ('mysql', (8, 2, 0), True),
    ('mysql', (8, 3, 0), False), ('mysql', (8, 4, 3), False), ('mariadb', (10, 11, 19), False),
    ('aurora-mysql', (8, 0, 28), False),
])
def test_memcached_support(flavor, version, supported):
    ok, reason = capability_facts.memcached_support(flavor, version)
    assert ok is supported
    assert reason


def test_memcached_reason_names_the_removal():
    assert '8.3.0' in capability_facts.memcached_support('mysql', (8, 4, 0))[1]
    assert 'MariaDB' in capability_facts.memcached_support('mariadb', (10, 11, 19))[1]


@pytest.mark.parametrize('flavor, version, column', [
    ('mysql', (8, 0, 33), 'STATUS'), ('mariadb', (10, 4, 30), 'STATUS'), ('mariadb', (10, 11, 19), 'ENABLED'),
])
def test_metrics_column(flavor, version, column):
    assert capability_facts.capability('innodb_metrics_enabled_column', flavor, version) == column


@pytest.mark.parametrize('version, lazy', [
    ((10, 2, 32), False), ((10, 2, 33), True), ((10, 3, 23), False), ((10, 3, 24), True),
    ((10, 4, 13), False), ((10, 4, 14), True), ((10, 5, 3), False), ((10, 5, 4), True), ((10, 11, 19), True),
])
def test_lazy_ahi_drop_by_series(version, lazy):
    assert capability_facts.capability('ahi_lazy_drop', 'mariadb', version) is lazy
    assert capability_facts.capability('ahi_lazy_drop', 'mysql', (8, 0, 33)) is False


def test_set_persist():
    assert capability_facts.capability('set_persist', 'mysql', (8, 0, 33)) is True
    assert capability_facts.capability('set_persist', 'mysql', (5, 7, 22)) is False
    assert capability_facts.capability('set_persist', 'mariadb', (10, 11, 19)) is False
    assert capability_facts.capability('set_persist', 'aurora-mysql', (8, 0, 28)) is False


def test_option_groups():
    assert capability_facts.option_groups_for('mysql', (8, 0, 33)) == ('mysqld', 'server', 'mysqld-8.0')
    groups = capability_facts.option_groups_for('mariadb', (10, 11, 19))
    assert 'mariadbd' in groups and 'mariadb-10.11' in groups and 'mysqld-10.11' in groups


@pytest.mark.parametrize('flavor, version, rounds', [
    ('mysql', (8, 0, 33), True), ('mysql', (5, 7, 22), True), ('mariadb', (10, 6, 16), True),
    ('mariadb', (10, 11, 19), False),
])
def test_buffer_pool_rounding_by_version(flavor, version, rounds):
    assert capability_facts.capability('buffer_pool_chunk_rounding', flavor, version) is rounds


def test_one_source_for_the_ahi_partition_variable():
    # No second table: capabilities() derives it from VARIABLES/ALIASES through the one function.
    assert 'ahi_partition_variable' not in capability_facts.CAPABILITIES
    for flavor, version in (('mysql', (9, 7, 4)), ('percona', (5, 6, 40)), ('mysql', (5, 6, 14)),
                            ('mariadb', (11, 8, 9))):
        assert capability_facts.capabilities(flavor, version)['ahi_partition_variable'] == capability_facts.ahi_partition_variable(flavor, version)


@pytest.mark.parametrize('flavor, version, expected', [
    ('mysql', (9, 7, 4), 'SHOW BINARY LOG STATUS'), ('mysql', (8, 2, 0), 'SHOW BINARY LOG STATUS'),
    ('mysql', (8, 0, 33), 'SHOW MASTER STATUS'), ('mariadb', (11, 8, 9), 'SHOW MASTER STATUS'),
])
def test_binlog_status_statement(flavor, version, expected):
    assert capability_facts.capability('binlog_status_statement', flavor, version) == expected
