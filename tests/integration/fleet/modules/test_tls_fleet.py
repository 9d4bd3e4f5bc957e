"""TLS and the password on the lab's network (the SSH fleet's bridge): every way a fake server on an ordinary,
non-loopback address asks for the password, against a connection, a module run by Ansible, the controller audit and the
restart gate, and a remote login that is not verified (the local lab's tests are local/modules/test_tls.py)."""

from __future__ import annotations

import json
import time

import pymysql
import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet
from dbfleet_testing.runs import PYTHON, ansible
from dbfleet_testing.tls import Forwarder, MARKER, adhoc_results, assert_refused, fake_login, module, rsa_key, tls_hosts


def test_the_fake_servers_learn_the_password_from_plain_pymysql(auth_servers):
    # The hazard itself, for each way: PyMySQL hands over the password (so each fake server works).
    for way, server in auth_servers.items():
        ssl_options = dict(ssl={'check_hostname': False}) if way == 'caching_full_tls' else {}
        with pytest.raises(pymysql.err.MySQLError):
            pymysql.connect(host=server.address, port=server.port, user='dbfleet', password=MARKER, connect_timeout=5,
                            **ssl_options)
        assert server.learned(MARKER), way


@pytest.mark.parametrize('chosen', [{}, {'login_ssl_mode': 'preferred'}], ids=['default', 'preferred'])
def test_no_way_of_asking_gets_the_password_from_a_connection(auth_servers, chosen):
    for way, server in auth_servers.items():
        with pytest.raises(connection.ConnectError) as raised:
            connection.open_connection(dict(fake_login(server, **chosen), config_file=''))
        message = str(raised.value)
        assert 'the password was not sent' in message and '%s:%d' % (server.address, server.port) in message, message
        assert not server.learned(MARKER), (way, bytes(server.received))
        if way == 'sha256_greeting':
            # The first answer would carry the key request: the client stops before it, having sent nothing.
            assert bytes(server.received) == b'' and server.connections == 1, bytes(server.received)
        else:
            assert b'dbfleet' in bytes(server.received), 'the client never reached the fake server (%s)' % way
        if way in ('sha256_greeting', 'sha256_switch', 'caching_full'):
            assert 'login_server_public_key' in message and 'login_get_server_public_key' in message, message
            plugin = 'caching_sha2_password' if way.startswith('caching') else 'sha256_password'
            assert plugin in message, message


def test_the_key_exchange_is_made_only_with_the_users_key_or_when_chosen(auth_servers, tmp_path):
    # The real server's key, given by the user: the fake server's own key is never used, it decrypts nothing.
    _other, real_pem = rsa_key()
    key_file = tmp_path / 'server-public-key.pem'
    key_file.write_bytes(real_pem)
    for way in ('sha256_greeting', 'sha256_switch', 'caching_full'):
        server = auth_servers[way]
        with pytest.raises(connection.ConnectError, match='Access denied'):
            connection.open_connection(dict(fake_login(server, login_server_public_key=str(key_file)), config_file=''))
        assert not server.learned(MARKER) and server.decrypted == [], way
        assert len(bytes(server.received)) > 256, 'the client sent no encrypted password (%s)' % way
    # Chosen explicitly (as --get-server-public-key): the server's key is taken, as the user asked.
    server = auth_servers['caching_full']
    with pytest.raises(connection.ConnectError, match='Access denied'):
        connection.open_connection(dict(fake_login(server, login_get_server_public_key=True), config_file=''))
    assert server.learned(MARKER)


@pytest.mark.parametrize('route', ['module_task', 'inventory_login'])
def test_no_way_of_asking_gets_the_password_from_a_module(auth_servers, tmp_path, route):
    """server_facts run by Ansible, its login in the task or from the inventory, by default and with preferred."""
    hosts = {}
    for way, server in auth_servers.items():
        for chosen in ('default', 'preferred'):
            login = dict(fake_host=server.address, fake_port=server.port)
            if route == 'inventory_login':
                login.update(dbfleet_login_host=server.address, dbfleet_login_port=server.port,
                             dbfleet_login_user='dbfleet', dbfleet_login_password=MARKER)
                if chosen == 'preferred':
                    login['dbfleet_login_ssl_mode'] = 'preferred'
            hosts['%s_%s' % (way, chosen)] = dict(login, ansible_connection='local', fake_mode=chosen,
                                                  ansible_python_interpreter=PYTHON)
    inventory = tmp_path / 'fake.yml'
    inventory.write_text(json.dumps({'all': {'hosts': hosts}}))
    if route == 'module_task':
        args = dict(login_host='{{ fake_host }}', login_port='{{ fake_port }}', login_user='dbfleet',
                    login_password=MARKER, config_file='',
                    login_ssl_mode="{{ 'preferred' if fake_mode == 'preferred' else omit }}")
    else:
        args = dict(config_file='')
    _rc, out = ansible('ansible', 'all', '-i', str(inventory), '-m', 'dbfleet.innodb.server_facts', '-a', json.dumps(args))
    results = adhoc_results(out, hosts)
    assert MARKER not in out
    for host in hosts:
        way = host.rsplit('_', 1)[0]
        assert host in results, out[-3000:]
        assert '%s | FAILED' % host in out, (host, results[host])
        assert_refused(auth_servers[way], results[host]['msg'], host)


@pytest.mark.parametrize('chosen', [{}, {'login_ssl_mode': 'preferred'}], ids=['default', 'preferred'])
def test_no_way_of_asking_gets_the_password_from_the_controller_audit(auth_servers, chosen):
    for way, server in auth_servers.items():
        params, _notes = verify_fleet.controller_login(fake_login(server, **chosen),
                                                       dict(ansible_host=server.address), 'remote-%s' % way)
        result = verify_fleet.audit_host(params, {}, timeout=5)
        assert result['failed'], (way, result)
        assert MARKER not in json.dumps(result) and not server.learned(MARKER), (way, result)
        if chosen:
            assert_refused(server, result['msg'], way)
        else:
            assert 'its identity cannot be verified' in result['msg'] and server.connections == 0, (way, result)


def test_the_restart_gate_shuts_at_once_on_a_refused_login(auth_servers):
    """The gate waits for a server that does not answer, not for one whose login the rules refuse. It runs on the
    controller's implicit localhost: the task names its server (the fake one), so no lab host is needed."""
    server = auth_servers['sha256_switch']
    started = time.monotonic()
    rc, result, out = module('localhost', 'dbfleet.innodb.restart_gate',
                             dict(fake_login(server), config_file='', timeout=120, interval=1))
    assert rc != 0 and result is not None, out
    assert 'the login was refused and waiting does not change that' in result['msg'], result
    assert 'the password was not sent' in result['msg'] and time.monotonic() - started < 60, result
    assert server.connections == 1 and not server.learned(MARKER) and MARKER not in out


def test_no_way_of_asking_gets_the_password_from_the_restart_gates_looks(auth_servers):
    from ansible_collections.dbfleet.innodb.plugins.modules import restart_gate  # pylint: disable=import-outside-toplevel
    for way, server in auth_servers.items():
        params = dict(fake_login(server), config_file='', connect_timeout=5, expect_replica=False, max_lag=30)
        facts, problems, conn = restart_gate.look(params, None)
        assert facts is None and conn is None, way
        assert_refused(server, problems[0], way)


# The local lab's own tests restart mysql80 (roles, the restart path) while this stream runs: a run that met such a
# restart (the server refused the connection, or dropped it) is run again once the server answers, up to three times.
_RESTARTING = ("Can't connect to MySQL server", 'Lost connection to MySQL server', '(2013', '(2003')


def _unverified_login_checks(lab, lab_network, ca):  # pylint: disable=redefined-outer-name
    """The test's three runs through a new forwarder; None when they passed, else the output of a run that met a
    restart of mysql80."""
    lab.query('mysql80', 'SELECT 1', tries=120)
    forwarder = Forwarder(lab_network, lab.hosts['mysql80']['port'])
    try:
        base = dict(login_host=forwarder.address, login_port=forwarder.port, login_user=lab.admin_user,
                    login_password=lab.admin_password, config_file='')
        rc, result, out = module('mysql80', 'dbfleet.innodb.server_facts', base)
        if rc != 0 and any(m in out for m in _RESTARTING):
            return out
        assert rc == 0, out
        assert result['server_facts']['port'] == lab.hosts['mysql80']['port'], out
        warning = '[WARNING]: the server %s@%s:%d is reached over TCP without verifying its identity' % (
            lab.admin_user, forwarder.address, forwarder.port)
        assert warning in out and 'verify_identity with ca_cert' in out and lab.admin_password not in out, out
        rc, result, out = module('mysql80', 'dbfleet.innodb.server_facts',
                                 dict(base, login_ssl_mode='verify_ca', ca_cert=ca))
        if rc != 0 and any(m in out for m in _RESTARTING):
            return out
        assert rc == 0, out
        assert 'without verifying' not in out, out
        rc, _result, out = module('mysql80', 'dbfleet.innodb.server_facts', dict(base, login_ssl_mode='verify_ca'))
        assert rc != 0 and 'none was given: set ca_cert' in out, out
        assert forwarder.connections == 2
        return None
    finally:
        forwarder.close()


def test_a_remote_login_that_is_not_verified_is_warned_about_and_a_verified_one_is_not(lab, lab_network):  # pylint: disable=redefined-outer-name
    """server_facts reaching mysql80 through an address of the lab's network: a warning in the result names the
    server and how to verify it; with the lab's CA (the chain verified) there is none."""
    _hosts, ca = tls_hosts(lab)
    for attempt in range(3):
        met_restart = _unverified_login_checks(lab, lab_network, ca)
        if met_restart is None:
            return
        print('attempt %d met a restart of mysql80 by the local tests, run again:\n%s' % (attempt + 1, met_restart))
    pytest.fail('mysql80 was restarting in each of 3 attempts: %s' % met_restart)
