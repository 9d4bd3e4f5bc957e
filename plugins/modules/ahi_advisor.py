#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r'''
---
module: ahi_advisor
short_description: Sample a server's own counters and say whether the InnoDB adaptive hash index pays off
version_added: 1.0.0
description:
  - Samples the server's counters for O(sample_seconds) and judges whether the adaptive hash index (AHI)
    helps the workload that ran during the sample.
  - "Reads C(INFORMATION_SCHEMA.INNODB_METRICS) C(adaptive_hash_searches) and C(adaptive_hash_searches_btree)
    (hit ratio = hash / (hash + B-tree)), and the maintenance counters C(adaptive_hash_pages_added),
    C(adaptive_hash_pages_removed), C(adaptive_hash_rows_added) and C(adaptive_hash_rows_removed)
    (maintenance per hit = rows added + removed per hash search)."
  - The maintenance counters are off by default on every flavor. When they are off, the module turns on
    exactly those that are off for the length of the sample (C(SET GLOBAL innodb_monitor_enable)) and turns
    them off again afterwards, also when the sample fails. This is the only thing it changes, and the task
    reports C(changed) when it did (counters that were on before are left on and untouched).
  - The column that says whether a counter is on is C(STATUS) (C(enabled)/C(disabled)) on MySQL, Percona
    Server and MariaDB up to 10.4 and C(ENABLED) (1/0) on MariaDB 10.5 and later; the module picks it from
    the flavor and version.
  - On MariaDB it also reads C(Innodb_adaptive_hash_hash_searches) and C(Innodb_adaptive_hash_non_hash_searches).
    MariaDB stops counting B-tree searches while AHI is off, so with AHI off the module counts index lookups
    with C(Handler_read_key) instead.
  - "Recommendations: V(keep_on) (AHI is on and pays off), V(turn_off) (AHI is on and costs more than it
    gives, or it is off and the workload would not profit: leave it off), V(try_on) (AHI is off and the
    workload looks like one it speeds up: mostly reads, index lookups on pages that stay in the buffer pool),
    V(insufficient_data) (too little happened during the sample), V(not_settable) (the server cannot run
    with AHI, for example an Aurora reader)."
  - Each recommendation comes with reasons in plain words.
author:
  - dbfleet maintainers (@dbfleet)
extends_documentation_fragment:
  - dbfleet.innodb.attributes.pymysql
  - dbfleet.innodb.login
options:
  sample_seconds:
    description:
      - Length of the sample, in seconds (1 to 3600). Sample while the workload of interest runs.
    type: int
    default: 60
  enable_monitors:
    description:
      - Turn on the AHI counters that are off for the length of the sample, and off again afterwards.
      - With V(false), or in check mode, only the counters that are already on are used; without the
        maintenance counters the verdict rests on the hit ratio.
    type: bool
    default: true
  min_lookups:
    description:
      - Fewest index lookups in the whole sample to give a verdict; below it the recommendation is
        V(insufficient_data).
    type: int
    default: 10000
  min_hit_ratio:
    description:
      - With AHI on, a hit ratio (hash searches / all searches) below this gives V(turn_off).
    type: float
    default: 0.5
  max_maintenance_per_hit:
    description:
      - With AHI on, more AHI rows added plus removed per hash hit than this gives V(turn_off).
    type: float
    default: 0.5
  max_buffer_pool_miss_ratio:
    description:
      - With AHI off, V(try_on) needs at most this share of buffer pool read requests going to disk
        (C(Innodb_buffer_pool_reads) / C(Innodb_buffer_pool_read_requests)).
    type: float
    default: 0.01
  max_write_share:
    description:
      - With AHI off, V(try_on) needs at most this share of rows written among rows read and written
        (C(Innodb_rows_inserted), C(_updated), C(_deleted) against C(Innodb_rows_read)).
    type: float
    default: 0.2
attributes:
  check_mode:
    support: full
    description:
      - The module changes no settings but the AHI counters it turns on for the sample (and off again).
        In check mode it samples too, turns no counter on, and reports C(changed) when a real run would turn
        counters on.
  diff_mode:
    support: none
    description: Changes no settings, so there is nothing to show a difference for.
notes:
  - The login needs the C(PROCESS) privilege to read C(INNODB_METRICS), and C(SYSTEM_VARIABLES_ADMIN) or
    C(SUPER) to turn counters on; without the latter the module samples with the counters that are on and says so.
  - Counters turned on with C(innodb_monitor_enable) do not survive a restart; a server restarted during
    the sample comes back with its configured counters.
  - SIGTERM, SIGHUP or SIGINT during the sample (the controller stopped, a job cancelled) turn the counters it
    turned on off again, over a new connection, and the task fails saying so (RV(interrupted)); only SIGKILL
    leaves them on.
  - The verdict describes the workload of the sample only. Confirm a change with a measurement.
seealso:
  - module: dbfleet.innodb.global_variables
  - name: Is Adaptive Hash Index in InnoDB right for my workload? (Percona blog)
    description: The hit ratio and maintenance ratio this module computes.
    link: https://www.percona.com/blog/is-adaptive-hash-index-in-innodb-right-for-my-workload/
'''

EXAMPLES = r'''
- name: Sample one minute of the workload and advise
  dbfleet.innodb.ahi_advisor:
    login_unix_socket: /run/mysqld/mysqld.sock
  register: ahi

- name: Say what the advisor found
  ansible.builtin.debug:
    msg: "{{ ahi.advice.recommendation }}: {{ ahi.advice.reasons | join('; ') }}"

- name: Short sample, stricter hit ratio, no counters turned on
  dbfleet.innodb.ahi_advisor:
    login_user: admin
    login_password: "{{ vault_admin_password }}"
    login_host: db1.example.com
    sample_seconds: 20
    min_hit_ratio: 0.8
    enable_monitors: false
'''

RETURN = r'''
advice:
  description: The verdict and the numbers behind it.
  returned: success
  type: dict
  contains:
    recommendation:
      description: One of V(keep_on), V(turn_off), V(try_on), V(insufficient_data), V(not_settable).
      type: str
      sample: keep_on
    reasons:
      description: Plain-word reasons for the recommendation.
      type: list
      elements: str
      sample: ["98.9% of 184934 index searches were answered by the hash (threshold 50.0%)"]
    hit_ratio:
      description: Hash searches / (hash + B-tree searches) over the sample; null with AHI off.
      type: float
      sample: 0.989
    maintenance_per_hit:
      description: AHI rows added + removed per hash search; null when not measured or AHI is off.
      type: float
      sample: 0.0012
    buffer_pool_miss_ratio:
      description: Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests over the sample.
      type: float
      sample: 0.0
    write_share:
      description: Rows written / (rows read + written) over the sample.
      type: float
      sample: 0.01
    counters:
      description: Counter deltas over the sample.
      type: dict
    rates:
      description: Per-second rates of the main counters.
      type: dict
    thresholds:
      description: The thresholds the verdict used.
      type: dict
ahi_enabled:
  description: Whether innodb_adaptive_hash_index was ON during the sample.
  returned: success
  type: bool
  sample: true
partition_variable:
  description: Name of the AHI partition variable on this server, null when it has none.
  returned: success
  type: str
  sample: innodb_adaptive_hash_index_parts
partitions:
  description: Its value, null when the server has none.
  returned: success
  type: int
  sample: 8
monitors_enabled:
  description:
    - The counters the module turned on for the sample (and off again afterwards); the task is C(changed) when
      this is not empty. Empty in check mode.
  returned: success
  type: list
  elements: str
  sample: [adaptive_hash_pages_added, adaptive_hash_pages_removed, adaptive_hash_rows_added, adaptive_hash_rows_removed]
interrupted:
  description:
    - The module got SIGTERM, SIGHUP or SIGINT during the sample; the counters of RV(monitors_enabled) were turned
      off again and the task failed.
  returned: when interrupted by a signal
  type: bool
  sample: true
sample_seconds:
  description: Measured length of the sample, in seconds.
  returned: success
  type: float
  sample: 60.01
server:
  description: Flavor and version of the server.
  returned: always
  type: dict
  sample: {flavor: mysql, version: [8, 0, 33], version_string: 8.0.33, version_text: 8.0.33, aurora_reader: null}
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.dbfleet.innodb.plugins.module_utils import ahi_advisor
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as conn_utils
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_argument_spec
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import (
    error_text, execute, global_status, global_variables, query)
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import signals
from ansible_collections.dbfleet.innodb.plugins.module_utils import values
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import option_ranges, option_spec, range_problems


def _metrics(conn, column):
    sql, args = ahi_advisor.metrics_query(column)
    rows = query(conn, sql, args)
    out = {}
    for row in rows:
        out[str(row['NAME']).lower()] = row
    return out


def _counts(metric_rows):
    return dict((name, row['COUNT']) for name, row in metric_rows.items())


def _ahi_on(conn):
    value = global_variables(conn, ['innodb_adaptive_hash_index']).get('innodb_adaptive_hash_index')
    if value is None:
        return None
    try:
        return values.parse_bool(value)
    except values.ValueError_:
        return None


def _set_monitors(conn, names, on):
    """Turn each counter of names on or off; returns {name: error} for those that failed."""
    failed = {}
    variable = 'innodb_monitor_enable' if on else 'innodb_monitor_disable'
    for name in names:
        try:
            execute(conn, 'SET GLOBAL %s = %%s' % variable, (name,))
        except Exception as e:  # pylint: disable=broad-except
            failed[name] = error_text(e)
    return failed


def _describe(failed):
    return ', '.join('%s (%s)' % (name, error) for name, error in sorted(failed.items()))


def _enable_counters(module, conn, column, metric_rows, enabled_now, warnings, result):
    """Turn on the AHI counters that are off (enable_monitors; check mode only says it would), recording each one
    turned on in enabled_now first, so a failure half-way still turns off what did get turned on. Returns the
    counter rows as they are now."""
    off = ahi_advisor.monitors_to_enable(metric_rows.values(), column)
    if off and module.params['enable_monitors'] and module.check_mode:
        # A real run would turn these on (and off again): say so.
        result['changed'] = True
        warnings.append('counters %s are off and were left off (check mode); a real run turns them on for '
                        'the sample and off again' % ', '.join(off))
    elif off and module.params['enable_monitors']:
        enabled_now.extend(off)
        failed = _set_monitors(conn, off, True)
        enabled_now[:] = [n for n in off if n not in failed]
        result['changed'] = bool(enabled_now)
        if failed:
            warnings.append('could not turn on %s; sampling with the counters that are on' % _describe(failed))
        return _metrics(conn, column)
    elif off:
        warnings.append('counters %s are off and were left off (%s)' % (
            ', '.join(off), 'check mode' if module.check_mode else 'enable_monitors=false'))
    return metric_rows


def _read_sample(conn, column, metric_rows, seconds, part_var):
    """The counters and the AHI setting before and after a sample of seconds, its length, and the AHI partition
    count (part_var's value)."""
    sample = dict(ahi_before=_ahi_on(conn), status_before=global_status(conn, ahi_advisor.STATUS_COUNTERS),
                  counts_before=_counts(metric_rows))
    started = time.time()
    time.sleep(seconds)
    sample.update(counts_after=_counts(_metrics(conn, column)),
                  status_after=global_status(conn, ahi_advisor.STATUS_COUNTERS))
    sample['elapsed'] = time.time() - started
    sample['ahi_after'] = _ahi_on(conn)
    sample['partitions'] = None
    if part_var:
        raw = global_variables(conn, [part_var]).get(part_var)
        sample['partitions'] = int(raw) if raw is not None and str(raw).isdigit() else raw
    return sample


def _restore_counters(module, conn, enabled_now, interrupted, result):
    """Turn the counters this run turned on off again; after a signal (interrupted), or when the connection died,
    over a new connection. Fails the module naming those that stay on."""
    if not enabled_now:
        return
    # After a signal the connection may be half-way through a reply: the restore uses a new one.
    failed = (_set_monitors(conn, enabled_now, False) if interrupted is None
              else dict((n, str(interrupted)) for n in enabled_now))
    if failed:
        # The connection may have died (server restarted: counters are back to the option file).
        try:
            conn2 = conn_utils.open_connection(module.params)
            failed = _set_monitors(conn2, list(failed), False)
            conn2.close()
        except conn_utils.ConnectError as e:
            failed = dict((n, str(e)) for n in failed)
    if failed:
        module.fail_json(msg='could not turn these AHI counters off again: %s' % _describe(failed),
                         monitors_enabled=enabled_now, **result)


def main():
    argument_spec = login_argument_spec()
    argument_spec.update(option_spec(ahi_advisor.ADVISOR_OPTIONS))
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    p = module.params

    errors = range_problems(p, option_ranges(ahi_advisor.ADVISOR_OPTIONS))
    if errors:
        module.fail_json(msg='; '.join(errors))

    conn = conn_utils.connect(module)
    result = dict(changed=False)
    try:
        identity = server_identity.identity_from_variables(
            global_variables(conn, server_identity.DETECT_VARIABLES))
    except (ValueError, conn_utils.pymysql.err.MySQLError) as e:
        module.fail_json(msg='cannot identify the server: %s' % e)
    result['server'] = identity.to_dict()
    column = capability_facts.capability('innodb_metrics_enabled_column', identity.flavor, identity.version)
    status_counters = capability_facts.capability('ahi_status_counters', identity.flavor, identity.version)
    part_var = capability_facts.ahi_partition_variable(identity.flavor, identity.version)

    enabled_now = []
    warnings = []
    interrupted = None
    # SIGTERM / SIGHUP / SIGINT (the controller stopped, a terminal closed) raise Interrupted: the finally
    # block turns the counters off again, as it does when the sample ends.
    guard = signals.Interruptible()
    guard.__enter__()
    try:
        try:
            metric_rows = _metrics(conn, column)
        except conn_utils.pymysql.err.MySQLError as e:
            module.fail_json(msg='cannot read INFORMATION_SCHEMA.INNODB_METRICS (the login needs PROCESS): %s'
                             % error_text(e), **result)
        missing = [n for n in ahi_advisor.SEARCH_COUNTERS if n not in metric_rows]
        if missing and not status_counters:
            module.fail_json(msg='this server has no %s counter in INNODB_METRICS' % ', '.join(missing), **result)
        metric_rows = _enable_counters(module, conn, column, metric_rows, enabled_now, warnings, result)
        still_off = ahi_advisor.monitors_to_enable(metric_rows.values(), column)
        sample = _read_sample(conn, column, metric_rows, p['sample_seconds'], part_var)
        sample['maintenance_measured'] = not any(n in still_off for n in ahi_advisor.MAINTENANCE_COUNTERS)
        sample['search_off'] = [n for n in ahi_advisor.SEARCH_COUNTERS if n in still_off]
    except conn_utils.pymysql.err.MySQLError as e:
        module.fail_json(msg='sampling failed: %s' % error_text(e), monitors_enabled=enabled_now,
                         **result)
    except signals.Interrupted as e:
        interrupted = e
    finally:
        guard.hold()  # a second signal must not abort the restore
        _restore_counters(module, conn, enabled_now, interrupted, result)
        guard.__exit__(None, None, None)
    if interrupted is not None:
        module.fail_json(msg='%s during the sample; %s' % (
            interrupted, 'the counters it had turned on (%s) are off again' % ', '.join(enabled_now)
            if enabled_now else 'it had turned no counter on'), monitors_enabled=enabled_now, interrupted=True,
            **result)

    advice = ahi_advisor.advise(sample, dict((k, p[k]) for k in ahi_advisor.DEFAULT_THRESHOLDS),
                                flavors.settable('innodb_adaptive_hash_index', identity), status_counters)
    for w in warnings:
        module.warn(w)
    result.update(advice=advice, ahi_enabled=sample['ahi_after'], partition_variable=part_var,
                  partitions=sample['partitions'], monitors_enabled=enabled_now,
                  sample_seconds=round(sample['elapsed'], 2))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
