# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who holds a metadata lock on a table (guarded/locks.py): a source is listed only when its probe says it is
enabled; its rows come back in one shape, whichever source gave them."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import locks

HOLDER = dict(db='shop', tbl='big', id=42, user='app', host='10.0.0.9:5000', command='Sleep', time=12,
              lock_type='SHARED_READ', lock_status='GRANTED')


def test_a_source_whose_probe_says_off_lists_nobody(monkeypatch):
    monkeypatch.setattr(locks, 'query_one', lambda conn, sql, args=None: dict(ENABLED='NO'))
    monkeypatch.setattr(locks, 'query', lambda conn, sql, args=None: [HOLDER])
    assert locks.lock_holders(None, 'performance_schema', [('shop', 'big')]) is None


def test_the_holders_of_each_table_in_one_shape(monkeypatch):
    asked = []
    monkeypatch.setattr(locks, 'query_one', lambda conn, sql, args=None: dict(PLUGIN_STATUS='ACTIVE'))

    def query(conn, sql, args=None):
        asked.append(args)
        return [HOLDER] if args[-1] == 'big' else []
    monkeypatch.setattr(locks, 'query', query)
    rows = locks.lock_holders(None, 'metadata_lock_info', [('shop', 'big'), ('shop', 'small')])
    assert asked == [('Table%', 'shop', 'big'), ('Table%', 'shop', 'small')]
    assert rows == [dict(table='shop.big', connection_id=42, user='app', host='10.0.0.9:5000', command='Sleep',
                         seconds=12, lock='SHARED_READ', status='GRANTED', source='metadata_lock_info')]
