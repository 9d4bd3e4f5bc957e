# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TLS and the password, against the lab's real servers and small fake servers on this machine.

The lab (lab/dbfleet_lab/tls.py) has its own CA: mysql80 has a certificate for 127.0.0.1 / localhost,
mariadb118 one for another name, mariadb1011 offers no TLS. The fake servers speak just enough of the
MySQL protocol to ask a client for its password in clear, and record every byte the client sends.

Also the login rule: a task that names another server reaches that server, not the one of the
inventory's socket.
"""

from __future__ import annotations

import json

import pymysql
import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import query_one
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify_fleet
from dbfleet_testing.runs import playbook_proc
from dbfleet_testing.task_runs import task_run
from dbfleet_testing.tls import (CAPABILITIES, CLIENT_SSL, INVENTORY, MARKER, AuthServer, FakeServer, Forwarder,
                                 FullAuthServer, address_of_this_machine, login, module, negotiated, tls_hosts)


# The module calls of the tests below: each a task of one playbook run on its host (dbfleet_testing.task_runs),
# `logins` the task's login options by host (verify_identity with the lab's CA on mysql80 and mariadb118; on
# mariadb1011, whose inventory names its socket, mysql80's TCP port).
MODULE_CALLS = r"""
- name: server_facts through the lab's certificates, and a task naming another server
  hosts: mysql80:mariadb118:mariadb1011
  gather_facts: false
  vars:
    login: "{{ logins[inventory_hostname] }}"
  tasks:
    - name: server_facts
      dbfleet.innodb.server_facts:
        login_host: "{{ login.login_host }}"
        login_port: "{{ login.login_port }}"
        login_user: "{{ login.login_user | default(omit) }}"
        login_password: "{{ login.login_password | default(omit) }}"
        login_ssl_mode: "{{ login.login_ssl_mode | default(omit) }}"
        ca_cert: "{{ login.ca_cert | default(omit) }}"
      ignore_errors: true
"""


@pytest.fixture(scope='module')
def lab_ca(lab):
    """(hosts, CA file) of the lab (tls_hosts: its status read once for the module)."""
    return tls_hosts(lab)


@pytest.fixture(scope='module')
def module_calls(lab, lab_ca, tmp_path_factory):
    """The run of MODULE_CALLS: its TaskRun."""
    hosts, ca = lab_ca
    logins = dict((host, login(lab, host, login_ssl_mode='verify_identity', ca_cert=ca))
                  for host in ('mysql80', 'mariadb118'))
    logins['mariadb1011'] = dict(login_host='127.0.0.1', login_port=hosts['mysql80']['port'])
    return task_run(INVENTORY, MODULE_CALLS, tmp_path_factory.mktemp('tls_calls'), dict(logins=logins))


# ---------------------------------------------------------------- the lab's certificates
def test_verify_identity_with_the_good_certificate_connects(lab, module_calls, lab_ca):
    _hosts, ca = lab_ca
    result, out = module_calls('server_facts', 'mysql80'), module_calls.output
    assert not result['failed'], out
    assert result['server_facts']['port'] == lab.hosts['mysql80']['port']
    assert lab.admin_password not in out
    assert negotiated(lab, 'mysql80', login_ssl_mode='verify_identity', ca_cert=ca).startswith('TLS')


def test_a_certificate_for_another_name_is_refused_by_verify_identity_only(lab, module_calls, lab_ca):
    _hosts, ca = lab_ca
    result, out = module_calls('server_facts', 'mariadb118'), module_calls.output
    assert result['failed']
    assert 'certificate is not valid for' in result['msg'] and "'127.0.0.1'" in result['msg'], out
    assert lab.admin_password not in out
    # Not set, with a CA: verify_identity, as community.mysql's check_hostname default.
    with pytest.raises(connection.ConnectError, match='certificate verify failed'):
        negotiated(lab, 'mariadb118', ca_cert=ca)
    # verify_ca checks the chain, not the name: the same server is accepted.
    assert negotiated(lab, 'mariadb118', login_ssl_mode='verify_ca', ca_cert=ca).startswith('TLS')


def test_the_self_signed_certificate_of_a_server_fails_against_the_lab_ca(lab, lab_ca):
    _hosts, ca = lab_ca
    with pytest.raises(connection.ConnectError, match='certificate verify failed'):
        negotiated(lab, 'mysql97', login_ssl_mode='verify_ca', ca_cert=ca)


@pytest.mark.parametrize('mode', ['required', 'verify_ca', 'verify_identity'])
def test_a_server_without_tls_is_refused_when_tls_is_required(lab, mode, lab_ca):
    _hosts, ca = lab_ca
    with pytest.raises(connection.ConnectError, match='offers no TLS'):
        negotiated(lab, 'mariadb1011', login_ssl_mode=mode, ca_cert=ca)
    assert negotiated(lab, 'mariadb1011', login_ssl_mode='preferred') == ''


def test_disabled_uses_no_tls_on_a_server_that_offers_it(lab):
    assert negotiated(lab, 'mysql80', login_ssl_mode='disabled') == ''


def test_the_fake_server_does_get_the_password_from_plain_pymysql(fake_server):
    # The hazard itself: PyMySQL answers the cleartext request with the password (so the fake server works).
    with pytest.raises(pymysql.err.MySQLError):
        pymysql.connect(host='127.0.0.1', port=fake_server.port, user='dbfleet', password=MARKER, connect_timeout=5)
    assert MARKER.encode() in bytes(fake_server.received[0])


def test_a_server_asking_for_the_cleartext_plugin_gets_no_password(lab, fake_server):
    rc, _result, out = module('mysql80', 'dbfleet.innodb.server_facts',
                              dict(login_host='127.0.0.1', login_port=fake_server.port, login_user='dbfleet',
                                   login_password=MARKER))
    assert rc != 0
    assert 'mysql_clear_password' in out and 'the password was not sent' in out, out
    assert MARKER not in out
    sent = b''.join(bytes(chunk) for chunk in fake_server.received)
    assert b'dbfleet' in sent, 'the module never reached the fake server: %r\n%s' % (sent, out)
    assert MARKER.encode() not in sent


def test_a_server_without_tls_gets_nothing_when_tls_is_required(tls_files):
    server = FakeServer()
    try:
        for mode in ('required', 'verify_identity'):
            with pytest.raises(connection.ConnectError, match='offers no TLS'):
                connection.open_connection(dict(login_host='127.0.0.1', login_port=server.port, login_user='dbfleet',
                                                login_password=MARKER, login_ssl_mode=mode, config_file='',
                                                ca_cert=tls_files[0]))
        assert len(server.received) == 2 and all(bytes(chunk) == b'' for chunk in server.received), server.received
    finally:
        server.close()


def test_an_unverified_remote_server_gets_no_password_by_full_authentication():
    server = FullAuthServer(address_of_this_machine())
    try:
        # The hazard: PyMySQL sends the password encrypted with the key the server hands it.
        with pytest.raises(pymysql.err.MySQLError):
            pymysql.connect(host=server.address, port=server.port, user='dbfleet', password=MARKER, connect_timeout=5)
        assert server.password == MARKER.encode()
        server.password = None
        with pytest.raises(connection.ConnectError, match='the password was not sent'):
            connection.open_connection(dict(login_host=server.address, login_port=server.port, login_user='dbfleet',
                                            login_password=MARKER, config_file=''))
        assert server.password is None
        sent = bytes(server.received[-1])
        # The handshake response (user name, a hash of the password) and nothing after it: no key request.
        assert b'dbfleet' in sent and len(sent) == 4 + int.from_bytes(sent[:3], 'little'), sent
    finally:
        server.close()


def test_the_controller_sends_no_password_to_a_server_it_cannot_verify():
    server = FakeServer(address=address_of_this_machine(), capabilities=CAPABILITIES | CLIENT_SSL)
    try:
        params = dict(login_host=server.address, login_port=server.port, login_user='dbfleet', login_password=MARKER)
        params, notes = verify_fleet.controller_login(params, dict(ansible_host=server.address), 'remote1')
        assert notes == []
        result = verify_fleet.audit_host(params, {}, timeout=5)
        assert result['failed'] and 'its identity cannot be verified' in result['msg'], result
        assert 'dbfleet_login_ssl_mode' in result['msg'] and MARKER not in result['msg']
        assert server.received == []        # not even a TCP connection
        # Chosen explicitly: the controller connects, and its result says the server was not verified.
        chosen, notes = verify_fleet.controller_login(dict(params, login_ssl_mode='preferred'),
                                                      dict(ansible_host=server.address), 'remote1')
        assert notes == ["the server's identity was not verified: login_ssl_mode preferred was chosen for "
                         "dbfleet@%s:%d" % (server.address, server.port)]
    finally:
        server.close()


def test_an_auth_switch_to_mysql_old_password_is_refused_with_a_message():
    server = AuthServer('old_password', '127.0.0.1')
    try:
        with pytest.raises(connection.LoginRefused, match='asks for mysql_old_password, the pre-4.1 password hash') as refused:
            connection.open_connection(dict(login_host='127.0.0.1', login_port=server.port, login_user='dbfleet',
                                            login_password=MARKER, config_file=''))
        assert 'nothing of the password was sent' in str(refused.value) and MARKER not in str(refused.value)
        assert server.connections == 1 and not server.learned(MARKER)
    finally:
        server.close()


def test_a_public_key_file_that_is_not_one_is_refused_naming_it(tmp_path):
    bad = tmp_path / 'not-a-key.pem'
    bad.write_text('hello\n')
    with pytest.raises(ValueError, match='login_server_public_key %s holds no PEM public key' % bad):
        connection.connection_kwargs(dict(login_host='10.0.0.1', login_server_public_key=str(bad), config_file=''))


# ---------------------------------------------------------------- loopback TCP, trusted unless turned off
def test_loopback_tcp_is_trusted_by_default_and_not_when_turned_off(tls_files):
    """A listener of root on a loopback port (root runs the lab's servers, and can read the password anyway): trusted
    by default (documented), given nothing with login_trust_loopback false. Another user's listener gets nothing
    either way (test_loopback.py)."""
    server = AuthServer('caching_full', '127.0.0.1', tls_files)
    try:
        login = dict(login_host='127.0.0.1', login_port=server.port, login_user='dbfleet', login_password=MARKER,
                     config_file='')
        with pytest.raises(connection.ConnectError, match='the password was not sent'):
            connection.open_connection(dict(login, login_trust_loopback=False))
        assert not server.learned(MARKER) and b'dbfleet' in bytes(server.received)
        with pytest.raises(connection.ConnectError, match='Access denied'):
            connection.open_connection(login)
        assert server.learned(MARKER)       # the default's trust of root's listener, as docs/security.md says
    finally:
        server.close()


def test_without_loopback_trust_the_socket_of_the_same_server_is_preferred(lab, lab_ca, tmp_path):
    hosts, _ca = lab_ca
    login = dict(login_host='127.0.0.1', login_port=hosts['mysql80']['port'], login_user=lab.admin_user,
                 login_password=lab.admin_password, login_trust_loopback=False)
    for socket_of, expected in (('mysql80', 'Localhost via UNIX socket'), ('mariadb1011', 'socket 127.0.0.1:%d'
                                                                           % hosts['mysql80']['port'])):
        cnf = tmp_path / ('%s.cnf' % socket_of)
        cnf.write_text('[client]\nsocket = %s\n' % hosts[socket_of]['socket'])
        conn = connection.open_connection(dict(login, config_file=str(cnf)))
        try:
            # mariadb1011's socket reaches another server: not used, the login goes over TCP as named.
            assert conn.host_info == expected, (socket_of, conn.host_info)
            assert str(query_one(conn, 'SELECT @@port AS p')['p']) == str(hosts['mysql80']['port'])
        finally:
            conn.close()


# ---------------------------------------------------------------- the login rule
def test_a_task_naming_another_server_reaches_that_server(lab, lab_ca, module_calls):
    hosts, _ca = lab_ca
    assert hosts['mariadb1011'].get('socket'), hosts['mariadb1011']
    # mariadb1011's inventory sets dbfleet_login_unix_socket; the task names mysql80's TCP port.
    result, out = module_calls('server_facts', 'mariadb1011'), module_calls.output
    assert not result['failed'], out
    facts = result['server_facts']
    uuid = lab.query('mysql80', 'SELECT @@server_uuid AS u')[0]['u']
    assert facts['port'] == hosts['mysql80']['port'], facts
    assert uuid in json.dumps(facts) or facts['version_text'] == hosts['mysql80']['version'], facts


def test_the_fleet_report_says_whether_the_password_was_sent(lab, tmp_path, lab_ca):
    """verify.yml in controller mode, as AWX runs it, on hosts whose servers are not on the controller."""
    address = address_of_this_machine()
    _hosts, ca = lab_ca
    forwarders = dict((name, Forwarder(address, lab.hosts['mysql80']['port']))
                      for name in ('remote-unverified', 'remote-chosen', 'remote-verified'))
    try:
        template = dict(ansible_host=address, ansible_connection='ssh', dbfleet_login_host=address,
                        dbfleet_login_user=lab.admin_user, dbfleet_login_password=lab.admin_password)
        inventory = tmp_path / 'remote.yml'
        inventory.write_text(json.dumps({'all': {'hosts': {
            'remote-unverified': dict(template, dbfleet_login_port=forwarders['remote-unverified'].port),
            'remote-chosen': dict(template, dbfleet_login_port=forwarders['remote-chosen'].port,
                                  dbfleet_login_ssl_mode='required'),
            # mysql80's certificate is for 127.0.0.1: through another address only the chain verifies.
            # The controller's own CA (verify_controller_ca_cert): a host's dbfleet_login_ca_cert names a
            # file on that host, never read on the controller.
            'remote-verified': dict(template, dbfleet_login_port=forwarders['remote-verified'].port,
                                    dbfleet_login_ssl_mode='verify_ca'),
        }}}))

        def audit(name, **extra):
            """verify.yml in controller mode; the hosts' entries of its report."""
            reports = tmp_path / name
            extra = dict({'verify_mode': 'controller', 'verify_report_dir': str(reports), 'verify_timeout': 5}, **extra)
            proc = playbook_proc(str(inventory), 'verify.yml', extra, timeout=300)
            out = proc.stdout + proc.stderr
            assert lab.admin_password not in out
            report_text = (reports / 'verify.json').read_text()
            assert lab.admin_password not in report_text
            return json.loads(report_text)['hosts']

        # No CA on the controller: the first host cannot be verified, the second chose not to verify.
        report = audit('reports', verify_hosts='remote-unverified:remote-chosen')
        unverified = json.dumps(report['remote-unverified'])
        assert report['remote-unverified']['status'] == 'error', unverified
        assert 'its identity cannot be verified' in unverified and 'dbfleet_login_ssl_mode' in unverified
        assert forwarders['remote-unverified'].connections == 0, 'the controller connected to a server it cannot verify'
        chosen = report['remote-chosen']
        assert chosen['status'] != 'error', json.dumps(chosen)[:2000]
        assert "the server's identity was not verified: login_ssl_mode required was chosen" in json.dumps(chosen)
        # The controller's own CA verifies the third.
        verified = audit('reports-ca', verify_hosts='remote-verified', verify_controller_ca_cert=ca)['remote-verified']
        assert verified['status'] != 'error', json.dumps(verified)[:2000]
        assert 'not verified' not in json.dumps(verified)
        assert forwarders['remote-chosen'].connections >= 1 and forwarders['remote-verified'].connections >= 1
    finally:
        for forwarder in forwarders.values():
            forwarder.close()
