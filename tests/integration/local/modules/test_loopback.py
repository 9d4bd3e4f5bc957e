# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Loopback as the mysql client has it: a local user listening on the login port learns no password.

A process of uid 65534 (nobody: any local user of the database host) listens on a free loopback port, 127.0.0.1 and
::1, and asks for the password as a server in the middle does (caching_sha2_password full authentication with its own
RSA key, sha256_password in the greeting), recording every byte (dbfleet_testing.tls.NobodyAuthServer). With default
settings, a module task, the restart gate and the controller audit all stop before the password leaves, and say whose
listener it is; the lab's servers (run by root, as the tests) keep logging in over 127.0.0.1.
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet
from dbfleet_testing.runs import playbook_proc
from dbfleet_testing.tls import MARKER, NOBODY, Forwarder, NobodyAuthServer, address_of_this_machine

WAYS = ('caching_full', 'sha256_greeting')
ADDRESSES = ('127.0.0.1', '::1')
OWNER = 'belongs to uid %d' % NOBODY


@pytest.fixture(scope='module')
def nobody_servers():
    """(address, way) -> a NobodyAuthServer on that loopback address (all started before the first is waited for)."""
    servers = dict(((address, way), NobodyAuthServer(way, address)) for address in ADDRESSES for way in WAYS)
    assert all(server.port for server in servers.values())
    yield servers
    for server in servers.values():
        server.close()


def fake_login(server, **extra):
    return dict(login_host=server.address, login_port=server.port, login_user='dbfleet', login_password=MARKER,
                **extra)


def assert_nothing_learned(server, message):
    assert 'the password was not sent' in message, message
    assert OWNER in message and 'not proven to be the server' in message, message
    assert MARKER not in message
    state = server.state()
    assert state['connections'] >= 1, state         # the client did reach the listener
    assert not server.learned(MARKER), state


@pytest.mark.parametrize('address', ADDRESSES)
@pytest.mark.parametrize('way', WAYS)
def test_a_local_user_listening_on_loopback_gets_no_password(nobody_servers, address, way):
    server = nobody_servers[(address, way)]
    with pytest.raises(connection.LoginRefused) as refused:
        connection.open_connection(dict(fake_login(server), config_file=''))
    assert_nothing_learned(server, str(refused.value))
    assert ('[%s]:%d' % (address, server.port) if ':' in address else '%s:%d' % (address, server.port)) \
        in str(refused.value)


@pytest.fixture(scope='module')
def module_runs(lab, nobody_servers, tmp_path_factory):
    """(results, forwarder) of one playbook on mysql80, errors ignored: server_facts to each listener of nobody, the
    restart gate to one (it reconnects while a server is down), and topology_facts and the restart gate (which open
    their connections without connect()) to mysql80 through an address of this machine that is not a loopback one
    (a remote server as the module sees it, through a Forwarder). The password appears in no output."""
    lab.refresh()
    forwarder = Forwarder(address_of_this_machine(), lab.hosts['mysql80']['port'])
    remote = dict(login_host=forwarder.address, login_port=forwarder.port, login_user=lab.admin_user,
                  login_password=lab.admin_password, login_ssl_mode='disabled')
    tasks = {'remote topology': {'dbfleet.innodb.topology_facts': remote},
             'remote gate': {'dbfleet.innodb.restart_gate': dict(remote, timeout=30)},
             'gate': {'dbfleet.innodb.restart_gate': dict(fake_login(nobody_servers[('127.0.0.1', 'caching_full')]),
                                                          timeout=20)}}
    for (address, way), server in sorted(nobody_servers.items()):
        tasks['facts %s %s' % (address, way)] = {'dbfleet.innodb.server_facts': fake_login(server)}
    # A host reached through an SSH port forward on the controller's loopback: the controller audit logs in nowhere.
    tasks['controller forwarded'] = {'dbfleet.innodb.verify_fleet': dict(hosts=['forwarded'], desired_from=[], timeout=5)}
    names = sorted(tasks)
    play_tasks = [{'ansible.builtin.add_host': dict(name='forwarded', ansible_host='127.0.0.1', ansible_port=2222,
                                                    ansible_connection='ssh', dbfleet_login_user='dbfleet',
                                                    dbfleet_login_password=MARKER)}]
    play_tasks += [dict(tasks[name], name=name, register='r%d' % n, ignore_errors=True) for n, name in enumerate(names)]
    tmp_path = tmp_path_factory.mktemp('loopback')
    found = tmp_path / 'results.json'
    play_tasks.append({'ansible.builtin.copy': {'dest': str(found), 'content': '{{ [%s] | to_json }}'
                                                % ', '.join('r%d' % n for n in range(len(names)))}})
    play = tmp_path / 'loopback.yml'
    play.write_text(json.dumps([{'hosts': 'mysql80', 'gather_facts': False, 'tasks': play_tasks}]))
    try:
        proc = playbook_proc('inventories/lab', str(play), timeout=180)
    finally:
        forwarder.close()
    out = proc.stdout + proc.stderr
    assert MARKER not in out and lab.admin_password not in out
    assert proc.returncode == 0, out
    return dict(zip(names, json.loads(found.read_text()))), forwarder


def test_module_tasks_and_the_restart_gate_with_default_settings(module_runs, nobody_servers):
    results, _forwarder = module_runs
    for (address, way), server in nobody_servers.items():
        result = results['facts %s %s' % (address, way)]
        assert result.get('failed'), result
        assert_nothing_learned(server, result['msg'])
    result = results['gate']
    assert result.get('failed') and 'the login was refused and waiting does not change that' in result['msg'], result
    assert_nothing_learned(nobody_servers[('127.0.0.1', 'caching_full')], result['msg'])


def test_every_route_warns_about_an_unverified_remote_server(lab, module_runs):
    results, forwarder = module_runs
    expected = ('%s@%s:%d is reached over TCP without verifying its identity'
                % (lab.admin_user, forwarder.address, forwarder.port))
    for name in ('remote topology', 'remote gate'):
        result = results[name]
        assert not result.get('failed'), (name, result)
        assert any(expected in w for w in result.get('warnings', [])), (name, result)
    assert results['remote topology']['topology']['server'] and results['remote gate']['passed'], results


def test_the_controller_audit_logs_in_nowhere_for_a_host_behind_its_own_loopback(module_runs):
    results, _forwarder = module_runs
    host = results['controller forwarded']['hosts']['forwarded']
    assert host.get('failed') or host.get('status') == 'error', host
    assert "reached through the controller's own loopback (ansible_host 127.0.0.1" in json.dumps(host), host
    assert 'dbfleet_login_host' in json.dumps(host)


@pytest.mark.parametrize('address', ADDRESSES)
def test_the_controller_audit_sends_no_password_to_a_local_listener(nobody_servers, address):
    server = nobody_servers[(address, 'caching_full')]
    params, _notes = verify_fleet.controller_login(fake_login(server), dict(ansible_connection='local'), 'here')
    result = verify_fleet.audit_host(params, {}, timeout=5)
    assert result['failed'], result
    assert_nothing_learned(server, result['msg'])


def test_the_lab_servers_still_log_in_over_loopback_tcp(lab):
    """mysql80 asks for caching_sha2_password full authentication of a new connection's first login over TCP
    without TLS: the RSA exchange with the key it sends, allowed because its listener belongs to root (the user the
    lab runs it as, and this test's)."""
    hosts = lab.refresh()
    lab.query('mysql80', 'FLUSH PRIVILEGES')            # empties caching_sha2_password's cache: full authentication
    conn = connection.open_connection(dict(login_host='127.0.0.1', login_port=hosts['mysql80']['port'],
                                           login_user=lab.admin_user, login_password=lab.admin_password,
                                           login_ssl_mode='disabled', config_file=''))
    try:
        assert conn.dbfleet_peer()['trusted'] and conn.dbfleet_peer()['uid'] == 0, conn.dbfleet_peer()
        assert query_one(conn, 'SELECT CURRENT_USER() AS u')['u'].startswith(lab.admin_user + '@')
    finally:
        conn.close()
