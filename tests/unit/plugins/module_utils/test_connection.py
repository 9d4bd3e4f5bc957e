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
    assert kw['read_default_file'] == str(cnf)
    assert 'user' not in kw


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
