# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GTID sets and positions, pure: MySQL GTID set texts (uuid[:tag]:intervals) read and subtracted as GTID_SUBTRACT()
does, MariaDB GTID positions (domain-server-sequence) read, the transactions a replica has that its primary lacks
(errant(), in the flavor's GTID model), which the switchover's plan refuses a candidate for
(replication/switchover_plan.py), the position a replica must reach to have caught up with its source
(source_position()) and the statement that waits for it with a timeout (gtid_wait_sql()).
"""

from __future__ import annotations

import re


def mysql_gtid_set(text):
    """{source (uuid, or uuid:tag): [(first, last), ...] merged and sorted} of a MySQL GTID set text."""
    out = {}
    for part in ''.join(str(text or '').split()).split(','):
        if not part:
            continue
        pieces = part.split(':')
        uuid = pieces[0].lower()
        key = uuid
        for piece in pieces[1:]:
            match = re.match(r'^(\d+)(?:-(\d+))?$', piece)
            if not match:                    # a tag (MySQL 8.3+): the intervals after it are uuid:tag's
                key = '%s:%s' % (uuid, piece.lower())
                continue
            first = int(match.group(1))
            out.setdefault(key, []).append((first, int(match.group(2) or first)))
    return dict((k, _merge(v)) for k, v in out.items())


def _merge(intervals):
    merged = []
    for first, last in sorted(intervals):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def mysql_gtid_subtract(a, b):
    """The GTID set text of a minus b (what a has that b lacks), as GTID_SUBTRACT() gives it; '' for none."""
    left, right = mysql_gtid_set(a), mysql_gtid_set(b)
    parts = []
    for key in sorted(left):
        rest = []
        for first, last in left[key]:
            pieces = [(first, last)]
            for rf, rl in right.get(key, []):
                pieces = [p for piece in pieces for p in _cut(piece, rf, rl)]
            rest += pieces
        if rest:
            parts.append(key + ':' + ':'.join(str(f) if f == l else '%d-%d' % (f, l) for f, l in rest))
    return ','.join(parts)


def _cut(piece, first, last):
    low, high = piece
    if last < low or first > high:
        return [piece]
    out = []
    if low < first:
        out.append((low, first - 1))
    if high > last:
        out.append((last + 1, high))
    return out


def mariadb_position(text):
    """{domain: (server_id, sequence)} of a MariaDB GTID position text (0-1-100,1-2-5)."""
    out = {}
    for part in ''.join(str(text or '').split()).split(','):
        match = re.match(r'^(\d+)-(\d+)-(\d+)$', part)
        if match:
            out[int(match.group(1))] = (int(match.group(2)), int(match.group(3)))
    return out


def mariadb_errant(candidate, primary):
    """The candidate's GTIDs that the primary's position does not reach ('' for none): per domain, a sequence beyond
    the primary's, or a domain the primary never wrote."""
    mine, theirs = mariadb_position(candidate), mariadb_position(primary)
    errant = []
    for domain in sorted(mine):
        server, seq = mine[domain]
        if domain not in theirs or seq > theirs[domain][1]:
            errant.append('%d-%d-%d' % (domain, server, seq))
    return ','.join(errant)


def errant(candidate_facts, primary_facts):
    """The candidate's transactions its primary does not have ('' for none), in the flavor's GTID model. The primary's
    own transactions are never errant: the candidate, read after it under writes, may simply be further along."""
    gtid = candidate_facts.get('gtid') or {}
    theirs = primary_facts.get('gtid') or {}
    if gtid.get('model') == 'mysql':
        own = str(primary_facts.get('server_uuid') or '').lower()
        rest = mysql_gtid_subtract(gtid.get('executed'), theirs.get('executed'))
        return ','.join(p for p in rest.split(',') if p and not (own and p.lower().startswith(own + ':')))
    own = primary_facts.get('server_id')
    rest = mariadb_errant(gtid.get('current_pos') or gtid.get('slave_pos'), theirs.get('binlog_pos'))
    return ','.join(p for p in rest.split(',') if p and int(p.split('-')[1]) != own)


def gtid_wait_sql(gtid_model):
    """(SQL, result that means caught up) to wait for a GTID position with a timeout, per model."""
    if gtid_model == 'mysql':
        return 'SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s) AS r', 0
    if gtid_model == 'mariadb':
        return 'SELECT MASTER_GTID_WAIT(%s, %s) AS r', 0
    return None, None


def source_position(source_facts):
    """The GTID position a replica must reach to have caught up with this source (None: unknown)."""
    gtid = (source_facts or {}).get('gtid') or {}
    if gtid.get('model') == 'mysql':
        if str(gtid.get('mode') or '').upper() != 'ON':
            return None
        return gtid.get('executed') or None
    if gtid.get('model') == 'mariadb':
        return gtid.get('binlog_pos') or None
    return None
