"""The login options: their spec, the host variables that give them, and the rule that explicit options win as a set."""

from ansible_collections.dbfleet.innodb.plugins.module_utils.login.spec import (
    login_args_from_host, login_argument_spec, LOGIN_HOST_VARIABLES, LOGIN_OPTIONS)


def test_login_spec_marks_password_no_log():
    assert login_argument_spec()['login_password']['no_log'] is True


# ---------------------------------------------------------------- login options from host variables
HOST = dict(dbfleet_login_user='admin', dbfleet_login_password='s3cret', dbfleet_login_host='db1',
            dbfleet_login_port=3307, dbfleet_login_unix_socket='/run/db.sock', dbfleet_config_file='/etc/db.cnf',
            unrelated='x')


def test_host_variables_fill_every_login_option_the_task_lacks():
    added = login_args_from_host({'settings': {}}, HOST)
    assert added == dict(login_user='admin', login_password='s3cret', login_host='db1', login_port=3307,
                         login_unix_socket='/run/db.sock', config_file='/etc/db.cnf')


def test_task_arguments_win_also_under_an_alias():
    task = dict(login_username='other', login_port=3308, config_file='')
    added = login_args_from_host(task, HOST)
    assert 'login_user' not in added and 'login_port' not in added and 'config_file' not in added
    assert added['login_password'] == 's3cret'


def test_unset_and_null_host_variables_add_nothing():
    assert login_args_from_host({}, {}) == {}
    assert login_args_from_host({}, dict(dbfleet_login_user=None, dbfleet_login_port=3306)) == dict(login_port=3306)


def test_values_are_templated_and_the_task_args_left_alone():
    task = {'login_host': 'explicit'}
    added = login_args_from_host(task, dict(dbfleet_login_user='{{ u }}', dbfleet_login_host='h'),
                                 template=lambda v: v.replace('{{ u }}', 'templated'))
    assert added == {'login_user': 'templated'}
    assert task == {'login_host': 'explicit'}


def test_every_login_option_has_a_host_variable():
    assert set(option for option, _var in LOGIN_HOST_VARIABLES) == set(LOGIN_OPTIONS) - {'connect_timeout'}
    assert dict(LOGIN_HOST_VARIABLES)['ca_cert'] == 'dbfleet_login_ca_cert'
    assert all(var.startswith('dbfleet_') for _option, var in LOGIN_HOST_VARIABLES)


def test_tls_options_and_aliases_match_community_mysql():
    spec = login_argument_spec()
    assert spec['ca_cert'] == dict(type='path', aliases=['ssl_ca'])
    assert spec['client_cert'] == dict(type='path', aliases=['ssl_cert'])
    assert spec['client_key'] == dict(type='path', aliases=['ssl_key'])
    assert spec['check_hostname'] == dict(type='bool')
    assert spec['login_ssl_mode'] == dict(type='str', choices=['disabled', 'preferred', 'required', 'verify_ca',
                                                               'verify_identity'])


# ---------------------------------------------------------------- the login rule: explicit options win as a set
def test_a_task_naming_a_host_gets_no_socket_host_or_port_of_the_inventory():
    added = login_args_from_host({'login_host': '10.0.0.9'}, dict(HOST, dbfleet_login_ssl_mode='verify_ca'))
    assert added == dict(login_user='admin', login_password='s3cret', config_file='/etc/db.cnf',
                         login_ssl_mode='verify_ca')


def test_a_task_naming_a_socket_gets_only_credentials():
    added = login_args_from_host({'login_unix_socket': '/run/other.sock', 'login_user': 'me'}, HOST)
    assert added == dict(login_password='s3cret', config_file='/etc/db.cnf')


def test_a_task_naming_a_port_gets_no_socket():
    added = login_args_from_host({'login_port': 3399}, HOST)
    assert 'login_unix_socket' not in added and added['login_host'] == 'db1'


def test_a_null_host_names_no_server():
    added = login_args_from_host({'login_host': None}, HOST)
    assert 'login_host' not in added and added['login_unix_socket'] == '/run/db.sock'
