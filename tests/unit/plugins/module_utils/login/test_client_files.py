"""Where and how to log in: the options, then the client option file as the client reads it, then the defaults."""

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.client_files import describe_target, resolve_login
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.connection import (
    ConnectError, connection_kwargs, open_connection)
from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import (
    login_args_from_host, LOGIN_HOST_VARIABLES)


def test_describe_target_never_shows_password():
    text = describe_target(dict(login_user='admin', login_password='s3cret', login_host='db1', login_port=3306))
    assert 's3cret' not in text and 'admin@db1:3306' == text


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
    kw = connection_kwargs(dict(login_user='u', login_password='p', login_host='db1', login_port=3307,
                                ca_cert='/ca.pem', client_cert='/c.pem', client_key='/k.pem',
                                config_file=cnf(tmp_path)))
    assert (kw['user'], kw['password'], kw['host'], kw['port']) == ('u', 'p', 'db1', 3307)
    assert 'unix_socket' not in kw
    assert kw['dbfleet_tls'] == dict(mode='verify_identity', ca_cert='/ca.pem', client_cert='/c.pem',
                                     client_key='/k.pem', explicit=False)


def test_the_config_file_gives_what_the_options_do_not(tmp_path):
    login = resolve_login(dict(login_host='db1', config_file=cnf(tmp_path)))
    assert login['host'] == 'db1' and login['port'] == 3310      # explicit host, port from the file
    assert login['unix_socket'] is None                           # TCP asked for: the file's socket is not used
    assert (login['user'], login['password']) == ('fileuser', 'file pw')
    assert login['ca_cert'] == '/etc/file-ca.pem'


def test_the_config_file_host_and_port_are_used(tmp_path):
    path = cnf(tmp_path, '[client]\nhost = db-from-file\nport = 3310\n')
    kw = connection_kwargs(dict(config_file=path))
    assert (kw['host'], kw['port']) == ('db-from-file', 3310)
    assert describe_target(dict(config_file=path, login_user='u')) == 'u@db-from-file:3310'


def test_the_config_file_socket_is_used_when_no_tcp_option_is_given(tmp_path):
    kw = connection_kwargs(dict(config_file=cnf(tmp_path)))
    assert kw['unix_socket'] == '/run/file.sock'
    kw = connection_kwargs(dict(login_port=3307, config_file=cnf(tmp_path)))
    assert 'unix_socket' not in kw and kw['host'] == 'db-from-file' and kw['port'] == 3307


def test_defaults_without_options_or_file(tmp_path):
    for config_file in ('', str(tmp_path / 'missing.cnf'), cnf(tmp_path, '[mysqld]\nhost = x\n[mysqladmin]\nuser = y\n')):
        kw = connection_kwargs(dict(config_file=config_file))
        assert (kw['host'], kw['port']) == ('localhost', 3306)
        assert 'user' not in kw and 'password' not in kw and 'unix_socket' not in kw
        assert not any(k.startswith('ssl') for k in kw)
        assert kw['dbfleet_tls']['mode'] == 'preferred'


def test_a_port_that_is_no_number_is_an_error_naming_the_file(tmp_path):
    path = cnf(tmp_path, '[client]\nport = ten\n')
    with pytest.raises(ValueError, match="gives port 'ten'"):
        connection_kwargs(dict(config_file=path))
    with pytest.raises(ConnectError, match='cannot connect to localhost:3306'):
        open_connection(dict(config_file=path))


def test_the_ssl_mode_comes_from_the_host_variable_and_the_option_file(tmp_path):
    assert dict(LOGIN_HOST_VARIABLES)['login_ssl_mode'] == 'dbfleet_login_ssl_mode'
    assert login_args_from_host({}, dict(dbfleet_login_ssl_mode='verify_ca')) == dict(login_ssl_mode='verify_ca')
    path = cnf(tmp_path, '[client]\nssl-mode = VERIFY_IDENTITY\n')
    assert resolve_login(dict(config_file=path))['ssl_mode'] == 'verify_identity'
    with pytest.raises(ValueError, match='ssl-mode'):
        resolve_login(dict(config_file=cnf(tmp_path, '[client]\nssl-mode = SOMETIMES\n')))


# ---------------------------------------------------------------- ~/.my.cnf as the client reads it
def test_an_indented_line_is_no_continuation(tmp_path):
    path = cnf(tmp_path, '[client]\nuser = dbfleet\n  password = X1\n\tport = 3311\n')
    login = resolve_login(dict(config_file=path))
    assert (login['user'], login['password'], login['port']) == ('dbfleet', 'X1', 3311)


def test_client_groups_quotes_and_the_last_value(tmp_path):
    path = cnf(tmp_path, '[client]\nuser = first\n[mysqld]\nuser = mysql\n[client-server]\npassword = "p w#1"\n'
                         '[client-mariadb]\nuser = second # comment\n[mysqldump]\nuser = no\n[mysql]\nport = 3312\n')
    login = resolve_login(dict(config_file=path))
    assert (login['user'], login['password'], login['port']) == ('second', 'p w#1', 3312)


def test_includes_are_followed(tmp_path):
    (tmp_path / 'd').mkdir()
    (tmp_path / 'd' / 'pw.cnf').write_text('[client]\npassword = from-dir\n')
    (tmp_path / 'd' / 'ignored.txt').write_text('[client]\npassword = not-a-cnf\n')
    (tmp_path / 'user.cnf').write_text('[client]\nuser = included\n')
    path = cnf(tmp_path, '[client]\nuser = x\n!include %s\n!includedir %s\n' % (tmp_path / 'user.cnf', tmp_path / 'd'))
    login = resolve_login(dict(config_file=path))
    assert (login['user'], login['password']) == ('included', 'from-dir')


@pytest.mark.parametrize('line', ['[client', '!inclde /etc/x', '!includex'])
def test_a_bad_line_is_named_by_number_never_by_its_text(tmp_path, line):
    path = cnf(tmp_path, '[client]\npassword = Sekr3t\n%s Sekr3t\n' % line)
    with pytest.raises(ValueError) as err:
        resolve_login(dict(config_file=path))
    assert '%s, line 3' % path in str(err.value)
    assert 'Sekr3t' not in str(err.value) and line.strip('[!') not in str(err.value)
    with pytest.raises(ConnectError) as err:
        open_connection(dict(config_file=path))
    assert 'Sekr3t' not in str(err.value)
