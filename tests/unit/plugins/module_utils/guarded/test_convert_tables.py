# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parts of the table conversion (target engine, names, the plan per table) and the sequence against a fake
server (what runs in which order, what is refused before any change)."""

from __future__ import annotations

import signal

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.signals import Interrupted
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.convert_tables import (
    CONVERSIONS, Conversion, ConvertError, decide, loaded_engines, parse_tables, target_engine)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.content_checksum import checksum_from_row


class MySQLError(Exception):
    pass


# ---------------------------------------------------------------- pure helpers
@pytest.mark.parametrize('text, key', [('InnoDB', 'INNODB'), ('innodb', 'INNODB'), ('MyRocks', 'ROCKSDB'),
                                       ('rocksdb', 'ROCKSDB'), (' ROCKSDB ', 'ROCKSDB')])
def test_target_engine_spellings(text, key):
    assert target_engine(text) == key


@pytest.mark.parametrize('text, words', [
    ('Foo', "engine 'Foo' is not an engine the collection knows"),
    ('MyISAM', "engine 'MyISAM': tables are converted to InnoDB or ROCKSDB (MyRocks) only"),
    ('TokuDB', "engine 'TokuDB': tables are converted to"),
    ('', 'give an engine name'),
    (None, 'give an engine name'),
])
def test_target_engine_refused_naming_the_input(text, words):
    with pytest.raises(ConvertError) as e:
        target_engine(text)
    assert words in str(e.value)


def test_table_names_checked_like_the_drop_and_deduplicated():
    assert parse_tables(['a.x', 'b.y', 'a.x']) == [('a', 'x'), ('b', 'y')]
    with pytest.raises(ConvertError) as e:
        parse_tables(['a.x', 'mysql.user'])
    assert "schema 'mysql' is a system schema; nothing is converted there" in str(e.value)
    with pytest.raises(ConvertError) as e:
        parse_tables(['shop.orders`; DROP DATABASE x'])
    assert 'not a plain identifier' in str(e.value)
    with pytest.raises(ConvertError):
        parse_tables([])


@pytest.mark.parametrize('engine, target, action', [
    ('MyISAM', 'INNODB', 'convert'), ('Aria', 'INNODB', 'convert'), ('TokuDB', 'INNODB', 'convert'),
    ('ROCKSDB', 'INNODB', 'convert'), ('InnoDB', 'INNODB', 'already'), ('InnoDB', 'ROCKSDB', 'convert'),
    ('ROCKSDB', 'ROCKSDB', 'already'), ('MEMORY', 'INNODB', 'refuse'), ('Aria', 'ROCKSDB', 'refuse'),
    (None, 'INNODB', 'refuse'),
])
def test_decide(engine, target, action):
    got, reason = decide(dict(name='d.t', engine=engine), target)
    assert got == action
    assert 'd.t' in reason or got == 'convert'


def test_conversions_only_between_known_engines():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts
    for target, sources in CONVERSIONS.items():
        assert engine_facts.known_engine(target)
        assert all(engine_facts.known_engine(s) for s in sources)


def test_loaded_engines_only_yes_or_default():
    rows = [dict(ENGINE='InnoDB', SUPPORT='DEFAULT'), dict(ENGINE='ROCKSDB', SUPPORT='NO'),
            dict(ENGINE='Aria', SUPPORT='YES')]
    assert loaded_engines(rows) == ['ARIA', 'INNODB']


# ---------------------------------------------------------------- the sequence against a fake server
class FakeServer(object):
    """Answers the statements the conversion sends; records every statement that changes something."""

    def __init__(self, tables, engines=('InnoDB', 'MyISAM', 'Aria'), replica=False, lock_error=None,
                 alter_changes_rows=False, alter_raises=None):
        self.tables = dict(tables)       # 'db.t' -> engine
        self.engines = engines
        self.replica = replica
        self.lock_error = lock_error
        self.alter_changes_rows = alter_changes_rows
        self.alter_raises = alter_raises
        self.altered = set()
        self.columns = ('id', 'v')
        self.reads = []
        self.writes = []
        self.connections = 0

    def __call__(self, params):
        self.connections += 1
        return FakeConn(self)


class FakeConn(object):
    def __init__(self, server):
        self.server = server

    def cursor(self):
        return FakeCursor(self.server)

    def thread_id(self):
        return 7

    def close(self):
        pass


class FakeCursor(object):
    def __init__(self, server):
        self.s = server
        self.rows = []

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def fetchall(self):
        return self.rows

    def execute(self, sql, args=None):  # noqa: C901 - a dispatcher
        s = self.s
        self.rows = []
        if sql.startswith('SHOW GLOBAL VARIABLES'):
            values = dict(version='11.8.9-MariaDB', version_comment='mariadb.org', server_id='1',
                          gtid_binlog_pos='0-1-42', read_only='OFF', log_bin='ON', hostname='h', port='3306',
                          datadir='/d')
            self.rows = [dict(Variable_name=k, Value=v) for k, v in values.items() if k in (args or values)]
        elif sql.startswith('SHOW ALL SLAVES STATUS'):
            if s.replica:
                self.rows = [dict(Connection_name='', Master_Host='10.0.0.1', Master_Port=3306,
                                  Slave_IO_Running='Yes', Slave_SQL_Running='Yes', Seconds_Behind_Master=0)]
        elif sql.startswith('SHOW'):
            pass
        elif sql.startswith('SELECT CONNECTION_ID() AS id'):
            self.rows = [dict(id=7, now=1700003700)]
        elif 'information_schema.ENGINES' in sql:
            self.rows = [dict(ENGINE=e, SUPPORT='YES') for e in s.engines]
        elif 'information_schema.TABLES' in sql:
            name = '%s.%s' % tuple(args[:2])
            if name in s.tables:
                self.rows = [dict(TABLE_SCHEMA=args[0], TABLE_NAME=args[1], TABLE_TYPE='BASE TABLE',
                                  ENGINE=s.tables[name], TABLE_ROWS=10, DATA_LENGTH=16384, INDEX_LENGTH=0, x=1)]
        elif 'information_schema.COLUMNS' in sql:
            self.rows = [dict(COLUMN_NAME=c) for c in s.columns]
        elif 'SELECT COUNT(*) AS row_count' in sql:
            s.reads.append(sql)
            name = sql.rsplit('FROM ', 1)[1].split(')')[0].replace('`', '')
            changed = s.alter_changes_rows and name in s.altered
            self.rows = [dict(row_count=9 if changed else 10, l0=1, l1=2)]
        elif 'TABLESPACES' in sql:
            self.rows = [dict(FILE_SIZE=9437184, ALLOCATED_SIZE=9437184)]
        elif 'INNODB_TRX' in sql:
            self.rows = [dict(n=0, oldest=None)]
        elif 'setup_instruments' in sql or 'information_schema.PLUGINS' in sql or 'REFERENTIAL' in sql:
            pass
        elif sql.startswith('LOCK TABLES'):
            s.writes.append(sql)
            if s.lock_error:
                raise MySQLError(s.lock_error, 'Lock wait timeout exceeded')
        elif sql.startswith('ALTER TABLE'):
            s.writes.append(sql)
            if s.alter_raises:
                raise s.alter_raises
            name = sql.split()[2].replace('`', '')
            s.tables[name] = sql.rsplit('ENGINE=', 1)[1]
            s.altered.add(name)
        elif 'information_schema.PROCESSLIST' in sql:
            pass
        elif sql.startswith(('UNLOCK', 'SET SESSION', 'KILL')):
            s.writes.append(sql)
        else:  # pragma: no cover - a statement the fake does not know
            raise AssertionError('unexpected statement %s' % sql)
        return len(self.rows)


@pytest.fixture(autouse=True)
def fake_pymysql_errors(monkeypatch):
    """The sequence catches pymysql.err.MySQLError; the fake raises this module's MySQLError."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import convert_tables
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import engine as guarded
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import marker as guarded_marker

    class Err(object):
        pass
    Err.MySQLError = MySQLError
    fake = type('pymysql', (), {'err': Err})
    monkeypatch.setattr(convert_tables, 'pymysql', fake)
    monkeypatch.setattr(guarded, 'pymysql', fake)
    monkeypatch.setattr(guarded_marker, 'pymysql', fake)


def params(**kw):
    p = dict(tables=['shop.a', 'shop.m'], engine='InnoDB', lock_wait_timeout=2, retries=1, retry_delay=0,
             window=None, timezone='UTC', force_window=False, verify=False, follow=False, expect={})
    p.update(kw)
    return p


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path, monkeypatch):
    """Markers go to a private directory of the test, never to the home directory."""
    monkeypatch.setattr(Conversion, 'default_state_dir', str(tmp_path / 'state'))


def run(server, check=False, **kw):
    conv = Conversion(params(**kw), check_mode=check, connect=server, sleep=lambda s: None)
    try:
        conv.run()
        return conv, None
    except ConvertError as e:
        return conv, str(e)


def test_check_mode_lists_each_table_and_changes_nothing():
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'})
    conv, err = run(server, check=True)
    assert err is None and conv.changed
    assert [w for w in server.writes if not w.startswith('SET SESSION')] == []
    assert [t['result'] for t in conv.tables] == ['would_convert', 'would_convert']
    assert any(line.startswith('shop.a: Aria -> InnoDB (16.0 KiB, file 9.0 MiB, ~10 rows)') for line in conv.plan)
    assert any(line.startswith('shop.m: MyISAM -> InnoDB') for line in conv.plan)


def test_real_run_locks_checks_alters_checks_unlocks_per_table_and_second_run_is_unchanged():
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'})
    conv, err = run(server)
    assert err is None and conv.changed
    assert server.writes == ['SET SESSION lock_wait_timeout = 2',
                             'LOCK TABLES `shop`.`a` WRITE', 'ALTER TABLE `shop`.`a` ENGINE=InnoDB', 'UNLOCK TABLES',
                             'LOCK TABLES `shop`.`m` WRITE', 'ALTER TABLE `shop`.`m` ENGINE=InnoDB', 'UNLOCK TABLES']
    assert [t['result'] for t in conv.tables] == ['converted', 'converted']
    assert conv.tables[0]['before'] == conv.tables[0]['after']
    assert conv.gtid_position == '0-1-42'
    server.writes = []
    again, err = run(server)
    assert err is None and not again.changed and server.writes == []
    assert [t['result'] for t in again.tables] == ['already', 'already']


def test_rows_differing_after_the_alter_stop_the_run_and_unlock():
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'}, alter_changes_rows=True)
    conv, err = run(server)
    assert 'stopped: rows or checksum differ after the conversion of shop.a: rows 10 before, 9 after' in err
    assert server.writes[-1] == 'UNLOCK TABLES'
    assert [t['result'] for t in conv.tables] == ['mismatch', 'not_attempted']
    assert server.tables['shop.m'] == 'MyISAM'


@pytest.mark.parametrize('tables, kw, words', [
    ({'shop.a': 'Aria'}, dict(), 'table shop.m does not exist'),
    ({'shop.a': 'Aria', 'shop.m': 'MEMORY'}, dict(), 'shop.m is MEMORY; conversions to InnoDB start from'),
    ({'shop.a': 'InnoDB', 'shop.m': 'InnoDB'}, dict(engine='ROCKSDB'), 'engine ROCKSDB is not loaded on this server'),
])
def test_bad_input_refused_before_any_change(tables, kw, words):
    server = FakeServer(tables)
    conv, err = run(server, **kw)
    assert err and err.startswith('refusing to convert anything') and words in err
    assert not conv.changed and server.writes == []


def test_replica_refused_unless_following_and_follow_changes_nothing():
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'}, replica=True)
    conv, err = run(server)
    assert err.startswith('refusing: this server is a replica') and server.writes == []
    conv, err = run(server, follow=True)
    assert err is None and not conv.changed and server.writes == []
    assert [t['result'] for t in conv.tables] == ['follows_source', 'follows_source']
    conv, err = run(FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'}), follow=True)
    assert 'follow is for replicas' in err


def test_window_closed_stops_before_the_table():
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'})
    conv = Conversion(params(window='02:00-03:00'), connect=server, sleep=lambda s: None)
    conv.now = '2024-01-10T12:00:00+00:00'
    with pytest.raises(ConvertError) as e:
        conv.run()
    assert 'stopped before shop.a: outside the window 02:00-03:00' in str(e.value)
    assert not any(w.startswith(('LOCK', 'ALTER')) for w in server.writes)


def test_lock_wait_timeouts_retried_then_given_up_without_alter():
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'}, lock_error=1205)
    conv, err = run(server, retries=2)
    assert 'stopped at shop.a' in err and 'gave up after 3 attempts' in err
    assert server.writes.count('LOCK TABLES `shop`.`a` WRITE') == 3
    assert not any(w.startswith('ALTER') for w in server.writes)


def test_verify_compares_engine_rows_and_checksum():
    server = FakeServer({'shop.a': 'InnoDB', 'shop.m': 'MyISAM'}, replica=True)
    good = dict(rows=10, checksum=checksum_from_row(dict(l0=1, l1=2))['checksum'])
    conv, err = run(server, verify=True, tables=['shop.a'], expect={'shop.a': good})
    assert err is None and conv.verified == ['shop.a'] and server.writes == []
    conv, err = run(server, verify=True, tables=['shop.a'], expect={'shop.a': dict(good, rows=11)})
    assert 'rows 11 before, 10 after' in err
    conv, err = run(server, verify=True, tables=['shop.m'])
    assert 'shop.m is MyISAM here, not InnoDB' in err


def test_signal_during_the_alter_kills_the_session_from_a_fresh_one_and_stops():
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'}, alter_raises=Interrupted(signal.SIGTERM))
    conv, err = run(server)
    assert err.startswith('interrupted by SIGTERM: the session was killed') and '(shop.a is Aria)' in err
    # nothing more on the interrupted connection (no UNLOCK after the ALTER); the KILL from a second connection
    assert server.writes[-2:] == ['ALTER TABLE `shop`.`a` ENGINE=InnoDB', 'KILL 7'] and server.connections == 2
    assert [t['result'] for t in conv.tables] == ['interrupted', 'not_attempted'] and not conv.changed


def test_odd_column_names_convert_and_unlock():
    server = FakeServer({'shop.a': 'Aria'})
    server.columns = ('first name', 'last-name', 'we`ird', 'prénom')
    conv, err = run(server, tables=['shop.a'])
    assert err is None and [t['result'] for t in conv.tables] == ['converted']
    assert server.writes[-1] == 'UNLOCK TABLES'
    assert all('`first name`' in sql and '`we``ird`' in sql and '`prénom`' in sql for sql in server.reads)


def test_unlock_tables_on_every_path_out_of_the_lock():
    """A server error while the table is locked (the checksum fails) unlocks before the module fails."""
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'})
    real_execute = FakeCursor.execute

    def failing(self, sql, args=None):
        if 'SELECT COUNT(*) AS row_count' in sql:
            raise MySQLError(1317, 'Query execution was interrupted')
        return real_execute(self, sql, args)
    FakeCursor.execute = failing
    try:
        conv, err = run(server)
    finally:
        FakeCursor.execute = real_execute
    assert err == '(1317) Query execution was interrupted' or 'Query execution was interrupted' in err
    assert server.writes[-2:] == ['LOCK TABLES `shop`.`a` WRITE', 'UNLOCK TABLES']
    assert not any(w.startswith('ALTER') for w in server.writes)


def test_conversion_killed_mid_alter_leaves_a_marker_and_the_next_run_checks_its_checksum(tmp_path):
    """issue 23: a conversion killed outright during the ALTER (SIGKILL: no finally) leaves a marker with the table
    and its checksum before; the next run compares the table, now InnoDB, with it instead of skipping it."""
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import marker as guarded_marker

    class Killed(BaseException):
        pass

    server = FakeServer({'shop.a': 'Aria'}, alter_raises=Killed())
    conv = Conversion(params(tables=['shop.a']), connect=server, sleep=lambda s: None)
    # SIGKILL: nothing of the process runs after the ALTER started, the finally blocks included
    conv.after_body = lambda interrupted: None
    with pytest.raises(Killed):
        conv.run()
    data = conv.marker.read()
    assert data['state'] == 'running' and data['converting']['name'] == 'shop.a'
    assert data['converting']['before'] == dict(rows=10, checksum='0000000100000002')
    # meanwhile the ALTER completed on the server; the killed process's pid is gone
    server.tables['shop.a'] = 'InnoDB'
    server.alter_raises = None
    conv.marker.write(dict(data, pid=2 ** 22 + 99))
    server.reads = []
    again, err = run(server, tables=['shop.a'])
    assert err is None and [t['result'] for t in again.tables] == ['verified'] and len(server.reads) == 1
    assert again.interrupted_run['found'] == 'convert'
    # had the rows changed, the next run stops and says so
    conv.marker.write(dict(data, pid=2 ** 22 + 99))
    server.alter_changes_rows = True
    server.altered.add('shop.a')
    again, err = run(server, tables=['shop.a'])
    assert 'differ after the interrupted run' in err and 'rows 10 before, 9 after' in err
    assert guarded_marker.MARKER_VERSION == data['version']


def test_cluster_member_follows_the_alter_of_another_member(monkeypatch):
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import engine as guarded  # pylint: disable=import-outside-toplevel
    from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.scope import ClusterScope  # pylint: disable=import-outside-toplevel
    monkeypatch.setattr(guarded, 'scope_for', lambda identity, variables: ClusterScope('galera'))
    server = FakeServer({'shop.a': 'Aria', 'shop.m': 'MyISAM'})  # a primary-like member, not a replica
    conv, err = run(server, follow=True)
    assert err is None and not conv.changed
    assert [w for w in server.writes if not w.startswith('SET SESSION')] == []
    assert [t['result'] for t in conv.tables] == ['follows_cluster', 'follows_cluster']
    assert any(line.endswith('the ALTER arrives with the cluster') for line in conv.plan)
