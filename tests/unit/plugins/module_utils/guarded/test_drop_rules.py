# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guarded drop's own rules (guarded/drop_rules.py): the table names it takes, holding names, the AHI decision."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_rules import (
    decide_ahi, holding_name, parse_table_names)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError


def test_names_deduplicated_in_order():
    assert parse_table_names(['a.x', 'b.y', 'a.x']) == [('a', 'x'), ('b', 'y')]


def test_empty_list_refused():
    with pytest.raises(GuardedError):
        parse_table_names([])


def test_one_bad_name_refuses_all():
    with pytest.raises(GuardedError) as e:
        parse_table_names(['a.x', 'mysql.user'])
    assert 'mysql' in str(e.value)


def test_holding_name_short_and_long():
    assert holding_name('shop', 'orders', '20240101020304') == 'shop__orders__20240101020304'
    long = holding_name('d' * 64, 't' * 64, '20240101020304')
    assert len(long) <= 64
    assert long.endswith('__20240101020304')
    assert long != holding_name('d' * 64, 't' * 63 + 'u', '20240101020304')


# ------------------------------------------------------------------ AHI decision from flavor data
def test_auto_follows_flavor_data():
    for flavor, version in (('mysql', (8, 0, 33)), ('mysql', (5, 7, 22)), ('mariadb', (10, 11, 6)),
                            ('mariadb', (10, 4, 13)), ('mariadb', (10, 4, 14))):
        want = capability_facts.capability('drop_table_ahi_strategy', flavor, version)
        strategy, toggle, reason = decide_ahi('auto', flavor, version, 'ON', 1)
        assert strategy == want
        assert toggle is (want == 'toggle')
        assert 'versions/capability_facts.py' in reason


def test_mariadb_lazy_drop_versions_keep():
    # MDEV-22456 fixed in 10.2.33, 10.3.24, 10.4.14, 10.5.4.
    for v in ((10, 2, 33), (10, 3, 24), (10, 4, 14), (10, 5, 4), (10, 11, 19)):
        assert capability_facts.capability('drop_table_ahi_strategy', 'mariadb', v) == 'keep'
    for v in ((10, 2, 32), (10, 3, 23), (10, 4, 13), (10, 5, 3)):
        assert capability_facts.capability('drop_table_ahi_strategy', 'mariadb', v) == 'toggle'


def test_explicit_strategies():
    assert decide_ahi('toggle', 'mariadb', (10, 11, 19), 'ON', 2)[:2] == ('toggle', True)
    assert decide_ahi('keep', 'mysql', (5, 7, 22), 'ON', 2)[:2] == ('keep', False)


def test_nothing_to_toggle_when_off_or_not_innodb():
    assert decide_ahi('toggle', 'mysql', (8, 0, 33), 'OFF', 1)[1] is False
    assert decide_ahi('toggle', 'mysql', (8, 0, 33), 'ON', 0)[1] is False
    assert decide_ahi('toggle', 'mysql', (8, 0, 33), None, 1)[1] is False
