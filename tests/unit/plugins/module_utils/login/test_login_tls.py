"""TLS as MySQL's --ssl-mode names it, and the verification of the server's identity."""

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import ConnectError, open_connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import SSL_MODES
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.tls import (
    identity_note, identity_refusal, ssl, tls_context, tls_plan, unverified_warning, warn_unverified)


# ---------------------------------------------------------------- TLS, as MySQL's --ssl-mode names it
def plan(**params):
    return tls_plan(resolve_login(dict(config_file='', **params)))


def mode(**params):
    return plan(**params)['mode']


def test_a_ca_verifies_the_certificate_and_the_host_name():
    expected = dict(mode='verify_identity', ca_cert='/ca.pem', client_cert=None, client_key=None, explicit=False)
    assert plan(ca_cert='/ca.pem', login_host='db1') == expected


def test_check_hostname_false_keeps_the_certificate_check():
    assert mode(ca_cert='/ca.pem', check_hostname=False, login_host='db1') == 'verify_ca'


def test_a_client_certificate_alone_encrypts_without_verifying_the_server():
    assert mode(client_cert='/c.pem', client_key='/k.pem', login_host='db1') == 'required'


@pytest.mark.parametrize('params', [dict(check_hostname=True), dict(login_ssl_mode='verify_ca'),
                                    dict(login_ssl_mode='verify_identity')])
def test_a_verifying_mode_without_a_ca_of_the_users_is_refused(params):
    # As the mysql client: VERIFY_CA without --ssl-ca is an error, not "verify against every public CA".
    with pytest.raises(ValueError, match='none was given: set ca_cert .* or ca_cert: system'):
        mode(login_host='db1', **params)
    with pytest.raises(ConnectError, match='cannot connect to db1:3306: login_ssl_mode verify_'):
        open_connection(dict(login_host='db1', config_file='', **params))


def test_the_system_store_only_when_named_and_with_the_host_name_checked():
    assert mode(ca_cert='system', login_host='db1') == 'verify_identity'
    assert mode(ca_cert='system', check_hostname=True, login_host='db1') == 'verify_identity'
    context = tls_context(plan(ca_cert='system', login_host='db1'))
    assert context.check_hostname is True and context.verify_mode == ssl.CERT_REQUIRED
    for refused in (dict(login_ssl_mode='verify_ca'), dict(check_hostname=False)):
        with pytest.raises(ValueError, match='ca_cert: system .* only with the host name checked'):
            mode(ca_cert='system', login_host='db1', **refused)


def test_a_remote_login_that_is_not_verified_gets_a_warning_naming_the_host():
    warning = unverified_warning(dict(login_host='db1', login_user='admin', login_password='pw', config_file=''))
    assert 'admin@db1:3306' in warning and 'verify_identity with ca_cert' in warning and 'pw' not in warning.split(
        'login_ssl_mode')[0].replace('admin@db1', '')
    for quiet in (dict(login_host='127.0.0.1'), dict(login_unix_socket='/run/x.sock'),
                  dict(login_host='db1', ca_cert='/ca.pem')):
        assert unverified_warning(dict(config_file='', **quiet)) is None, quiet


def test_no_tls_option_is_preferred_as_in_community_mysql():
    assert mode(login_host='db1') == 'preferred' and mode(check_hostname=False, login_host='db1') == 'preferred'


@pytest.mark.parametrize('ssl_mode', SSL_MODES)
def test_an_explicit_ssl_mode_wins_and_is_marked_explicit(ssl_mode):
    result = plan(login_ssl_mode=ssl_mode, ca_cert='/ca.pem', login_host='db1')
    assert result['mode'] == ssl_mode and result['explicit'] is True


@pytest.mark.parametrize('ssl_mode, check', [('verify_ca', True), ('required', True), ('preferred', True),
                                             ('verify_identity', False)])
def test_check_hostname_contradicting_the_ssl_mode_is_an_error(ssl_mode, check):
    with pytest.raises(ValueError, match='check_hostname'):
        plan(login_ssl_mode=ssl_mode, check_hostname=check, login_host='db1')
    with pytest.raises(ConnectError, match='check_hostname'):
        open_connection(dict(login_ssl_mode=ssl_mode, check_hostname=check, login_host='db1', config_file=''))


def test_a_unix_socket_uses_no_tls():
    assert mode(login_unix_socket='/run/x.sock', login_ssl_mode='verify_identity') == 'socket'


def test_contexts_by_mode(tmp_path):
    required = tls_context(dict(mode='required', ca_cert=None, client_cert=None, client_key=None))
    assert required.verify_mode == ssl.CERT_NONE and required.check_hostname is False
    system = dict(mode='verify_identity', ca_cert='system', client_cert=None, client_key=None)
    assert tls_context(system).verify_mode == ssl.CERT_REQUIRED and tls_context(system).check_hostname is True
    assert tls_context(system) is tls_context(dict(system))     # built once per process
    with pytest.raises(OSError):
        tls_context(dict(system, ca_cert=str(tmp_path / 'missing.pem')))


# ---------------------------------------------------------------- the controller sends no password blindly
def test_the_controller_refuses_an_unverified_remote_server_unless_the_mode_was_chosen():
    remote = dict(login_host='10.0.0.5', login_port=3306, login_user='admin', login_password='s3cret', config_file=None)
    refusal = identity_refusal(remote)
    assert 'password was not sent' in refusal and 'controller_ca_cert' in refusal and 's3cret' not in refusal
    assert identity_note(remote) is None
    chosen = dict(remote, login_ssl_mode='required')
    assert identity_refusal(chosen) is None
    assert 'not verified: login_ssl_mode required was chosen' in identity_note(chosen)
    assert identity_refusal(dict(remote, ca_cert='/ca.pem')) is None
    assert identity_note(dict(remote, ca_cert='/ca.pem')) is None
    for local in (dict(remote, login_host='127.0.0.1'), dict(remote, login_host='::1'), dict(remote, login_host='localhost')):
        assert identity_refusal(local) is None and identity_note(dict(local, login_ssl_mode='disabled')) is None
        # Loopback trust turned off: a loopback address is a server like any other.
        assert 'password was not sent' in identity_refusal(dict(local, login_trust_loopback=False))


def test_every_route_warns_through_one_helper():
    class Module:
        def __init__(self, params):
            self.params, self.warnings = params, []

        def warn(self, text):
            self.warnings.append(text)

    remote = Module(dict(login_host='10.20.30.40', login_port=3306, config_file=''))
    assert warn_unverified(remote) and 'without verifying its identity' in remote.warnings[0]
    local = Module(dict(login_host='127.0.0.1', login_port=3306, config_file=''))
    assert warn_unverified(local) is None and local.warnings == []
