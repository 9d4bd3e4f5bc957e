# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The content checksum of a table: rows and a checksum of their values, the same before and after a change of
engine (guarded/convert_tables.py compares the two around each ALTER TABLE ... ENGINE=...).

The content checksum does not use CHECKSUM TABLE: that hashes the stored record image, which an
engine change may rebuild (a DATETIME in the pre-5.6 format becomes the current format, so the
same rows give another CHECKSUM TABLE value; seen on MariaDB 11.8). content_checksum_sql() checksums
each row's values instead, independent of engine and row format (bench/convert_checksum: as cheap as
CHECKSUM TABLE).
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.inputs import GuardedError, quote_name

# Lanes of the content checksum (content_checksum_sql).
LANES = 2


def content_checksum_sql(db, table, columns):
    """SELECT giving row_count and two 32-bit lane sums over each row's values.

    Each row is the bytes of CONCAT_WS('#', every column as binary, and a string of ISNULL flags), so NULL and ''
    differ. Lane 0 sums CRC32 of those bytes, lane 1 CRC32 of the same bytes reversed (another function of the
    row, not of its CRC32): 64 bits per row, summed (not BIT_XOR: two equal rows do not cancel out), so row order,
    engine and row format do not matter. CRC32 keeps it about as cheap as CHECKSUM TABLE (an MD5 per row, cut
    into lanes with CONV, took about ten times as long on the lab's MariaDB 11.8)."""
    if not columns:
        raise GuardedError('%s.%s has no columns the checksum can read' % (db, table))
    cols = [quote_name(c) for c in columns]
    row = "CONCAT_WS('#', %s, CONCAT(%s))" % (
        ', '.join('CAST(%s AS BINARY)' % c for c in cols), ', '.join('ISNULL(%s)' % c for c in cols))
    return 'SELECT COUNT(*) AS row_count, SUM(CRC32(%s)) AS l0, SUM(CRC32(REVERSE(%s))) AS l1 FROM %s.%s' % (
        row, row, quote_name(db), quote_name(table))


def checksum_from_row(row):
    """dict(rows, checksum) from the row of content_checksum_sql (16 hex digits, each lane mod 2**32)."""
    lanes = [int(row.get('l%d' % i) or 0) % (1 << 32) for i in range(LANES)]
    return dict(rows=int(row.get('row_count') or 0), checksum=''.join('%08x' % v for v in lanes))


def compare(name, before, after):
    """None when rows and checksum agree, else the message (naming the table and both values)."""
    problems = []
    if before.get('rows') != after.get('rows'):
        problems.append('rows %s before, %s after' % (before.get('rows'), after.get('rows')))
    if before.get('checksum') != after.get('checksum'):
        problems.append('content checksum %s before, %s after' % (before.get('checksum'), after.get('checksum')))
    if not problems:
        return None
    return '%s: %s' % (name, ', '.join(problems))
