# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The settings role on used MySQL servers (8.0.33 and 9.7 of the lab): values persisted by a DBA (SET PERSIST, in
mysqld-auto.cnf, which the server reads after every option file) and a map of ten ordinary InnoDB variables.

One map on both servers, with innodb_io_capacity persisted as 300 and innodb_old_blocks_time as 1000 beforehand:
- settings_persisted: refuse fails before any change, naming each variable and its persisted value;
- check mode names the RESET PERSIST of both as a change (diff: persisted.<name>) and changes nothing;
- the run brings the running values to the map and removes both persisted values, so the drop-in decides at the
  next start; nothing waits for a restart but the variables the server itself refuses to SET at runtime (asked
  here, on the running server: SET GLOBAL v = @@GLOBAL.v, error 1238); verify (desired from settings) finds no drift;
- a second run changes nothing.
Everything is put back: the drop-in removed, the persisted values as the server had them, the running values."""

from __future__ import annotations

import os
import re

import pymysql
import pytest

from dbfleet_testing.settings_role import DROPIN, changed_by_host, changed_by_task, play
from dbfleet_testing.servers import (global_value, global_values, host_vars, persisted_put_back, persisted_value,
                                     persisted_values, sql, verify)

HOSTS = ('mysql80', 'mysql97')
PERSISTED = dict(innodb_io_capacity=300, innodb_old_blocks_time=1000)
# Ten ordinary InnoDB variables, every value different from the lab servers' defaults; the version table
# (flavors.VARIABLES) knows two of them, the lab servers' own answers (runtime_flags.py) the rest. And one the
# servers refuse at runtime.
MAP = dict(
    innodb_io_capacity=1500, innodb_old_blocks_time=2000, innodb_purge_batch_size=600, innodb_old_blocks_pct=40,
    innodb_max_purge_lag=100000, innodb_stats_transient_sample_pages=16, innodb_spin_wait_delay=8,
    innodb_sync_spin_loops=40, innodb_adaptive_flushing_lwm=15, innodb_stats_persistent_sample_pages=40,
    innodb_purge_threads=2,
)


def dropin(host):
    return os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], DROPIN)


def refused_at_runtime(lab, host):
    """The names of MAP the running server refuses to SET GLOBAL (error 1238: read-only), asked of it now (one
    session)."""
    refused = set()
    conn = lab.connect(host)
    try:
        with conn.cursor() as cur:
            for name in MAP:
                try:
                    cur.execute('SET GLOBAL %s = @@GLOBAL.%s' % (name, name))
                except pymysql.err.MySQLError as e:
                    assert e.args[0] == 1238, (host, name, e)
                    refused.add(name)
    finally:
        conn.close()
    return refused


@pytest.fixture()
def used_servers(lab):  # pylint: disable=unused-argument
    """Both servers with the two values persisted; afterwards everything as it was."""
    saved = {}
    for host in HOSTS:
        persisted = persisted_values(host)
        saved[host] = (global_values(host, list(MAP)), dict((n, persisted.get(n)) for n in MAP))
        assert not os.path.exists(dropin(host)), host
        for name, value in PERSISTED.items():
            sql(host, 'SET PERSIST %s = %%s' % name, [value])
    yield saved
    for host, (running, persisted) in saved.items():
        if os.path.exists(dropin(host)):
            os.remove(dropin(host))
        persisted_now, running_now = persisted_values(host), global_values(host, list(MAP))
        for name in MAP:
            if persisted_now.get(name) != persisted[name]:
                sql(host, *persisted_put_back(name, persisted[name]))
            if running_now[name] != running[name] and name not in ('innodb_purge_threads',):
                sql(host, 'SET GLOBAL %s = %%s' % name, [int(running[name])])


def test_persisted_values_are_reset_or_refused_and_the_map_needs_no_restart(lab, used_servers, tmp_path):
    extra = dict(settings_values=MAP)
    refused = dict((h, refused_at_runtime(lab, h)) for h in HOSTS)
    assert refused == {'mysql80': {'innodb_purge_threads'}, 'mysql97': {'innodb_purge_threads'}}

    # Told not to touch persisted settings: refused on each host before anything changes, naming both.
    rc, out, _results = play(tmp_path, dict(extra, settings_persisted='refuse'), hosts=HOSTS)
    flat = ' '.join(out.split())
    assert rc != 0, out
    for name, value in PERSISTED.items():
        assert ('%s is persisted as %s in performance_schema.persisted_variables (mysqld-auto.cnf), the desired value '
                'is %s' % (name, value, MAP[name])) in flat, out
    for host in HOSTS:
        assert re.search(r'fatal: \[%s\]: FAILED!.*innodb_io_capacity is persisted as 300 .*innodb_old_blocks_time is '
                         r'persisted as 1000 .*settings_persisted: refuse leaves persisted settings alone' % host, out), out
    for host in HOSTS:
        assert not os.path.exists(dropin(host))
        assert persisted_value(host, 'innodb_io_capacity') == '300'
        assert global_value(host, 'innodb_old_blocks_time') == used_servers[host][0]['innodb_old_blocks_time']

    # Check mode names the RESET PERSIST of both as a change, in the diff too, and changes nothing.
    rc, out, check_results = play(tmp_path, extra, '--check', '--diff', hosts=HOSTS)
    assert rc == 0, out
    assert out.count('persisted.innodb_io_capacity') >= len(HOSTS) and 'persisted.innodb_old_blocks_time' in out, out
    for host in HOSTS:
        assert persisted_value(host, 'innodb_io_capacity') == '300' and not os.path.exists(dropin(host))

    # The run: running values as the map, the persisted ones gone (the drop-in decides), no restart pending but for
    # what the server refuses at runtime.
    rc, out, real_results = play(tmp_path, extra, hosts=HOSTS)
    assert rc == 0, out
    predicted, done = changed_by_task(check_results), changed_by_task(real_results)
    assert predicted == done, set(predicted.items()) ^ set(done.items())
    resets = [r for r in real_results if 'Remove the persisted values' in r['task'] and r['status'] != 'skipped']
    assert sorted((r['host'], sorted(r['result']['reset_persisted'].items())) for r in resets) == [
        (h, [('innodb_io_capacity', '300'), ('innodb_old_blocks_time', '1000')]) for h in HOSTS]
    for host in HOSTS:
        running, persisted = global_values(host, list(MAP)), persisted_values(host)
        for name, value in MAP.items():
            if name not in refused[host]:
                assert running[name] == str(value), (host, name)
            assert persisted.get(name) is None or name not in PERSISTED, (host, name)
        result = verify(host, {}, desired_from=['settings'], role_variables=extra,
                        fallback_option_files=[host_vars(host)['dbfleet_option_file']])
        not_ok = dict((k, v['status']) for k, v in result['variables'].items() if v['status'] != 'ok')
        assert not_ok == dict((n, 'pending_restart') for n in refused[host]), (host, result['variables'])
    assert 'read-only at runtime on MySQL 8.0.33 (as on a fresh MySQL 8.0.33 server)' in ' '.join(out.split()), out

    # A second run changes nothing.
    rc, out, _results = play(tmp_path, extra, hosts=HOSTS)
    assert rc == 0 and changed_by_host(out, HOSTS) == dict((h, 0) for h in HOSTS), out
