# -*- coding: utf-8 -*-
"""Unit tests for the storage engine facts (engine_facts.STORAGE_ENGINES) and module_utils/storage_engines.py."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import storage_engines as se

MARIADB118 = server_identity.ServerIdentity('mariadb', (11, 8, 3), '11.8.3-MariaDB-0+deb13u1', None)
PERCONA8020 = server_identity.ServerIdentity('percona', (8, 0, 20), '8.0.20-11', None)


def table(schema, name, engine, rows=10, data=16384, index=0, comment=''):
    return dict(TABLE_SCHEMA=schema, TABLE_NAME=name, TABLE_TYPE='BASE TABLE', ENGINE=engine, TABLE_ROWS=rows,
                DATA_LENGTH=data, INDEX_LENGTH=index, DATA_FREE=0, ROW_FORMAT='Dynamic', CREATE_OPTIONS='',
                TABLE_COMMENT=comment)


# ---------------------------------------------------------------- the facts
@pytest.mark.parametrize('engine, flavor, version, status', [
    ('TokuDB', 'percona', (5, 7, 30), engine_facts.ENGINE_AVAILABLE),
    ('TokuDB', 'percona', (8, 0, 13), engine_facts.ENGINE_DEPRECATED),
    ('TokuDB', 'percona', (8, 0, 27), engine_facts.ENGINE_DEPRECATED),
    ('TokuDB', 'percona', (8, 0, 28), engine_facts.ENGINE_REMOVED),
    ('TokuDB', 'mariadb', (10, 4, 30), engine_facts.ENGINE_AVAILABLE),
    ('TokuDB', 'mariadb', (10, 5, 0), engine_facts.ENGINE_REMOVED),
    ('TokuDB', 'mariadb', (11, 8, 3), engine_facts.ENGINE_REMOVED),
    ('TokuDB', 'mysql', (8, 0, 33), engine_facts.ENGINE_NEVER),
    ('Aria', 'mariadb', (11, 8, 3), engine_facts.ENGINE_AVAILABLE),
    ('Aria', 'mysql', (8, 4, 0), engine_facts.ENGINE_NEVER),
    ('ROCKSDB', 'mariadb', (10, 2, 4), engine_facts.ENGINE_NOT_YET),
    ('rocksdb', 'mariadb', (11, 8, 3), engine_facts.ENGINE_AVAILABLE),
    ('ROCKSDB', 'percona', (8, 0, 40), engine_facts.ENGINE_AVAILABLE),
    ('ROCKSDB', 'mysql', (8, 4, 0), engine_facts.ENGINE_NEVER),
    ('InnoDB', 'aurora-mysql', (8, 0, 32), engine_facts.ENGINE_AVAILABLE),
    ('NoSuchEngine', 'mysql', (8, 4, 0), engine_facts.ENGINE_UNKNOWN),
])
def test_engine_status(engine, flavor, version, status):
    got, reason, _facts = engine_facts.engine_status(engine, flavor, version)
    assert got == status, reason
    assert reason


def test_engine_status_reasons_name_versions():
    _status, reason, _facts = engine_facts.engine_status('TokuDB', 'percona', (8, 0, 30))
    assert '8.0.28' in reason and '8.0.13' in reason and 'TokuDB' in reason
    _status, reason, _facts = engine_facts.engine_status('TokuDB', 'mariadb', (10, 6, 0))
    assert '10.5.0' in reason and 'MDEV-19780' in reason


def test_engine_available():
    assert engine_facts.engine_available('InnoDB', 'mysql', (9, 7, 4)) is True
    assert engine_facts.engine_available('TokuDB', 'percona', (8, 0, 20)) is True    # deprecated, still there
    assert engine_facts.engine_available('Aria', 'mysql', (8, 4, 0)) is False
    assert engine_facts.engine_available('FANCY', 'mysql', (8, 4, 0)) is None


def test_every_engine_span_is_well_formed():
    for key, spans in engine_facts.STORAGE_ENGINES.items():
        assert key == key.upper()
        for span in spans:
            assert set(span.flavors) <= set(flavors.FLAVORS), key
            if span.deprecated and span.removed:
                assert span.since <= span.deprecated < span.removed, key
            if span.removed:
                assert span.since < span.removed, key
        seen = [f for s in spans for f in s.flavors]
        assert len(seen) == len(set(seen)), '%s lists a flavor twice' % key


# ---------------------------------------------------------------- target
def test_parse_target():
    assert se.parse_target(None, None, MARIADB118) is None
    assert se.parse_target('mysql', '8.4.0', MARIADB118) == ('mysql', (8, 4, 0))
    assert se.parse_target(None, '11.8', MARIADB118) == ('mariadb', (11, 8, 0))
    with pytest.raises(ValueError, match='target_version'):
        se.parse_target('mysql', 'eight', MARIADB118)
    with pytest.raises(ValueError, match='target_flavor'):
        se.parse_target('oracle', '8.4.0', MARIADB118)
    with pytest.raises(ValueError, match='needs target_version'):
        se.parse_target('mysql', None, MARIADB118)


# ---------------------------------------------------------------- report
ENGINES = se.engine_rows([
    dict(ENGINE='InnoDB', SUPPORT='DEFAULT', TRANSACTIONS='YES', COMMENT='x'),
    dict(ENGINE='Aria', SUPPORT='YES', TRANSACTIONS='NO', COMMENT='y'),
    dict(ENGINE='ROCKSDB', SUPPORT='NO', TRANSACTIONS='YES', COMMENT='z'),
])


def test_engine_rows_loaded():
    by_name = dict((e['engine'], e) for e in ENGINES)
    assert by_name['InnoDB']['loaded'] and by_name['InnoDB']['default']
    assert by_name['Aria']['loaded'] and not by_name['Aria']['transactions']
    assert not by_name['ROCKSDB']['loaded']


def test_summarize_sums_per_engine():
    tables = se.table_rows([table('shop', 'a', 'InnoDB', 100, 16384, 16384),
                            table('shop', 'b', 'InnoDB', 50, 32768),
                            table('shop', 'c', 'Aria', 3, 8192, 8192)])
    by_engine = se.summarize(tables)
    assert by_engine['InnoDB'] == dict(tables=2, rows_estimate=150, data_bytes=49152, index_bytes=16384,
                                       total_bytes=65536)
    assert by_engine['Aria']['tables'] == 1 and by_engine['Aria']['total_bytes'] == 16384


def test_blockers_for_mysql_target():
    tables = se.table_rows([table('shop', 'orders', 'InnoDB'), table('shop', 'sessions', 'Aria'),
                            table('shop', 'events', 'ROCKSDB'), table('shop', 'old', 'TokuDB'),
                            table('shop', 'broken', None, comment="Unknown storage engine 'TokuDB'")])
    found = dict((b['table'], b) for b in se.blockers(tables, 'mysql', (8, 4, 0)))
    assert sorted(found) == ['broken', 'events', 'old', 'sessions']
    assert 'shop.sessions uses Aria' in found['sessions']['reason']
    assert 'mysql 8.4.0' in found['sessions']['reason']
    assert 'ENGINE=InnoDB' in found['sessions']['reason']
    assert found['events']['status'] == engine_facts.ENGINE_NEVER
    assert found['broken']['status'] == engine_facts.ENGINE_UNKNOWN
    assert "Unknown storage engine" in found['broken']['reason']


def test_tokudb_blocker_suggests_myrocks_where_the_target_has_it():
    tables = se.table_rows([table('logs', 'hits', 'TokuDB')])
    (blocker,) = se.blockers(tables, 'percona', (8, 0, 28))
    assert blocker['status'] == engine_facts.ENGINE_REMOVED
    assert 'ROCKSDB (MyRocks) or InnoDB' in blocker['reason']
    assert se.blockers(tables, 'percona', (8, 0, 27)) == []     # deprecated is no blocker


def test_no_blockers_on_innodb_only_host():
    tables = se.table_rows([table('shop', 'orders', 'InnoDB'), table('shop', 'm', 'MEMORY')])
    assert se.blockers(tables, 'mysql', (8, 4, 0)) == []


def test_engine_report_with_and_without_target():
    tables = se.table_rows([table('shop', 'orders', 'InnoDB'), table('shop', 'sessions', 'Aria')])
    report = se.engine_report(MARIADB118, ENGINES, tables)
    assert report['target'] is None and report['blockers'] == []
    assert report['engines_loaded'] == ['Aria', 'InnoDB']
    assert report['default_engine'] == 'InnoDB'
    assert report['engines_in_use'] == ['Aria', 'InnoDB']
    assert report['lifecycle']['Aria']['status'] == engine_facts.ENGINE_AVAILABLE
    assert 'tables' not in report
    report = se.engine_report(MARIADB118, ENGINES, tables, ('mysql', (8, 4, 0)), list_tables=True)
    assert report['target'] == dict(flavor='mysql', version='8.4.0')
    assert [b['table'] for b in report['blockers']] == ['sessions']
    assert len(report['tables']) == 2


def test_notes_deprecated_engine_and_plugin_on_target():
    tables = se.table_rows([table('logs', 'hits', 'TokuDB'), table('logs', 'ev', 'ROCKSDB')])
    notes = se.warnings_for(tables, PERCONA8020, ('percona', (8, 0, 27)))
    assert any('deprecated the TokuDB engine in 8.0.13' in n and '(tables: 1)' in n for n in notes)
    assert any('ha_rocksdb' in n for n in notes)


def test_asked_engines_get_a_lifecycle_and_unknown_names_are_refused():
    report = se.engine_report(MARIADB118, ENGINES, [], asked=se.check_engine_names(['rocksdb']))
    assert report['lifecycle']['ROCKSDB']['status'] == engine_facts.ENGINE_AVAILABLE
    assert report['lifecycle']['ROCKSDB']['plugin'] == 'ha_rocksdb'
    assert report['lifecycle']['InnoDB']['plugin'] is None
    mysql = server_identity.ServerIdentity('mysql', (8, 4, 0), '8.4.0', None)
    report = se.engine_report(mysql, ENGINES, [], asked=['ROCKSDB'])
    assert report['lifecycle']['ROCKSDB']['status'] == engine_facts.ENGINE_NEVER
    with pytest.raises(ValueError, match="'Toku'"):
        se.check_engine_names(['ROCKSDB', 'Toku'])


# ---------------------------------------------------------------- upgrade targets of verify
@pytest.mark.parametrize('text, expected', [
    ('mysql-8.4', ('mysql', (8, 4, 0))),
    ('mariadb-11.8', ('mariadb', (11, 8, 0))),
    ('percona-8.0.28', ('percona', (8, 0, 28))),
    ('aurora-mysql-3.0', ('aurora-mysql', (3, 0, 0))),
    ('', None),
    (None, None),
])
def test_parse_target_spec(text, expected):
    assert se.parse_target_spec(text) == expected


@pytest.mark.parametrize('text', ['8.4', 'mysql', 'mysql-', 'mysql-eight', 'oracle-8.4', 'mysql 8.4', 'mysql-8',
                                  'MySQL-8.4', 'mysql-8.4.1.2', 'aurora-8.0'])
def test_parse_target_spec_refuses_naming_the_input(text):
    with pytest.raises(ValueError, match=r"verify_target_version '%s' is not an upgrade target" % text):
        se.parse_target_spec(text, 'verify_target_version')


def test_upgrade_blockers_on_current_and_target_version():
    tables = se.table_rows([table('shop', 'sessions', 'Aria', rows=300, data=32768, index=16384),
                            table('shop', 'orders', 'InnoDB'), table('logs', 'hits', 'TokuDB')])
    found = dict((b['table'], b) for b in se.upgrade_blockers(tables, MARIADB118, ('mysql', (8, 4, 0))))
    assert sorted(found) == ['hits', 'sessions']
    assert found['sessions']['where'] == ['target'] and found['sessions']['gone_in'] is None
    assert found['sessions']['rows_estimate'] == 300 and found['sessions']['total_bytes'] == 49152
    assert found['sessions']['source'] == engine_facts.ENGINE_SOURCES['ARIA']
    # TokuDB: gone on MariaDB 11.8 itself, and never in MySQL: one finding, both reasons.
    assert found['hits']['where'] == ['current', 'target']
    assert found['hits']['gone_in'] == 'mariadb 10.5.0' and 'MDEV-19780' in found['hits']['source']
    assert 'removed the TokuDB engine in 10.5.0' in found['hits']['reason']
    assert 'mysql never shipped the TokuDB engine' in found['hits']['reason']


def test_upgrade_blockers_none_and_without_target():
    tables = se.table_rows([table('shop', 'orders', 'InnoDB'), table('shop', 'sessions', 'Aria')])
    assert se.upgrade_blockers(tables, MARIADB118, ('mariadb', (11, 8, 0))) == []
    assert se.upgrade_blockers(tables, MARIADB118, None) == []


def test_every_engine_that_can_block_has_a_source():
    assert set(engine_facts.ENGINE_SOURCES) == set(engine_facts.STORAGE_ENGINES) - {'INNODB', 'PERFORMANCE_SCHEMA'}


def test_loaded_engine_facts_for_the_myrocks_desired_state():
    asked = []

    def query(_conn, sql, args=None):
        asked.append((sql, args))
        if 'information_schema.ENGINES' in sql:
            return [dict(ENGINE='ROCKSDB', SUPPORT='YES', TRANSACTIONS='YES', COMMENT=''),
                    dict(ENGINE='InnoDB', SUPPORT='DEFAULT', TRANSACTIONS='YES', COMMENT='')]
        return [dict(n=3)]

    assert se.loaded_engine_facts(None, query, ['rocksdb']) == {'ROCKSDB': dict(loaded=True, tables=3)}
    assert asked[-1][1] == ['ROCKSDB']
