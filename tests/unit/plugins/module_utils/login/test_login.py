# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a login reached (module dbfleet.innodb.login): TLS, the way in, the account's plugin, the report, and the
plugin the handshake ended with. The real servers' answers are asserted in tests/integration/local/modules/test_login.py."""

from __future__ import annotations

import json

import pymysql

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import login
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity

from fake_db import Conn


def test_tls_facts_are_the_sessions_and_verified_only_with_tls():
    tls = login.tls_facts(dict(ssl_version='TLSv1.3', ssl_cipher='TLS_AES_256_GCM_SHA384'), 'verify_ca', True)
    assert tls == dict(in_use=True, version='TLSv1.3', cipher='TLS_AES_256_GCM_SHA384', mode='verify_ca', verified=True)
    # The server's empty values are no TLS, whatever the client would have verified (a socket's proven peer).
    assert login.tls_facts(dict(ssl_version='', ssl_cipher=''), 'socket', True) == dict(
        in_use=False, version=None, cipher=None, mode='socket', verified=False)
    assert login.tls_facts({}, 'preferred', False)['in_use'] is False
    assert login.tls_facts(dict(ssl_version='TLSv1.2', ssl_cipher='X'), 'preferred', False)['verified'] is False


def test_way_in_over_a_socket_names_the_socket_and_where_it_was_found(tmp_path):
    cnf = tmp_path / 'my.cnf'
    cnf.write_text('[client]\nuser = admin\n')
    way = login.way_in(dict(unix_socket='/run/mysqld/mysqld.sock', host='localhost', port=3306),
                       dict(config_file=str(cnf)), socket_source='socket of the client groups in /etc/mysql/my.cnf')
    assert way == dict(transport='socket', socket='/run/mysqld/mysqld.sock', host=None, port=None,
                       socket_source='socket of the client groups in /etc/mysql/my.cnf', config_file=str(cnf), notes=[])


def test_way_in_over_tcp_names_host_and_port_and_no_socket_source():
    way = login.way_in(dict(unix_socket=None, host='10.0.0.5', port='3307'),
                       dict(login_host='10.0.0.5', config_file=''), socket_source='ignored over TCP')
    assert (way['transport'], way['host'], way['port'], way['socket'], way['socket_source']) == (
        'tcp', '10.0.0.5', 3307, None, None)
    assert way['config_file'] is None and way['notes'] == []


def test_the_option_file_is_named_only_when_it_was_there_to_read(tmp_path):
    reached = dict(unix_socket=None, host='127.0.0.1', port=3306)
    assert login.way_in(reached, dict(config_file=str(tmp_path / 'missing.cnf')))['config_file'] is None
    assert login.way_in(reached, dict(config_file=None))['config_file'] is None
    assert login.way_in(reached, dict(config_file=str(tmp_path)))['config_file'] is None, 'a directory is no file'


def test_a_tcp_login_that_went_through_the_socket_says_so_without_the_password():
    params = dict(login_host='127.0.0.1', login_port=3306, login_user='admin', login_password='s3cret-pw',
                  config_file='')
    way = login.way_in(dict(unix_socket='/run/mysqld/mysqld.sock', host='localhost', port=3306), params)
    assert way['transport'] == 'socket' and len(way['notes']) == 1
    assert 'admin@127.0.0.1:3306' in way['notes'][0] and '/run/mysqld/mysqld.sock' in way['notes'][0]
    assert 's3cret-pw' not in way['notes'][0]
    # A socket the task named is no fallback.
    params['login_unix_socket'] = '/run/mysqld/mysqld.sock'
    assert login.way_in(dict(unix_socket='/run/mysqld/mysqld.sock'), params)['notes'] == []


def account_conn(rows=None, error=None):
    """Answers the account-plugin query with rows, or raises error."""
    return Conn(lambda sql, args: rows or [], error=error)


def test_account_plugin_from_its_column_never_from_show_create_user():
    conn = account_conn(rows=[dict(plugin='caching_sha2_password')])
    assert login.account_plugin(conn) == ('caching_sha2_password', None)
    assert conn.statements == [login.ACCOUNT_PLUGIN_SQL]
    assert 'SHOW CREATE USER' not in login.ACCOUNT_PLUGIN_SQL and 'authentication_string' not in login.ACCOUNT_PLUGIN_SQL
    assert login.account_plugin(account_conn(rows=[dict(plugin=b'unix_socket')])) == ('unix_socket', None)


def test_account_plugin_unknown_says_why():
    denied = pymysql.err.OperationalError(1142, "SELECT command denied to user 'app'@'localhost' for table 'user'")
    plugin, note = login.account_plugin(account_conn(error=denied))
    assert plugin is None and note.startswith('account_plugin unknown') and '(1142)' in note
    plugin, note = login.account_plugin(account_conn(rows=[]))
    assert plugin is None and 'no row' in note


def test_report_joins_the_parts_and_holds_no_credential():
    identity = server_identity.identity_from_variables(dict(version='10.11.19-MariaDB-0+deb12u1-log', version_comment='Debian 12'))
    way = login.way_in(dict(unix_socket=None, host='db1.example', port=3306),
                       dict(login_host='db1.example', login_password='s3cret-pw', config_file=''))
    facts = login.report(identity, dict(user='admin@10.0.0.9', current_user='admin@%'), 'mysql_native_password',
                         (None, 'account_plugin unknown: denied'), login.tls_facts({}, 'preferred', False), way, None)
    assert (facts['flavor'], facts['version_text'], facts['current_user'], facts['user']) == (
        'mariadb', '10.11.19', 'admin@%', 'admin@10.0.0.9')
    assert facts['auth_plugin'] == 'mysql_native_password' and facts['account_plugin'] is None
    assert facts['peer'] is None and facts['transport'] == 'tcp'
    assert facts['notes'] == ['account_plugin unknown: denied']
    assert 's3cret-pw' not in json.dumps(facts) and 'password' not in json.dumps(sorted(facts))
    peer = dict(trusted=True, uid=999, reason='the listener on 127.0.0.1:3306 belongs to mysql')
    assert login.report(identity, {}, None, (None, None), {}, way, peer)['peer'] == dict(
        trusted=True, reason='the listener on 127.0.0.1:3306 belongs to mysql')


def test_the_auth_plugin_is_the_one_the_server_switched_to_else_the_greetings():
    conn = object.__new__(connection.Connection)
    conn._dbfleet_switched_plugin = None
    conn._auth_plugin_name = 'caching_sha2_password'
    assert conn.dbfleet_auth_plugin() == 'caching_sha2_password'
    conn._dbfleet_switched_plugin = b'mysql_native_password'
    assert conn.dbfleet_auth_plugin() == 'mysql_native_password'
    conn._dbfleet_switched_plugin, conn._auth_plugin_name = None, ''
    assert conn.dbfleet_auth_plugin() is None
