# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The content checksum of a table: its SQL, the lanes read back, the comparison of before and after."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.content_checksum import (
    checksum_from_row, compare, content_checksum_sql)
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError


def test_checksum_sql_hashes_values_with_null_flags_and_sums_two_lanes():
    sql = content_checksum_sql('shop', 'orders', ['id', 'note'])
    assert sql.endswith('FROM `shop`.`orders`')
    row = "CONCAT_WS('#', CAST(`id` AS BINARY), CAST(`note` AS BINARY), CONCAT(ISNULL(`id`), ISNULL(`note`)))"
    assert 'SUM(CRC32(%s)) AS l0, SUM(CRC32(REVERSE(%s))) AS l1' % (row, row) in sql
    assert 'BIT_XOR' not in sql and 'CHECKSUM TABLE' not in sql
    # every legal column name is quoted (a backtick doubled), never refused after LOCK TABLES (issue 23)
    odd = content_checksum_sql('shop', 'orders', ['first name', 'id`; DROP TABLE x', 'prénom'])
    assert 'CAST(`first name` AS BINARY), CAST(`id``; DROP TABLE x` AS BINARY), CAST(`prénom` AS BINARY)' in odd
    with pytest.raises(GuardedError):
        content_checksum_sql('shop', 'orders', [])


def test_checksum_from_row_wraps_lanes():
    row = dict(row_count=3, l0=1, l1=(1 << 32) + 2)
    assert checksum_from_row(row) == dict(rows=3, checksum='0000000100000002')
    assert checksum_from_row({}) == dict(rows=0, checksum='0' * 16)


def test_compare_names_table_and_both_values():
    same = dict(rows=5, checksum='ab')
    assert compare('d.t', same, dict(same)) is None
    msg = compare('d.t', same, dict(rows=4, checksum='cd'))
    assert msg.startswith('d.t:') and 'rows 5 before, 4 after' in msg and 'checksum ab before, cd after' in msg
