# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded drop: name validation, sizes, the flavor data it reads, and its run without a server."""

from __future__ import annotations


import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_tables import Drop
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import (
    GuardedError as DropError, human_size, parse_table_name)
from ansible_collections.dbfleet.innodb.plugins.module_utils.signals import Interrupted


@pytest.mark.parametrize('text, pair', [
    ('shop.orders_2019', ('shop', 'orders_2019')),
    ('Shop$1.T', ('Shop$1', 'T')),
    ('dbfleet_test_drop_a.t1', ('dbfleet_test_drop_a', 't1')),
])
def test_valid_names(text, pair):
    assert parse_table_name(text) == pair


@pytest.mark.parametrize('text, words', [
    ('orders', 'exactly "db.table"'),
    ('a.b.c', 'exactly "db.table"'),
    ('shop.*', "table name '*'"),
    ('shop.orders%', "table name 'orders%'"),
    ('shop.ord_rs?', "table name 'ord_rs?'"),
    ('`shop`.`orders`', "schema name '`shop`'"),
    ('shop.orders`; DROP DATABASE mysql; --', 'not a plain identifier'),
    ('shop.orders; DROP DATABASE mysql.x', 'exactly "db.table"'),
    ('shop.orders; DROP TABLE x', "table name 'orders; DROP TABLE x'"),
    ("shop.o'rders", "table name \"o'rders\""),
    ('shop.or ders', "table name 'or ders'"),
    ('shop./*x*/t', "table name '/*x*/t'"),
    ('shop.', "table name ''"),
    ('.orders', "schema name ''"),
    ('123.orders', "schema name '123'"),
    ('shop.' + 'x' * 65, 'at most 64'),
    ('mysql.user', 'system schema'),
    ('MySQL.user', 'system schema'),
    ('sys.sys_config', 'system schema'),
    ('information_schema.TABLES', 'system schema'),
    ('performance_schema.threads', 'system schema'),
    ('innodb_memcache.containers', 'system schema'),
    (None, 'give a string'),
    (['a', 'b'], 'give a string'),
])
def test_refused_names(text, words):
    with pytest.raises(DropError) as e:
        parse_table_name(text)
    assert words in str(e.value)


def test_human_size():
    assert human_size(0) == '0 B'
    assert human_size(16384) == '16.0 KiB'
    assert human_size(3 * 1024 ** 3) == '3.0 GiB'
    assert human_size(None) is None


def test_metadata_lock_sources_data():
    assert capability_facts.capability('metadata_lock_sources', 'mysql', (8, 0, 33)) == ('performance_schema',)
    assert capability_facts.capability('metadata_lock_sources', 'mariadb', (10, 11, 19))[0] == 'metadata_lock_info'
    assert capability_facts.capability('metadata_lock_sources', 'mysql', (5, 6, 14)) == ()


# ------------------------------------------------------------------ guarded part without a server
class _Refused(Exception):
    pass


def test_interrupted_is_not_an_exception_subclass():
    # so that a broad `except Exception` in a library cannot swallow the interruption
    assert not issubclass(Interrupted, Exception)


# ---------------------------------------------------------------- the window again, super_read_only rule
def test_window_checked_again_before_each_table():
    seq = Drop(dict(tables=['a.b'], window='02:00-05:00', timezone='UTC'))
    seq.now = '2024-01-01T03:00:00+00:00'
    assert seq.window_closed() is None
    seq.now = '2024-01-01T05:00:00+00:00'
    assert 'outside the window 02:00-05:00' in seq.window_closed()
    seq.p['force_window'] = True
    assert seq.window_closed() is None
    assert Drop(dict(tables=['a.b'])).window_closed() is None


def test_lift_super_read_only_needs_the_binlog_off():
    def refuse_to_connect(params):
        raise AssertionError('must not connect')

    seq = Drop(dict(tables=['a.b'], lift_super_read_only=True, confirm=True), connect=refuse_to_connect)
    with pytest.raises(DropError) as e:
        seq.run()
    assert 'errant GTID' in str(e.value)
