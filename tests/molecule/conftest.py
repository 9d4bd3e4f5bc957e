"""Shared helpers for the testinfra checks that every Molecule scenario runs."""
import json
import os

import pymysql
import pytest


@pytest.fixture
def hostvars(host):
    return host.ansible.get_variables()


def lab_admin():
    """The lab's admin account (user, password) from the scenario's lab (DBFLEET_LAB_DIR, DBFLEET_LAB_MODE)."""
    lab_dir = os.environ['DBFLEET_LAB_DIR']
    if os.environ.get('DBFLEET_LAB_MODE') == 'ssh':
        lab_dir = os.path.join(lab_dir, 'fleet')
    with open(os.path.join(lab_dir, 'secrets.json'), encoding='utf-8') as handle:
        secrets = json.load(handle)
    return secrets['admin_user'], secrets['admin_password']


@pytest.fixture
def login(hostvars):
    """(user, password): the inventory's login, or on a booted host, whose inventory names none (the collection logs
    in as root through the socket with become), the lab's admin account for the checks' own connections."""
    if hostvars.get('dbfleet_login_user'):
        return hostvars['dbfleet_login_user'], hostvars.get('dbfleet_login_password', '')
    if hostvars.get('ansible_become'):
        return lab_admin()
    return 'root', ''


@pytest.fixture
def dropin_dir(host, hostvars):
    """The drop-in directory the roles write to: the inventory's, else (a booted host) the last directory the
    package's /etc/mysql/my.cnf includes, as the collection finds it (docs/hosts.md)."""
    if hostvars.get('dbfleet_option_dropin_dir'):
        return hostvars['dbfleet_option_dropin_dir']
    if hostvars.get('ansible_become'):
        text = host.file('/etc/mysql/my.cnf').content_string
        included = [line.split(None, 1)[1].strip().rstrip('/') for line in text.splitlines() if line.startswith('!includedir')]
        assert included, text
        return included[-1]
    return '/etc/mysql/conf.d'


@pytest.fixture
def db(hostvars, login):
    """A connection to the host's server with the inventory's login (socket first)."""
    kwargs = dict(user=login[0], password=login[1],
                  connect_timeout=10, autocommit=True, cursorclass=pymysql.cursors.DictCursor)
    if hostvars.get('dbfleet_login_unix_socket') and hostvars.get('ansible_connection') == 'local':
        kwargs['unix_socket'] = hostvars['dbfleet_login_unix_socket']
    else:
        kwargs['host'] = hostvars.get('ansible_host', hostvars.get('dbfleet_login_host', '127.0.0.1'))
        kwargs['port'] = int(hostvars.get('dbfleet_login_port', 3306))
    conn = pymysql.connect(**kwargs)
    yield conn
    conn.close()
