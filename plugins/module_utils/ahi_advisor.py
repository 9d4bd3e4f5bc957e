# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adaptive hash index (AHI): what to sample, and what the sample means.

Pure functions only (no connection), so the decisions are unit tested with fakes.
The ahi_advisor module reads the counters and calls analyse(); the adaptive_hash role
uses the same names through versions/flavors.py; its desired state is role_states.adaptive_hash().

Sources for the counters and the maths: docs/adaptive_hash.md.
"""

from __future__ import annotations

# INFORMATION_SCHEMA.INNODB_METRICS counters.
SEARCH_COUNTERS = ('adaptive_hash_searches', 'adaptive_hash_searches_btree')
# Maintenance counters: off by default on every flavor; they belong to module_adaptive_hash.
MAINTENANCE_COUNTERS = ('adaptive_hash_pages_added', 'adaptive_hash_pages_removed',
                        'adaptive_hash_rows_added', 'adaptive_hash_rows_removed')
METRIC_COUNTERS = SEARCH_COUNTERS + MAINTENANCE_COUNTERS

# SHOW GLOBAL STATUS counters (lower case). The first two exist on MariaDB 10.5+ and
# Percona 5.5/5.6 only (capability ahi_status_counters).
AHI_STATUS = ('innodb_adaptive_hash_hash_searches', 'innodb_adaptive_hash_non_hash_searches')
WORKLOAD_STATUS = ('handler_read_key', 'innodb_buffer_pool_read_requests', 'innodb_buffer_pool_reads',
                   'innodb_rows_read', 'innodb_rows_inserted', 'innodb_rows_updated',
                   'innodb_rows_deleted', 'com_select')
# MariaDB has no Innodb_rows_* status: the handler counters stand in for them.
HANDLER_READS = ('handler_read_key', 'handler_read_next', 'handler_read_prev', 'handler_read_rnd',
                 'handler_read_rnd_next')
HANDLER_WRITES = ('handler_write', 'handler_update', 'handler_delete')
STATUS_COUNTERS = tuple(sorted(set(AHI_STATUS + WORKLOAD_STATUS + HANDLER_READS + HANDLER_WRITES)))

KEEP_ON = 'keep_on'
TURN_OFF = 'turn_off'
TRY_ON = 'try_on'
INSUFFICIENT = 'insufficient_data'
NOT_SETTABLE = 'not_settable'

DEFAULT_THRESHOLDS = dict(
    # Fewer index lookups than this in the whole sample: nothing to judge.
    min_lookups=10000,
    # AHI on: below this share of searches answered by the hash, AHI mostly costs.
    min_hit_ratio=0.5,
    # AHI on: more AHI rows added+removed per hash hit than this is churn, not caching.
    max_maintenance_per_hit=0.5,
    # AHI off, for try_on: buffer pool misses per read request must be at most this...
    max_buffer_pool_miss_ratio=0.01,
    # ... and rows changed must be at most this share of rows read + changed.
    max_write_share=0.2,
)


# The advisor's options with their defaults and ranges: the one definition the module's argument spec and range check
# and ahi_advisor.yml's inputs (playbook_inputs.py) read. The thresholds' defaults are DEFAULT_THRESHOLDS.
ADVISOR_OPTIONS = dict(
    sample_seconds=dict(type='int', default=60, range=(1, 3600)),
    enable_monitors=dict(type='bool', default=True),
    min_lookups=dict(type='int', default=DEFAULT_THRESHOLDS['min_lookups'], range=(1, None)),
    min_hit_ratio=dict(type='float', default=DEFAULT_THRESHOLDS['min_hit_ratio'], range=(0, 1)),
    max_maintenance_per_hit=dict(type='float', default=DEFAULT_THRESHOLDS['max_maintenance_per_hit'], range=(0, None)),
    max_buffer_pool_miss_ratio=dict(type='float', default=DEFAULT_THRESHOLDS['max_buffer_pool_miss_ratio'],
                                    range=(0, 1)),
    max_write_share=dict(type='float', default=DEFAULT_THRESHOLDS['max_write_share'], range=(0, 1)),
)


def counter_enabled(row, column):
    """Whether an INNODB_METRICS row says the counter is on.

    column is flavors capability innodb_metrics_enabled_column: 'STATUS' ('enabled' /
    'disabled', MySQL, Percona, MariaDB <= 10.4) or 'ENABLED' (1 / 0, MariaDB 10.5+).
    Rows may come with upper- or lower-case keys.
    """
    value = row.get(column, row.get(column.lower()))
    if column.upper() == 'ENABLED':
        try:
            return int(value) == 1
        except (TypeError, ValueError):
            return str(value).strip().lower() in ('enabled', 'on', 'true')
    return str(value).strip().lower() == 'enabled'


def metrics_query(column):
    """SQL (and bound args) reading the AHI counters with their on/off state."""
    if column.upper() not in ('STATUS', 'ENABLED'):
        raise ValueError('unknown INNODB_METRICS state column %r' % (column,))
    placeholders = ', '.join(['%s'] * len(METRIC_COUNTERS))
    sql = ('SELECT NAME, `COUNT`, %s AS STATE FROM INFORMATION_SCHEMA.INNODB_METRICS '
           'WHERE NAME IN (%s)' % (column.upper(), placeholders))
    return sql, list(METRIC_COUNTERS)


def monitors_to_enable(rows, column):
    """Names of AHI maintenance counters that are off (to enable for the sample only).

    rows: INNODB_METRICS rows with NAME and the state under `column` (or STATE).
    """
    off = []
    for row in rows:
        name = str(row.get('NAME', row.get('name', ''))).lower()
        state_row = dict(row)
        if 'STATE' in row and column not in row:
            state_row[column] = row['STATE']
        if name in METRIC_COUNTERS and not counter_enabled(state_row, column):
            off.append(name)
    return sorted(off)


def _num(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError):
            return None


def deltas(before, after):
    """after - before per name for names present in both with numbers; negative (a reset,
    a restart) becomes None."""
    out = {}
    for name, b in before.items():
        if name not in after:
            continue
        bv, av = _num(b), _num(after[name])
        if bv is None or av is None:
            continue
        out[name] = av - bv if av >= bv else None
    return out


def _ratio(num, den):
    if num is None or den is None or den <= 0:
        return None
    return float(num) / float(den)


def _fmt_pct(x):
    return '%.1f%%' % (100.0 * x)


def _sample_counters(md, sd, status_counters):
    """Step 1 of analyse(): the counters of the sample, from the INNODB_METRICS deltas md and the status deltas sd.

    The hash and B-tree searches come from the metrics, else (status_counters: MariaDB 10.5+) from the
    Innodb_adaptive_hash_* status; rows read and changed from Innodb_rows_*, else from the Handler_* counters
    (rows_source names which)."""
    hash_searches = md.get('adaptive_hash_searches')
    btree_searches = md.get('adaptive_hash_searches_btree')
    if status_counters:
        # MariaDB 10.5+: the same numbers as status; fill in what the metrics did not give.
        if hash_searches is None:
            hash_searches = sd.get('innodb_adaptive_hash_hash_searches')
        if btree_searches is None:
            btree_searches = sd.get('innodb_adaptive_hash_non_hash_searches')
    rows_read = sd.get('innodb_rows_read')
    changed_parts = [sd.get('innodb_rows_inserted'), sd.get('innodb_rows_updated'),
                     sd.get('innodb_rows_deleted')]
    rows_changed = sum(x for x in changed_parts if x is not None) if any(
        x is not None for x in changed_parts) else None
    rows_source = 'Innodb_rows_*'
    if rows_read is None and rows_changed is None:
        reads = [sd.get(n) for n in HANDLER_READS if sd.get(n) is not None]
        writes = [sd.get(n) for n in HANDLER_WRITES if sd.get(n) is not None]
        if reads:
            rows_read = sum(reads)
        if writes:
            rows_changed = sum(writes)
        rows_source = 'Handler_*'
    return dict(hash_searches=hash_searches, btree_searches=btree_searches,
                rows_added=md.get('adaptive_hash_rows_added'), rows_removed=md.get('adaptive_hash_rows_removed'),
                pages_added=md.get('adaptive_hash_pages_added'), pages_removed=md.get('adaptive_hash_pages_removed'),
                handler_read_key=sd.get('handler_read_key'), read_requests=sd.get('innodb_buffer_pool_read_requests'),
                disk_reads=sd.get('innodb_buffer_pool_reads'), rows_read=rows_read, rows_changed=rows_changed,
                rows_source=rows_source)


def _sample_figures(c, ahi_enabled, maintenance_measured):
    """Step 2 of analyse(): the figures the verdict rests on, from the counters c (_sample_counters()): searches,
    hit_ratio, maintenance, maintenance_per_hit, miss_ratio, write_share, and the index lookups (lookups, with
    lookups_source: with AHI off, MariaDB 10.6.2+ stops counting B-tree searches, the handler's index lookups stand
    in for them)."""
    hash_searches = c['hash_searches']
    searches = None
    if hash_searches is not None and c['btree_searches'] is not None:
        searches = hash_searches + c['btree_searches']
    maintenance = None
    if maintenance_measured and c['rows_added'] is not None and c['rows_removed'] is not None:
        maintenance = c['rows_added'] + c['rows_removed']
    maintenance_per_hit = None
    if ahi_enabled and maintenance is not None and hash_searches is not None:
        maintenance_per_hit = float(maintenance) / float(max(hash_searches, 1))
    rows_read, rows_changed = c['rows_read'], c['rows_changed']
    write_share = None
    if rows_changed is not None and rows_read is not None and (rows_read + rows_changed) > 0:
        write_share = float(rows_changed) / float(rows_read + rows_changed)
    lookups, lookups_source = searches, 'adaptive hash / B-tree search counters'
    if not ahi_enabled and (not searches) and c['handler_read_key'] is not None:
        lookups, lookups_source = c['handler_read_key'], 'Handler_read_key (index lookups)'
    return dict(searches=searches, hit_ratio=_ratio(hash_searches, searches) if ahi_enabled else None,
                maintenance=maintenance, maintenance_per_hit=maintenance_per_hit,
                miss_ratio=_ratio(c['disk_reads'], c['read_requests']), write_share=write_share,
                lookups=lookups, lookups_source=lookups_source)


def _judge_on(c, f, th, reasons):
    """Step 3 of analyse(), AHI on: keep_on, or turn_off for a low hit ratio or a hash rebuilt faster than it is used
    (insufficient when the hash counters did not move). Appends the reasons; returns the verdict."""
    hit_ratio, maintenance_per_hit, miss_ratio = f['hit_ratio'], f['maintenance_per_hit'], f['miss_ratio']
    if hit_ratio is None:
        reasons.append('the adaptive hash search counters did not move although AHI is ON')
        return INSUFFICIENT
    verdict = KEEP_ON
    if hit_ratio < th['min_hit_ratio']:
        verdict = TURN_OFF
        reasons.append('only %s of %d index searches were answered by the hash (threshold %s): '
                       'most lookups pay the hash check and then walk the B-tree anyway'
                       % (_fmt_pct(hit_ratio), f['searches'], _fmt_pct(th['min_hit_ratio'])))
    else:
        reasons.append('%s of %d index searches were answered by the hash (threshold %s)'
                       % (_fmt_pct(hit_ratio), f['searches'], _fmt_pct(th['min_hit_ratio'])))
    if maintenance_per_hit is None:
        reasons.append('AHI maintenance was not measured (its counters were off and were not '
                       'enabled): the verdict rests on the hit ratio alone')
    elif maintenance_per_hit > th['max_maintenance_per_hit']:
        verdict = TURN_OFF
        reasons.append('AHI added and removed %d rows for %d hash hits (%.2f per hit, threshold '
                       '%.2f): the hash is rebuilt faster than it is used'
                       % (f['maintenance'], c['hash_searches'], maintenance_per_hit,
                          th['max_maintenance_per_hit']))
    else:
        reasons.append('AHI maintenance is %.3f rows added/removed per hash hit (threshold %.2f)'
                       % (maintenance_per_hit, th['max_maintenance_per_hit']))
    if verdict == TURN_OFF and miss_ratio is not None and miss_ratio > th['max_buffer_pool_miss_ratio']:
        reasons.append('%s of buffer pool page requests went to disk: pages leave the buffer pool '
                       'before their hash entries pay off' % _fmt_pct(miss_ratio))
    return verdict


def _judge_off(f, th, reasons, seconds, lookups_rate):
    """Step 3 of analyse(), AHI off: whether the workload looks like the one AHI helps (many index lookups on pages
    that stay in the buffer pool, mostly reads): try_on, turn_off (leave it off) or insufficient. Appends the
    reasons; returns the verdict."""
    miss_ratio, write_share = f['miss_ratio'], f['write_share']
    verdict = TRY_ON
    reasons.append('%d index lookups in %.0f s (%s/s, from %s)'
                   % (f['lookups'], seconds, lookups_rate, f['lookups_source']))
    if miss_ratio is None:
        verdict = INSUFFICIENT
        reasons.append('the buffer pool counters did not move: cannot tell whether lookups stay in memory')
    elif miss_ratio > th['max_buffer_pool_miss_ratio']:
        verdict = TURN_OFF
        reasons.append('%s of buffer pool page requests went to disk (threshold %s): hash entries '
                       'would be dropped with their pages before they pay off'
                       % (_fmt_pct(miss_ratio), _fmt_pct(th['max_buffer_pool_miss_ratio'])))
    else:
        reasons.append('%s of buffer pool page requests went to disk (threshold %s): the pages '
                       'looked up stay in memory' % (_fmt_pct(miss_ratio), _fmt_pct(th['max_buffer_pool_miss_ratio'])))
    if write_share is not None and write_share > th['max_write_share']:
        verdict = TURN_OFF if verdict != INSUFFICIENT else verdict
        reasons.append('%s of rows touched were written (threshold %s): AHI entries would be '
                       'maintained on every change' % (_fmt_pct(write_share), _fmt_pct(th['max_write_share'])))
    elif write_share is not None:
        reasons.append('%s of rows touched were written (threshold %s)'
                       % (_fmt_pct(write_share), _fmt_pct(th['max_write_share'])))
    if verdict == TURN_OFF:
        # AHI is already off: "turn_off" would read as an action; the advice is to leave it off.
        reasons.append('leave the adaptive hash index OFF')
    elif verdict == TRY_ON:
        reasons.append('the workload looks like one the adaptive hash index speeds up: try it ON and '
                       'run the advisor again to confirm the hit ratio')
    return verdict


def _precondition(f, th, reasons, seconds, ahi_enabled, settable):
    """Step 3 of analyse(), before judging: not_settable where the server does not let the index be managed,
    insufficient for too few index lookups; None when the sample can be judged. Appends the reasons."""
    ok_settable, why_not = settable
    if not ok_settable:
        reasons.append(why_not or 'innodb_adaptive_hash_index cannot be changed on this server')
        if ahi_enabled:
            reasons.append('the server reports the adaptive hash index ON although it cannot be managed here')
        else:
            reasons.append('the adaptive hash index is OFF here and cannot be turned on: run lookups that '
                           'need it on an instance where it can be enabled')
        return NOT_SETTABLE
    lookups = f['lookups']
    if lookups is None or lookups < th['min_lookups']:
        reasons.append('only %s index lookups in %.0f s (from %s); at least %d are needed to judge: '
                       'sample longer or at a busier time'
                       % (lookups if lookups is not None else 'no', seconds, f['lookups_source'],
                          th['min_lookups']))
        return INSUFFICIENT
    return None


def analyse(metric_deltas, status_deltas, seconds, ahi_enabled, thresholds=None,
            maintenance_measured=True, settable=(True, ''), status_counters=False):
    """The advisor's verdict.

    metric_deltas: INNODB_METRICS counter deltas over the sample (names as METRIC_COUNTERS).
    status_deltas: SHOW GLOBAL STATUS deltas (lower-case names, see STATUS_COUNTERS).
    seconds: sample length. ahi_enabled: the server's innodb_adaptive_hash_index (bool).
    maintenance_measured: False when the maintenance counters were off and not enabled.
    settable: flavors.settable() for innodb_adaptive_hash_index on this server.
    status_counters: the server has Innodb_adaptive_hash_* status (used when the metrics lack).

    Returns a dict: recommendation, reasons (plain sentences), hit_ratio, maintenance_per_hit,
    counters, rates.
    """
    th = dict(DEFAULT_THRESHOLDS)
    th.update(dict((k, v) for k, v in (thresholds or {}).items() if v is not None))
    c = _sample_counters(dict(metric_deltas or {}), dict(status_deltas or {}), status_counters)
    f = _sample_figures(c, ahi_enabled, maintenance_measured)
    seconds = float(seconds) if seconds else 0.0

    def rate(x):
        return round(x / seconds, 1) if (x is not None and seconds > 0) else None

    def rounded(x, digits):
        return round(x, digits) if x is not None else None

    result = dict(
        hit_ratio=rounded(f['hit_ratio'], 4),
        maintenance_per_hit=rounded(f['maintenance_per_hit'], 6),
        buffer_pool_miss_ratio=rounded(f['miss_ratio'], 6),
        write_share=rounded(f['write_share'], 4),
        counters=dict(
            hash_searches=c['hash_searches'], btree_searches=c['btree_searches'],
            pages_added=c['pages_added'], pages_removed=c['pages_removed'],
            rows_added=c['rows_added'], rows_removed=c['rows_removed'],
            index_lookups=f['lookups'], buffer_pool_read_requests=c['read_requests'],
            buffer_pool_reads=c['disk_reads'], rows_read=c['rows_read'], rows_changed=c['rows_changed'],
            rows_source=c['rows_source'],
        ),
        rates=dict(hash_searches=rate(c['hash_searches']), btree_searches=rate(c['btree_searches']),
                   index_lookups=rate(f['lookups']), ahi_rows_changed=rate(f['maintenance'])),
        thresholds=th,
    )
    reasons = []
    verdict = _precondition(f, th, reasons, seconds, ahi_enabled, settable)
    if verdict is None and ahi_enabled:
        verdict = _judge_on(c, f, th, reasons)
    elif verdict is None:
        verdict = _judge_off(f, th, reasons, seconds, rate(f['lookups']))
    result['recommendation'] = verdict
    result['reasons'] = reasons
    return result


def advise(sample, thresholds, settable, status_counters):
    """The advice of a sample (the module's counters before and after, dicts counts_*, status_*, ahi_*, elapsed,
    maintenance_measured, search_off: the search counters that stayed off, whose deltas say nothing): analyse() of
    its deltas; insufficient when innodb_adaptive_hash_index changed during the sample or could not be read."""
    ahi_before, ahi_after = sample['ahi_before'], sample['ahi_after']
    if ahi_before is None or ahi_before != ahi_after:
        advice = analyse({}, {}, sample['elapsed'], bool(ahi_after), thresholds)
        advice['recommendation'] = INSUFFICIENT
        advice['reasons'] = ['innodb_adaptive_hash_index changed during the sample (%s -> %s): sample again'
                             % (ahi_before, ahi_after)]
        return advice
    metric_deltas = deltas(sample['counts_before'], sample['counts_after'])
    for name in sample['search_off']:
        metric_deltas.pop(name, None)
    return analyse(metric_deltas, deltas(sample['status_before'], sample['status_after']), sample['elapsed'],
                   ahi_before, thresholds, maintenance_measured=sample['maintenance_measured'], settable=settable,
                   status_counters=status_counters)


# The columns of the advice table (advice_table): heading and width ('-' left-aligned).
_TABLE = '%-12s %-8s %-8s %-3s %-17s %6s %9s %7s'
_HEADING = ('host', 'flavor', 'version', 'AHI', 'recommendation', 'hit', 'maint/hit', 'bp_miss')


def _figure(value, form):
    return '-' if value is None else form % value


def advice_table(results, hosts):
    """ahi_advisor.yml's table: a heading, then one line per host of hosts (in that order) from results (host ->
    the module's result; a host without one, or without advice, shows '?' and 'failed')."""
    lines = [_TABLE % _HEADING]
    for h in hosts or []:
        r = (results or {}).get(h) or {}
        a = r.get('advice') or {}
        s = r.get('server') or {}
        ahi = r.get('ahi_enabled')
        lines.append(_TABLE % (
            h, s.get('flavor', '?'), s.get('version_text', '?'), '?' if ahi is None else ('ON' if ahi else 'OFF'),
            a.get('recommendation', 'failed'), _figure(a.get('hit_ratio'), '%.3f'),
            _figure(a.get('maintenance_per_hit'), '%.4f'), _figure(a.get('buffer_pool_miss_ratio'), '%.4f')))
    return lines
