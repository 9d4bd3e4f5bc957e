# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet_audit: the controller's login per host, the bounded pool, the per-host timeout, errors isolated."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils import fleet_audit as fa
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import verify


# ---------------------------------------------------------------- controller_login
def test_socket_and_option_file_are_never_used_from_the_controller():
    params, notes = fa.controller_login(
        dict(login_user='u', login_password='secret', login_unix_socket='/run/mysqld/mysqld.sock',
             config_file='/root/.my.cnf'),
        dict(ansible_host='10.0.0.5', ansible_connection='ssh'), 'db1')
    assert params['login_host'] == '10.0.0.5'
    assert 'login_unix_socket' not in params
    assert params['config_file'] is None
    assert any('/root/.my.cnf' in n and 'not read' in n for n in notes)
    assert any('socket /run/mysqld/mysqld.sock' in n and '10.0.0.5' in n for n in notes)
    assert not any('secret' in n for n in notes)


def test_loopback_login_host_means_the_host_itself_unless_it_is_the_controller():
    remote, _notes = fa.controller_login(dict(login_host='127.0.0.1', login_port=3307), {}, 'db2.example')
    assert remote['login_host'] == 'db2.example'          # no ansible_host: the inventory name
    assert remote['login_port'] == 3307
    local, notes = fa.controller_login(dict(login_host='127.0.0.1'), dict(ansible_connection='local'), 'lab1')
    assert local['login_host'] == '127.0.0.1' and notes == []


def test_a_real_login_host_is_kept():
    params, notes = fa.controller_login(dict(login_host='db3.internal'), dict(ansible_host='10.9.9.9'), 'db3')
    assert params['login_host'] == 'db3.internal' and notes == []


def test_no_login_host_on_a_remote_host_uses_ansible_host():
    params, _notes = fa.controller_login({}, dict(ansible_host='10.0.0.7'), 'db4')
    assert params['login_host'] == '10.0.0.7'
    # resolve_login() then reads no option file of the controller
    assert connection.resolve_login(params)['host'] == '10.0.0.7'


# ---------------------------------------------------------------- the pool
def test_pool_is_bounded_and_one_failure_is_that_hosts_error():
    running, peak, lock = [0], [0], threading.Lock()

    def worker(job):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.02)
            if job == 'boom':
                raise RuntimeError('kaput')
            return dict(failed=False, drift=job == 'drift')
        finally:
            with lock:
                running[0] -= 1

    jobs = dict(('h%02d' % i, 'ok') for i in range(40))
    jobs['h07'] = 'boom'
    jobs['h08'] = 'drift'
    results = fa.run_pool(jobs, worker, pool=5)
    assert sorted(results) == sorted(jobs)
    assert peak[0] <= 5
    assert results['h07'] == dict(failed=True, msg='RuntimeError: kaput')
    assert fa.summarize(results) == dict(hosts=40, hosts_ok=38, hosts_drift=1, hosts_error=1)


def test_pool_with_no_jobs():
    assert fa.run_pool({}, lambda job: job) == {}


# ---------------------------------------------------------------- one host
class FakeConn(object):
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


def test_unreachable_host_is_an_error_item_with_the_target_and_no_password():
    def refuse(params, timeout):
        raise connection.ConnectError('cannot connect to %s: (2003) refused' % connection.describe_target(params))

    out = fa.audit_host(dict(login_host='10.0.0.9', login_port=3306, login_user='u', login_password='secret'),
                        {}, connect=refuse)
    assert out['failed'] is True
    assert out['connected_to'] == 'u@10.0.0.9:3306'
    assert 'secret' not in repr(out)


def test_bad_role_input_fails_that_host_and_closes_its_connection(monkeypatch):
    conn = FakeConn()

    def bad_input(*args, **kwargs):
        assert kwargs['proc_root'] is None and kwargs['desired_from'] == ['adaptive_hash']
        raise desired.InputError(['adaptive_hash: adaptive_hash_parts must be 1-512; got 1000'])
    monkeypatch.setattr(verify, 'audit', bad_input)
    out = fa.audit_host(dict(login_host='h'), {}, ['adaptive_hash'], dict(adaptive_hash_parts=1000),
                        connect=lambda params, timeout: conn)
    assert out['failed'] and 'adaptive_hash_parts must be 1-512' in out['msg']
    assert conn.closed


def test_an_exception_while_auditing_is_that_hosts_error(monkeypatch):
    conn = FakeConn()

    def broken(*args, **kwargs):
        raise KeyError('version')
    monkeypatch.setattr(verify, 'audit', broken)
    out = fa.audit_host(dict(login_host='h', login_port=1), {}, connect=lambda params, timeout: conn)
    assert out['failed'] and 'KeyError' in out['msg'] and conn.closed


def test_open_connection_passes_the_timeout_for_connect_read_and_write(monkeypatch):
    seen = {}

    class Fake(object):
        def __init__(self, **kwargs):
            seen.update(kwargs)
    monkeypatch.setattr(fa, '_Connection', Fake)
    fa.open_connection(dict(login_host='h', login_port=3306, login_user='u', config_file=None), 7)
    assert (seen['connect_timeout'], seen['read_timeout'], seen['write_timeout']) == (7, 7, 7)


def test_a_server_that_never_answers_times_out():
    """A real TCP listener that accepts and says nothing: the audit of that host ends after the timeout."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(('127.0.0.1', 0))
    listener.listen(5)
    port = listener.getsockname()[1]
    try:
        start = time.monotonic()
        out = fa.audit_host(dict(login_host='127.0.0.1', login_port=port, login_user='u', login_password='pw',
                                 config_file=None), {}, timeout=1)
        elapsed = time.monotonic() - start
    finally:
        listener.close()
    assert out['failed'] is True
    assert 'cannot connect to u@127.0.0.1:%d' % port in out['msg']
    assert elapsed < 5


# ---------------------------------------------------------------- desired state and notes
def test_flush_neighbors_only_with_a_storage_class_and_storage_is_never_inspected():
    roles, notes = fa.controller_roles(['adaptive_hash', 'flush_neighbors'], dict(adaptive_hash_enabled=False))
    assert roles == ['adaptive_hash'] and notes == [fa.STORAGE_NOTE]
    roles, notes = fa.controller_roles(['flush_neighbors'], dict(flush_neighbors_storage_class='hdd'))
    assert roles == ['flush_neighbors'] and notes == []
    found = fa.storage_not_inspected('/var/lib/mysql', True)
    assert found['storage_class'] == 'unknown' and 'not inspected' in found['reasons'][0]
    facts = dict(flavor='mysql', version=[8, 0, 33], version_text='8.0.33', datadir='/var/lib/mysql',
                 capabilities={}, variables=dict(innodb_flush_neighbors=dict(exists=True, settable=True,
                                                                             runtime='0')))
    state = desired.for_role('flush_neighbors', dict(flush_neighbors_storage_class='hdd'), facts,
                             fa.storage_not_inspected)
    assert state['settings'] == dict(innodb_flush_neighbors=1)


@pytest.mark.parametrize('item, fragment', [
    (dict(startup=dict(state='known')), None),
    (dict(startup=dict(state='unavailable'), origin=None), 'only the running value was checked'),
    (dict(startup=dict(state='unavailable'), origin='COMPILED'), 'compiled-in default when it started'),
    (dict(startup=dict(state='unavailable'), origin='EXPLICIT', origin_path='/etc/my.cnf'),
     'an option file (/etc/my.cnf) when it started'),
    (dict(startup=dict(state='unavailable'), origin='SQL'), 'set at runtime'),
])
def test_startup_notes_say_what_sql_tells_and_what_it_does_not(item, fragment):
    notes = fa.startup_notes(item)
    if fragment is None:
        assert notes == []
    else:
        assert len(notes) == 1 and fragment in notes[0]


def test_local_process_is_never_read_from_the_controller(tmp_path):
    pid_file = tmp_path / 'mysqld.pid'
    pid_file.write_text('1\n')
    process, reason = server_facts.local_process(dict(pid_file=str(pid_file)), dict(login_host='127.0.0.1'),
                                                 proc_root=None)
    assert process is None and 'controller' in reason
