"""Shared helpers for the testinfra checks that every Molecule scenario runs."""
import pymysql
import pytest


@pytest.fixture
def hostvars(host):
    return host.ansible.get_variables()


@pytest.fixture
def db(hostvars):
    """A connection to the host's server with the inventory's login (socket first)."""
    kwargs = dict(user=hostvars.get('dbfleet_login_user', 'root'),
                  password=hostvars.get('dbfleet_login_password', ''),
                  connect_timeout=10, autocommit=True, cursorclass=pymysql.cursors.DictCursor)
    if hostvars.get('dbfleet_login_unix_socket') and hostvars.get('ansible_connection') == 'local':
        kwargs['unix_socket'] = hostvars['dbfleet_login_unix_socket']
    else:
        kwargs['host'] = hostvars.get('ansible_host', hostvars.get('dbfleet_login_host', '127.0.0.1'))
        kwargs['port'] = int(hostvars.get('dbfleet_login_port', 3306))
    conn = pymysql.connect(**kwargs)
    yield conn
    conn.close()
