"""The connection: its keyword arguments and clean errors."""

import ssl

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import (
    ConnectError, Connection, connection_kwargs, open_connection)
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import login_args_from_host


def test_socket_wins_over_tcp(tmp_path):
    kw = connection_kwargs(dict(login_unix_socket='/run/x.sock', login_host='db', login_port=3307,
                                login_user='u', login_password='p', config_file=str(tmp_path / 'none')))
    assert kw['unix_socket'] == '/run/x.sock'
    assert 'port' not in kw
    assert kw['user'] == 'u' and kw['password'] == 'p'
    assert 'read_default_file' not in kw


def test_tcp_and_config_file(tmp_path):
    cnf = tmp_path / 'my.cnf'
    cnf.write_text('[client]\nuser=fromfile\n')
    kw = connection_kwargs(dict(login_host='127.0.0.1', login_port=3307, config_file=str(cnf)))
    assert kw['host'] == '127.0.0.1' and kw['port'] == 3307
    assert kw['user'] == 'fromfile' and 'password' not in kw
    assert 'read_default_file' not in kw


def test_connect_error_is_clean():
    with pytest.raises(ConnectError) as err:
        open_connection(dict(login_unix_socket='/nonexistent/dir/mysqld.sock', login_user='u',
                             login_password='topsecret', connect_timeout=2))
    assert 'topsecret' not in str(err.value)
    assert '/nonexistent/dir/mysqld.sock' in str(err.value)


def test_the_key_options_have_host_variables_and_reach_the_connection(tmp_path):
    key = tmp_path / 'key.pem'
    key.write_text('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n')
    added = login_args_from_host({}, dict(dbfleet_login_server_public_key=str(key),
                                          dbfleet_login_get_server_public_key=True,
                                          dbfleet_login_trust_loopback=False))
    assert added == dict(login_server_public_key=str(key), login_get_server_public_key=True, login_trust_loopback=False)
    kwargs = connection_kwargs(dict(added, login_host='10.0.0.5', config_file=None))
    assert kwargs['server_public_key'] == key.read_bytes()
    assert kwargs['dbfleet_password'] == dict(get_server_public_key=True, trust_loopback=False)
    default = connection_kwargs(dict(login_host='10.0.0.5', config_file=None))
    assert 'server_public_key' not in default
    assert default['dbfleet_password'] == dict(get_server_public_key=False, trust_loopback=True)
    with pytest.raises(ValueError, match='login_server_public_key %s cannot be read' % (tmp_path / 'missing')):
        connection_kwargs(dict(login_host='10.0.0.5', config_file=None,
                               login_server_public_key=str(tmp_path / 'missing')))


def test_a_read_timeout_reaches_the_client_only_when_given(tmp_path):
    none = str(tmp_path / 'none')
    assert connection_kwargs(dict(login_host='db1', login_port=3306, read_timeout=13, config_file=none))['read_timeout'] == 13
    assert 'read_timeout' not in connection_kwargs(dict(login_host='db1', login_port=3306, config_file=none))


def test_preferred_tls_keeps_one_unverified_context_per_process():
    """Preferred TLS (the default) tries TLS and falls back when the server offers none, as PyMySQL's does, without
    a new context (and the system's CA store loaded) for every login; another mode keeps its own context, and TLS
    required stays required."""
    first = Connection(host='db1.example', user='u', defer_connect=True)
    second = Connection(host='db2.example', user='u', defer_connect=True)
    assert first.ssl and not first._ssl_required   # pylint: disable=protected-access
    assert first.ctx is second.ctx
    assert first.ctx.verify_mode == ssl.CERT_NONE and not first.ctx.check_hostname
    assert first.ctx.minimum_version == ssl.TLSVersion.TLSv1_2
    assert first.ctx.cert_store_stats()['x509_ca'] == 0
    required = Connection(host='db1.example', user='u', defer_connect=True,
                          dbfleet_tls=dict(mode='required', ca_cert=None, client_cert=None, client_key=None))
    assert required.ctx is not first.ctx and required._ssl_required   # pylint: disable=protected-access
