# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tests' own connection to a lab server inside a playbook run: what dbfleet_testing.servers.socket_sql is in
pytest, between the module calls of one ansible-playbook run (tests/integration/dbfleet_testing/task_runs.py).
Not shipped with the collection (tests/integration is in galaxy.yml build_ignore)."""

from __future__ import annotations

DOCUMENTATION = r'''
name: lab_sql
short_description: Rows of SQL statements run over the current lab host's unix socket
description:
  - Runs each term, one SQL statement, over the unix socket of the host the task runs for
    (its V(dbfleet_login_unix_socket), as V(dbfleet_login_user) with V(dbfleet_login_password)), autocommit, and
    returns the rows of all terms in order, each a dict by column name (none for a statement without rows).
  - The integration tests read (and set) a lab server with it between the module calls of one playbook run, in the
    controller's process, independently of the modules they test.
options:
  _terms:
    description: SQL statements.
    required: true
'''

import pymysql

from ansible.errors import AnsibleError
from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        login = dict((name, self._templar.template(variables.get('dbfleet_login_' + name)))
                     for name in ('unix_socket', 'user', 'password'))
        if not all(login.values()):
            raise AnsibleError('lab_sql: the host has no dbfleet_login_unix_socket / _user / _password')
        try:
            conn = pymysql.connect(unix_socket=login['unix_socket'], user=login['user'], password=login['password'],
                                   autocommit=True, cursorclass=pymysql.cursors.DictCursor, connect_timeout=10)
        except pymysql.err.MySQLError as exc:
            raise AnsibleError('lab_sql: cannot connect over %s: %s' % (login['unix_socket'], exc)) from None
        rows = []
        try:
            with conn.cursor() as cur:
                for statement in terms:
                    cur.execute(statement)
                    rows.extend(dict((k, v if isinstance(v, (int, float)) or v is None else str(v))
                                     for k, v in row.items()) for row in cur.fetchall() or ())
        finally:
            conn.close()
        return rows
