import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection as c


def test_socket_wins_over_tcp(tmp_path):
    kw = c.connection_kwargs(dict(login_unix_socket='/run/x.sock', login_host='db', login_port=3307,
                                  login_user='u', login_password='p', config_file=str(tmp_path / 'none')))
    assert kw['unix_socket'] == '/run/x.sock'
    assert 'port' not in kw
    assert kw['user'] == 'u' and kw['password'] == 'p'
    assert 'read_default_file' not in kw


def test_tcp_and_config_file(tmp_path):
    cnf = tmp_path / 'my.cnf'
    cnf.write_text('[client]\nuser=fromfile\n')
    kw = c.connection_kwargs(dict(login_host='127.0.0.1', login_port=3307, config_file=str(cnf)))
    assert kw['host'] == '127.0.0.1' and kw['port'] == 3307
    assert kw['user'] == 'fromfile' and 'password' not in kw
    assert 'read_default_file' not in kw


def test_describe_target_never_shows_password():
    text = c.describe_target(dict(login_user='admin', login_password='s3cret', login_host='db1', login_port=3306))
    assert 's3cret' not in text and 'admin@db1:3306' == text


def test_login_spec_marks_password_no_log():
    assert c.login_argument_spec()['login_password']['no_log'] is True


@pytest.mark.parametrize('name, ok', [
    ('orders', True), ('t_2024$', True), ('a' * 64, True), ('a' * 65, False), ('', False),
    ('x`; DROP', False), ('db.t', False), ('%', False), ('123', False), ('na me', False),
])
def test_identifiers(name, ok):
    assert c.is_plain_identifier(name) is ok
    if ok:
        assert c.quote_identifier(name) == '`%s`' % name
    else:
        with pytest.raises(ValueError):
            c.quote_identifier(name)


def test_connect_error_is_clean():
    with pytest.raises(c.ConnectError) as err:
        c.open_connection(dict(login_unix_socket='/nonexistent/dir/mysqld.sock', login_user='u',
                               login_password='topsecret', connect_timeout=2))
    assert 'topsecret' not in str(err.value)
    assert '/nonexistent/dir/mysqld.sock' in str(err.value)


# ---------------------------------------------------------------- login options from host variables
HOST = dict(dbfleet_login_user='admin', dbfleet_login_password='s3cret', dbfleet_login_host='db1',
            dbfleet_login_port=3307, dbfleet_login_unix_socket='/run/db.sock', dbfleet_config_file='/etc/db.cnf',
            unrelated='x')


def test_host_variables_fill_every_login_option_the_task_lacks():
    added = c.login_args_from_host({'settings': {}}, HOST)
    assert added == dict(login_user='admin', login_password='s3cret', login_host='db1', login_port=3307,
                         login_unix_socket='/run/db.sock', config_file='/etc/db.cnf')


def test_task_arguments_win_also_under_an_alias():
    task = dict(login_username='other', login_port=3308, config_file='')
    added = c.login_args_from_host(task, HOST)
    assert 'login_user' not in added and 'login_port' not in added and 'config_file' not in added
    assert added['login_password'] == 's3cret'


def test_unset_and_null_host_variables_add_nothing():
    assert c.login_args_from_host({}, {}) == {}
    assert c.login_args_from_host({}, dict(dbfleet_login_user=None, dbfleet_login_port=3306)) == dict(login_port=3306)


def test_values_are_templated_and_the_task_args_left_alone():
    task = {'login_host': 'explicit'}
    added = c.login_args_from_host(task, dict(dbfleet_login_user='{{ u }}', dbfleet_login_host='h'),
                                   template=lambda v: v.replace('{{ u }}', 'templated'))
    assert added == {'login_user': 'templated'}
    assert task == {'login_host': 'explicit'}


def test_every_login_option_has_a_host_variable():
    assert set(option for option, _var in c.LOGIN_HOST_VARIABLES) == set(c.LOGIN_OPTIONS) - {'connect_timeout'}
    assert dict(c.LOGIN_HOST_VARIABLES)['ca_cert'] == 'dbfleet_login_ca_cert'
    assert all(var.startswith('dbfleet_') for _option, var in c.LOGIN_HOST_VARIABLES)


# ---------------------------------------------------------------- config_file, then defaults
CNF = """[client]
user = fileuser
password = "file pw"
host = db-from-file
port = 3310
socket = /run/file.sock
ssl_ca = /etc/file-ca.pem
ssl-cert = /etc/file-cert.pem
ssl-key = /etc/file-key.pem

[mysqldump]
host = not-this-group
"""


def cnf(tmp_path, text=CNF):
    path = tmp_path / 'my.cnf'
    path.write_text(text)
    return str(path)


def test_explicit_options_win_over_the_config_file(tmp_path):
    kw = c.connection_kwargs(dict(login_user='u', login_password='p', login_host='db1', login_port=3307,
                                  ca_cert='/ca.pem', client_cert='/c.pem', client_key='/k.pem',
                                  config_file=cnf(tmp_path)))
    assert (kw['user'], kw['password'], kw['host'], kw['port']) == ('u', 'p', 'db1', 3307)
    assert 'unix_socket' not in kw
    assert kw['dbfleet_tls'] == dict(mode='verify_identity', ca_cert='/ca.pem', client_cert='/c.pem',
                                     client_key='/k.pem', explicit=False)


def test_the_config_file_gives_what_the_options_do_not(tmp_path):
    login = c.resolve_login(dict(login_host='db1', config_file=cnf(tmp_path)))
    assert login['host'] == 'db1' and login['port'] == 3310      # explicit host, port from the file
    assert login['unix_socket'] is None                           # TCP asked for: the file's socket is not used
    assert (login['user'], login['password']) == ('fileuser', 'file pw')
    assert login['ca_cert'] == '/etc/file-ca.pem'


def test_the_config_file_host_and_port_are_used(tmp_path):
    path = cnf(tmp_path, '[client]\nhost = db-from-file\nport = 3310\n')
    kw = c.connection_kwargs(dict(config_file=path))
    assert (kw['host'], kw['port']) == ('db-from-file', 3310)
    assert c.describe_target(dict(config_file=path, login_user='u')) == 'u@db-from-file:3310'


def test_the_config_file_socket_is_used_when_no_tcp_option_is_given(tmp_path):
    kw = c.connection_kwargs(dict(config_file=cnf(tmp_path)))
    assert kw['unix_socket'] == '/run/file.sock'
    kw = c.connection_kwargs(dict(login_port=3307, config_file=cnf(tmp_path)))
    assert 'unix_socket' not in kw and kw['host'] == 'db-from-file' and kw['port'] == 3307


def test_defaults_without_options_or_file(tmp_path):
    for config_file in ('', str(tmp_path / 'missing.cnf'), cnf(tmp_path, '[mysqld]\nhost = x\n[mysqladmin]\nuser = y\n')):
        kw = c.connection_kwargs(dict(config_file=config_file))
        assert (kw['host'], kw['port']) == ('localhost', 3306)
        assert 'user' not in kw and 'password' not in kw and 'unix_socket' not in kw
        assert not any(k.startswith('ssl') for k in kw)
        assert kw['dbfleet_tls']['mode'] == 'preferred'


def test_a_port_that_is_no_number_is_an_error_naming_the_file(tmp_path):
    path = cnf(tmp_path, '[client]\nport = ten\n')
    with pytest.raises(ValueError, match="gives port 'ten'"):
        c.connection_kwargs(dict(config_file=path))
    with pytest.raises(c.ConnectError, match='cannot connect to localhost:3306'):
        c.open_connection(dict(config_file=path))


# ---------------------------------------------------------------- TLS, as MySQL's --ssl-mode names it
def plan(**params):
    return c.tls_plan(c.resolve_login(dict(config_file='', **params)))


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
    with pytest.raises(c.ConnectError, match='cannot connect to db1:3306: login_ssl_mode verify_'):
        c.open_connection(dict(login_host='db1', config_file='', **params))


def test_the_system_store_only_when_named_and_with_the_host_name_checked():
    assert mode(ca_cert='system', login_host='db1') == 'verify_identity'
    assert mode(ca_cert='system', check_hostname=True, login_host='db1') == 'verify_identity'
    context = c.tls_context(plan(ca_cert='system', login_host='db1'))
    assert context.check_hostname is True and context.verify_mode == c.ssl.CERT_REQUIRED
    for refused in (dict(login_ssl_mode='verify_ca'), dict(check_hostname=False)):
        with pytest.raises(ValueError, match='ca_cert: system .* only with the host name checked'):
            mode(ca_cert='system', login_host='db1', **refused)


def test_a_remote_login_that_is_not_verified_gets_a_warning_naming_the_host():
    warning = c.unverified_warning(dict(login_host='db1', login_user='admin', login_password='pw', config_file=''))
    assert 'admin@db1:3306' in warning and 'verify_identity with ca_cert' in warning and 'pw' not in warning.split(
        'login_ssl_mode')[0].replace('admin@db1', '')
    for quiet in (dict(login_host='127.0.0.1'), dict(login_unix_socket='/run/x.sock'),
                  dict(login_host='db1', ca_cert='/ca.pem')):
        assert c.unverified_warning(dict(config_file='', **quiet)) is None, quiet


def test_no_tls_option_is_preferred_as_in_community_mysql():
    assert mode(login_host='db1') == 'preferred' and mode(check_hostname=False, login_host='db1') == 'preferred'


@pytest.mark.parametrize('ssl_mode', c.SSL_MODES)
def test_an_explicit_ssl_mode_wins_and_is_marked_explicit(ssl_mode):
    result = plan(login_ssl_mode=ssl_mode, ca_cert='/ca.pem', login_host='db1')
    assert result['mode'] == ssl_mode and result['explicit'] is True


@pytest.mark.parametrize('ssl_mode, check', [('verify_ca', True), ('required', True), ('preferred', True),
                                             ('verify_identity', False)])
def test_check_hostname_contradicting_the_ssl_mode_is_an_error(ssl_mode, check):
    with pytest.raises(ValueError, match='check_hostname'):
        plan(login_ssl_mode=ssl_mode, check_hostname=check, login_host='db1')
    with pytest.raises(c.ConnectError, match='check_hostname'):
        c.open_connection(dict(login_ssl_mode=ssl_mode, check_hostname=check, login_host='db1', config_file=''))


def test_a_unix_socket_uses_no_tls():
    assert mode(login_unix_socket='/run/x.sock', login_ssl_mode='verify_identity') == 'socket'


def test_contexts_by_mode(tmp_path):
    required = c.tls_context(dict(mode='required', ca_cert=None, client_cert=None, client_key=None))
    assert required.verify_mode == c.ssl.CERT_NONE and required.check_hostname is False
    system = dict(mode='verify_identity', ca_cert='system', client_cert=None, client_key=None)
    assert c.tls_context(system).verify_mode == c.ssl.CERT_REQUIRED and c.tls_context(system).check_hostname is True
    assert c.tls_context(system) is c.tls_context(dict(system))     # built once per process
    with pytest.raises(OSError):
        c.tls_context(dict(system, ca_cert=str(tmp_path / 'missing.pem')))


def test_the_ssl_mode_comes_from_the_host_variable_and_the_option_file(tmp_path):
    assert dict(c.LOGIN_HOST_VARIABLES)['login_ssl_mode'] == 'dbfleet_login_ssl_mode'
    assert c.login_args_from_host({}, dict(dbfleet_login_ssl_mode='verify_ca')) == dict(login_ssl_mode='verify_ca')
    path = cnf(tmp_path, '[client]\nssl-mode = VERIFY_IDENTITY\n')
    assert c.resolve_login(dict(config_file=path))['ssl_mode'] == 'verify_identity'
    with pytest.raises(ValueError, match='ssl-mode'):
        c.resolve_login(dict(config_file=cnf(tmp_path, '[client]\nssl-mode = SOMETIMES\n')))


def test_tls_options_and_aliases_match_community_mysql():
    spec = c.login_argument_spec()
    assert spec['ca_cert'] == dict(type='path', aliases=['ssl_ca'])
    assert spec['client_cert'] == dict(type='path', aliases=['ssl_cert'])
    assert spec['client_key'] == dict(type='path', aliases=['ssl_key'])
    assert spec['check_hostname'] == dict(type='bool')
    assert spec['login_ssl_mode'] == dict(type='str', choices=['disabled', 'preferred', 'required', 'verify_ca',
                                                               'verify_identity'])


# ---------------------------------------------------------------- the controller sends no password blindly
def test_the_controller_refuses_an_unverified_remote_server_unless_the_mode_was_chosen():
    remote = dict(login_host='10.0.0.5', login_port=3306, login_user='admin', login_password='s3cret', config_file=None)
    refusal = c.identity_refusal(remote)
    assert 'password was not sent' in refusal and 'controller_ca_cert' in refusal and 's3cret' not in refusal
    assert c.identity_note(remote) is None
    chosen = dict(remote, login_ssl_mode='required')
    assert c.identity_refusal(chosen) is None
    assert 'not verified: login_ssl_mode required was chosen' in c.identity_note(chosen)
    assert c.identity_refusal(dict(remote, ca_cert='/ca.pem')) is None
    assert c.identity_note(dict(remote, ca_cert='/ca.pem')) is None
    for local in (dict(remote, login_host='127.0.0.1'), dict(remote, login_host='::1'), dict(remote, login_host='localhost')):
        assert c.identity_refusal(local) is None and c.identity_note(dict(local, login_ssl_mode='disabled')) is None
        # Loopback trust turned off: a loopback address is a server like any other.
        assert 'password was not sent' in c.identity_refusal(dict(local, login_trust_loopback=False))


def test_the_key_options_have_host_variables_and_reach_the_connection(tmp_path):
    key = tmp_path / 'key.pem'
    key.write_text('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n')
    added = c.login_args_from_host({}, dict(dbfleet_login_server_public_key=str(key),
                                            dbfleet_login_get_server_public_key=True,
                                            dbfleet_login_trust_loopback=False))
    assert added == dict(login_server_public_key=str(key), login_get_server_public_key=True, login_trust_loopback=False)
    kwargs = c.connection_kwargs(dict(added, login_host='10.0.0.5', config_file=None))
    assert kwargs['server_public_key'] == key.read_bytes()
    assert kwargs['dbfleet_password'] == dict(get_server_public_key=True, trust_loopback=False)
    default = c.connection_kwargs(dict(login_host='10.0.0.5', config_file=None))
    assert 'server_public_key' not in default
    assert default['dbfleet_password'] == dict(get_server_public_key=False, trust_loopback=True)
    with pytest.raises(ValueError, match='login_server_public_key %s cannot be read' % (tmp_path / 'missing')):
        c.connection_kwargs(dict(login_host='10.0.0.5', config_file=None,
                                 login_server_public_key=str(tmp_path / 'missing')))


# ---------------------------------------------------------------- the login rule: explicit options win as a set
def test_a_task_naming_a_host_gets_no_socket_host_or_port_of_the_inventory():
    added = c.login_args_from_host({'login_host': '10.0.0.9'}, dict(HOST, dbfleet_login_ssl_mode='verify_ca'))
    assert added == dict(login_user='admin', login_password='s3cret', config_file='/etc/db.cnf',
                         login_ssl_mode='verify_ca')


def test_a_task_naming_a_socket_gets_only_credentials():
    added = c.login_args_from_host({'login_unix_socket': '/run/other.sock', 'login_user': 'me'}, HOST)
    assert added == dict(login_password='s3cret', config_file='/etc/db.cnf')


def test_a_task_naming_a_port_gets_no_socket():
    added = c.login_args_from_host({'login_port': 3399}, HOST)
    assert 'login_unix_socket' not in added and added['login_host'] == 'db1'


def test_a_null_host_names_no_server():
    added = c.login_args_from_host({'login_host': None}, HOST)
    assert 'login_host' not in added and added['login_unix_socket'] == '/run/db.sock'


# ---------------------------------------------------------------- ~/.my.cnf as the client reads it
def test_an_indented_line_is_no_continuation(tmp_path):
    path = cnf(tmp_path, '[client]\nuser = dbfleet\n  password = X1\n\tport = 3311\n')
    login = c.resolve_login(dict(config_file=path))
    assert (login['user'], login['password'], login['port']) == ('dbfleet', 'X1', 3311)


def test_client_groups_quotes_and_the_last_value(tmp_path):
    path = cnf(tmp_path, '[client]\nuser = first\n[mysqld]\nuser = mysql\n[client-server]\npassword = "p w#1"\n'
                         '[client-mariadb]\nuser = second # comment\n[mysqldump]\nuser = no\n[mysql]\nport = 3312\n')
    login = c.resolve_login(dict(config_file=path))
    assert (login['user'], login['password'], login['port']) == ('second', 'p w#1', 3312)


def test_includes_are_followed(tmp_path):
    (tmp_path / 'd').mkdir()
    (tmp_path / 'd' / 'pw.cnf').write_text('[client]\npassword = from-dir\n')
    (tmp_path / 'd' / 'ignored.txt').write_text('[client]\npassword = not-a-cnf\n')
    (tmp_path / 'user.cnf').write_text('[client]\nuser = included\n')
    path = cnf(tmp_path, '[client]\nuser = x\n!include %s\n!includedir %s\n' % (tmp_path / 'user.cnf', tmp_path / 'd'))
    login = c.resolve_login(dict(config_file=path))
    assert (login['user'], login['password']) == ('included', 'from-dir')


@pytest.mark.parametrize('line', ['[client', '!inclde /etc/x', '!includex'])
def test_a_bad_line_is_named_by_number_never_by_its_text(tmp_path, line):
    path = cnf(tmp_path, '[client]\npassword = Sekr3t\n%s Sekr3t\n' % line)
    with pytest.raises(ValueError) as err:
        c.resolve_login(dict(config_file=path))
    assert '%s, line 3' % path in str(err.value)
    assert 'Sekr3t' not in str(err.value) and line.strip('[!') not in str(err.value)
    with pytest.raises(c.ConnectError) as err:
        c.open_connection(dict(config_file=path))
    assert 'Sekr3t' not in str(err.value)


def test_a_read_timeout_reaches_the_client_only_when_given(tmp_path):
    none = str(tmp_path / 'none')
    assert c.connection_kwargs(dict(login_host='db1', login_port=3306, read_timeout=13, config_file=none))['read_timeout'] == 13
    assert 'read_timeout' not in c.connection_kwargs(dict(login_host='db1', login_port=3306, config_file=none))


def test_every_route_warns_through_one_helper():
    class Module:
        def __init__(self, params):
            self.params, self.warnings = params, []

        def warn(self, text):
            self.warnings.append(text)

    remote = Module(dict(login_host='10.20.30.40', login_port=3306, config_file=''))
    assert c.warn_unverified(remote) and 'without verifying its identity' in remote.warnings[0]
    local = Module(dict(login_host='127.0.0.1', login_port=3306, config_file=''))
    assert c.warn_unverified(local) is None and local.warnings == []
