"""Helpers for the testinfra checks (imported by name; kept out of conftest.py)."""
import json
import os

import pymysql


def global_value(conn, name):
    """The GLOBAL value of a server variable, or None when the server has no such variable."""
    with conn.cursor() as cur:
        cur.execute('SHOW GLOBAL VARIABLES LIKE %s', (name,))
        row = cur.fetchone()
    return row['Value'] if row else None


def connect(hostvars, login):
    """A connection to the host's server with the inventory's login (socket first); (user, password) = login."""
    kwargs = dict(user=login[0], password=login[1],
                  connect_timeout=10, autocommit=True, cursorclass=pymysql.cursors.DictCursor)
    if hostvars.get('dbfleet_login_unix_socket') and hostvars.get('ansible_connection') == 'local':
        kwargs['unix_socket'] = hostvars['dbfleet_login_unix_socket']
    else:
        kwargs['host'] = hostvars.get('ansible_host', hostvars.get('dbfleet_login_host', '127.0.0.1'))
        kwargs['port'] = int(hostvars.get('dbfleet_login_port', 3306))
    return pymysql.connect(**kwargs)


def lab_admin():
    """The lab's admin account (user, password) from the scenario's lab (DBFLEET_LAB_DIR, DBFLEET_LAB_MODE)."""
    lab_dir = os.environ['DBFLEET_LAB_DIR']
    if os.environ.get('DBFLEET_LAB_MODE') == 'ssh':
        lab_dir = os.path.join(lab_dir, 'fleet')
    with open(os.path.join(lab_dir, 'secrets.json'), encoding='utf-8') as handle:
        secrets = json.load(handle)
    return secrets['admin_user'], secrets['admin_password']


def login_of(hostvars):
    """(user, password): the inventory's login, or on a booted host, whose inventory names none (the collection logs
    in as root through the socket with become), the lab's admin account for the checks' own connections."""
    if hostvars.get('dbfleet_login_user'):
        return hostvars['dbfleet_login_user'], hostvars.get('dbfleet_login_password', '')
    if hostvars.get('ansible_become'):
        return lab_admin()
    return 'root', ''
