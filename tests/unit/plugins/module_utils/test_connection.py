import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import connection as c


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

[mysql]
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
    assert (kw['ssl_ca'], kw['ssl_cert'], kw['ssl_key']) == ('/ca.pem', '/c.pem', '/k.pem')


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
    for config_file in ('', str(tmp_path / 'missing.cnf'), cnf(tmp_path, '[mysql]\nhost = x\n')):
        kw = c.connection_kwargs(dict(config_file=config_file))
        assert (kw['host'], kw['port']) == ('localhost', 3306)
        assert 'user' not in kw and 'password' not in kw and 'unix_socket' not in kw
        assert not any(k.startswith('ssl') for k in kw)


def test_a_port_that_is_no_number_is_an_error_naming_the_file(tmp_path):
    path = cnf(tmp_path, '[client]\nport = ten\n')
    with pytest.raises(ValueError, match="gives port 'ten'"):
        c.connection_kwargs(dict(config_file=path))
    with pytest.raises(c.ConnectError, match='cannot connect to localhost:3306'):
        c.open_connection(dict(config_file=path))


# ---------------------------------------------------------------- TLS, as community.mysql means it
def tls(**params):
    return c.tls_kwargs(c.resolve_login(dict(config_file='', **params)))


def test_a_ca_verifies_the_certificate_and_the_host_name():
    assert tls(ca_cert='/ca.pem') == dict(ssl_ca='/ca.pem', ssl_verify_cert=True, ssl_verify_identity=True)


def test_check_hostname_false_keeps_the_certificate_check():
    assert tls(ca_cert='/ca.pem', check_hostname=False) == dict(ssl_ca='/ca.pem', ssl_verify_cert=True,
                                                                ssl_verify_identity=False)


def test_a_client_certificate_alone_encrypts_without_verifying_the_server():
    assert tls(client_cert='/c.pem', client_key='/k.pem') == dict(ssl_cert='/c.pem', ssl_key='/k.pem',
                                                                  ssl_verify_identity=False)


def test_check_hostname_without_a_ca_uses_the_system_cas():
    assert tls(check_hostname=True) == dict(ssl_verify_identity=True)


def test_no_tls_option_no_tls_arguments():
    assert tls() == {} and tls(check_hostname=False) == {}


def test_tls_options_and_aliases_match_community_mysql():
    spec = c.login_argument_spec()
    assert spec['ca_cert'] == dict(type='path', aliases=['ssl_ca'])
    assert spec['client_cert'] == dict(type='path', aliases=['ssl_cert'])
    assert spec['client_key'] == dict(type='path', aliases=['ssl_key'])
    assert spec['check_hostname'] == dict(type='bool')
