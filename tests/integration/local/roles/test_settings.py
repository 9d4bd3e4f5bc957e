# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Role dbfleet.innodb.settings end to end on every lab server (MySQL 8.0.33, 9.7, MariaDB 10.11, 11.8).

One map of InnoDB settings - dynamic, read-only, renamed (the redo log's size) and rounded (the buffer pool, a
percentage of memory) - every value different from what each server runs before the test:
- bad names, values and owners fail before any change (settings_persist on MariaDB too, in the same run);
- check mode (--diff, with settings_restart: allowed) predicts the real run task by task (the same tasks change, on
  the same hosts and items) and names the restarts, in their order;
- the run sets the dynamic ones at runtime, writes the drop-in, reports the read-only ones pending; verify with
  desired_from [settings] reports them, and nothing else, as pending_restart;
- a second run, with settings_restart: allowed, changes nothing but the gated restart, which applies the read-only
  ones; verify then reports no drift, and a third run changes nothing.
The servers get back what they ran before: the drop-in is removed and each is restarted by the lab (lab.py restart)."""

from __future__ import annotations

import os
import re

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import values

from dbfleet_testing.settings_role import DROPIN, MAP, changed_by_host, changed_by_task, play
from dbfleet_testing.servers import (LAB_HOSTS, global_value, global_values, host_vars, persisted_put_back,
                                     persisted_values, sql, verify)

# What waits for a restart on each server (read-only there).
READ_ONLY = {
    'mysql80': {'innodb_sort_buffer_size', 'innodb_read_io_threads'},
    'mysql97': {'innodb_sort_buffer_size', 'innodb_read_io_threads'},
    'mariadb1011': {'innodb_sort_buffer_size', 'innodb_log_buffer_size'},
    'mariadb118': {'innodb_sort_buffer_size'},
}


# The running values the tests compare before and after.
KEPT = ('innodb_io_capacity', 'innodb_buffer_pool_size', 'innodb_sort_buffer_size')


def dropin(host):
    return os.path.join(host_vars(host)['dbfleet_option_dropin_dir'], DROPIN)


def desired_states(results):
    """{host: what the role wants there}: the desired state each host's run worked out (fact scaffold_state, from
    dbfleet.innodb.desired_settings, the role's own route)."""
    return dict((r['host'], r['result']['ansible_facts']['scaffold_state']) for r in results
                if 'scaffold_state' in (r['result'].get('ansible_facts') or {}))


RESTART_ROLE = 'dbfleet.innodb.restart'


def restart_role_result(result):
    """Whether a task result is the restart role's (its tasks, or the include of it)."""
    return (result['task'].startswith(RESTART_ROLE + ' : ')
            or (result['result'].get('include_args') or {}).get('name') == RESTART_ROLE)


def without_restart(results):
    """The task results of the settings role's own steps, the restart role's left out."""
    return [r for r in results if not restart_role_result(r)]


def audit(host):
    return verify(host, {}, desired_from=['settings'], role_variables=dict(settings_values=MAP),
                  fallback_option_files=[host_vars(host)['dbfleet_option_file']])


def not_ok(result):
    return dict((k, v['status']) for k, v in result['variables'].items() if v['status'] != 'ok')


def as_found(lab, hosts):
    """The hosts without the role's drop-in and without persisted values while the test runs (the lab restarts the
    server, which also drops what SET GLOBAL changed); afterwards the values the server had persisted (a used
    server's own) are persisted again and in effect. Before the test, persisted values of variables that neither the
    map nor the compared values name (a used server's own: conftest.used_lab) only leave mysqld-auto.cnf, with no
    restart: what they set keeps running, and no run or assertion of the test reads it. Yields {host: values
    before}."""
    def clean(put_back, before=False):
        found = {}
        for host in hosts:
            found[host] = persisted_values(host)
            if found[host]:
                sql(host, 'RESET PERSIST')
            for name, value in sorted(put_back.get(host, {}).items()):
                sql(host, *persisted_put_back(name, value))
            in_effect = set(found[host]) & (set(MAP) | set(KEPT)) if before else found[host]
            if os.path.exists(dropin(host)) or in_effect or put_back.get(host):
                if os.path.exists(dropin(host)):
                    os.remove(dropin(host))
                lab.run('restart', host)
        return found
    found = clean({}, before=True)
    before = kept_values(hosts)
    yield before
    clean(found)
    for host in hosts:
        # What the server had persisted is in effect again; the rest as the test found it.
        was = dict((n, v) for n, v in before[host].items() if n not in found[host])
        if global_values(host, list(was)) != was:
            lab.run('restart', host)
        assert global_values(host, list(was)) == was, host
        assert persisted_values(host) == found[host], host


def kept_values(hosts):
    """{host: {name: running value}} of the settings the tests compare before and after."""
    return dict((h, global_values(h, KEPT)) for h in hosts)


@pytest.fixture()
def lab_as_found(lab):
    """Every lab server as found (as_found): for the tests whose runs change them."""
    yield from as_found(lab, LAB_HOSTS)


@pytest.fixture()
def mysql80_as_found(lab):
    """mysql80 alone as found (as_found): the persisted-settings test changes no other server."""
    yield from as_found(lab, ('mysql80',))


@pytest.fixture()
def lab_unchanged(lab):
    """The running values of every lab server, for a test whose run must change nothing: it needs no clean server
    (no restart), only none of the role's drop-ins there before it runs."""
    assert lab.hosts, 'the lab is not up: start it with `make lab-up`'
    left = [h for h in LAB_HOSTS if os.path.exists(dropin(h))]
    assert left == [], 'a drop-in of the settings role is left on %s (%s)' % (left, DROPIN)
    return kept_values(LAB_HOSTS)


def test_bad_names_values_and_owners_fail_before_any_change(lab_unchanged, tmp_path):
    bad = dict(innodb_bufer_pool_size='1G', innodb_io_capacity=50, innodb_flush_neighbors=0,
               innodb_flush_method='direct', innodb_page_size=32768)
    # settings_persist: true too, which MariaDB refuses (no SET PERSIST) and MySQL takes: one run for both inputs.
    rc, out, results = play(tmp_path, dict(settings_values=dict(MAP, **bad), settings_persist=True))
    assert rc != 0, out
    for host in LAB_HOSTS:
        assert not os.path.exists(dropin(host)), host
        assert global_value(host, 'innodb_io_capacity') == lab_unchanged[host]['innodb_io_capacity'], host
    flat = ' '.join(out.split())
    assert 'settings: invalid input, nothing changed' in flat
    assert 'settings_values.innodb_bufer_pool_size: MySQL 8.0.33 has no such variable (closest: innodb_buffer_pool_size' in flat
    assert 'settings_values.innodb_bufer_pool_size: MariaDB 11.8.9 has no such variable (closest: innodb_buffer_pool_size' in flat
    assert 'settings_values.innodb_io_capacity must be a whole number from 100 to 4294967295' in flat
    assert ('settings_values.innodb_flush_neighbors belongs to the flush_neighbors role: set it with '
            'flush_neighbors_storage_class / flush_neighbors_map') in flat
    assert "settings_values.innodb_flush_method must be one of fsync, O_DSYNC" in flat
    assert 'settings_values.innodb_page_size is fixed when the data directory is created' in flat
    # MariaDB has no SET PERSIST: an input error there, in each MariaDB host's failure and in no MySQL host's.
    failed = dict((r['host'], ' '.join(str(r['result'].get('msg', '')).split())) for r in results
                  if r['status'] == 'failed')
    assert sorted(failed) == sorted(LAB_HOSTS), failed
    for host in LAB_HOSTS:
        assert ('MariaDB has no persisted settings' in failed[host]) == host.startswith('mariadb'), (host, failed[host])


def test_persisted_settings_on_mysql(mysql80_as_found, tmp_path):
    rc, out, _results = play(tmp_path, dict(settings_values=MAP, settings_persist=True), hosts=('mysql80',))
    assert rc == 0, out
    persisted = persisted_values('mysql80')
    # SET PERSIST for the dynamic ones, SET PERSIST_ONLY for the read-only ones (applied at the next start).
    assert persisted['innodb_io_capacity'] == '1500' and persisted['innodb_sort_buffer_size'] == '2097152', persisted
    assert persisted['innodb_read_io_threads'] == '6' and global_value('mysql80', 'innodb_read_io_threads') == '4'
    rc, out, _results = play(tmp_path, dict(settings_values=MAP, settings_persist=True), hosts=('mysql80',))
    assert rc == 0 and changed_by_host(out, ('mysql80',)) == {'mysql80': 0}, out


def test_a_settings_map_reaches_every_server(lab_as_found, tmp_path):
    allowed = dict(settings_values=MAP, settings_restart='allowed')
    # Check mode names every change, the restarts and their order too, and changes nothing.
    rc, out, check_results = play(tmp_path, allowed, '--check', '--diff')
    assert rc == 0, out
    wanted = desired_states(check_results)
    assert sorted(wanted) == sorted(LAB_HOSTS), sorted(wanted)
    for host, state in wanted.items():
        assert len(state['settings']) >= 10, (host, state)
        running = global_values(host, list(state['settings']))
        for name, value in state['settings'].items():
            # A value the server already runs would prove nothing.
            assert not values.equal(value, running[name], 'str' if isinstance(value, str) else 'int'), \
                (host, name, value)
        assert set(state['restart_settings']) == READ_ONLY[host], (host, state['restart_settings'])
    assert [t['name'] for t in wanted['mariadb1011']['translated']] == ['innodb_log_file_size']
    assert wanted['mysql80']['settings']['innodb_buffer_pool_size'] % (128 << 20) == 0     # chunk x instances
    assert wanted['mariadb118']['unsupported'][0]['status'] == 'ignored'
    assert not any(os.path.exists(dropin(h)) for h in LAB_HOSTS)
    assert global_value('mysql80', 'innodb_io_capacity') == lab_as_found['mysql80']['innodb_io_capacity']
    assert '+innodb_sort_buffer_size = 2097152' in out and '+innodb_log_file_size = 201326592' in out
    assert re.search(r'innodb_io_capacity\W+1500', out), out       # the runtime change's diff
    assert 'would restart one server at a time, in this order:' in out, out

    # The real run, without the restart, does what check mode said of the role's own steps, task by task.
    rc, out, real_results = play(tmp_path, dict(settings_values=MAP))
    assert rc == 0, out
    predicted, done = changed_by_task(without_restart(check_results)), changed_by_task(real_results)
    assert predicted == done, set(predicted.items()) ^ set(done.items())
    assert not any(restart_role_result(r) for r in real_results)
    for host in LAB_HOSTS:
        assert os.path.exists(dropin(host))
        state = wanted[host]
        running = global_values(host, list(state['settings']))
        for name, value in state['settings'].items():
            if name in READ_ONLY[host]:
                assert not values.equal(value, running[name], 'str' if isinstance(value, str) else 'int'), (host, name)
            else:
                assert values.equal(value, running[name], 'str' if isinstance(value, str) else 'int'), \
                    (host, name, running[name])
        result = audit(host)
        assert not_ok(result) == dict((n, 'pending_restart') for n in READ_ONLY[host]), (host, not_ok(result))
    assert ('innodb_sort_buffer_size: pending_restart: the server runs 1048576, the drop-in says 2097152: read-only '
            'at runtime on MySQL 8.0.33') in ' '.join(out.split()), out

    # A second run, with the restart allowed: the role's own steps change nothing; the gated restart applies the
    # read-only settings, one server at a time.
    rc, out, restart_results = play(tmp_path, allowed)
    assert rc == 0, out
    again = changed_by_task(without_restart(restart_results))
    assert again and not any(again.values()), [k for k, v in again.items() if v]
    for host in LAB_HOSTS:
        result = audit(host)
        assert result['drift'] is False and not_ok(result) == {}, (host, not_ok(result))
        assert global_value(host, 'innodb_sort_buffer_size') == '2097152', host
    # A third run changes nothing.
    rc, out, _results = play(tmp_path, allowed)
    assert rc == 0 and set(changed_by_host(out).values()) == {0}, out
