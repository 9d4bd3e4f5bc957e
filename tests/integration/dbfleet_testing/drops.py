# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the drop_tables tests share (test_drop_tables.py, test_drop_tables_staged.py): a lab server with the
reads the tests make (Server), a session that makes DROP TABLE wait (Blocker: LOCK INSTANCE FOR BACKUP on MySQL 8,
BACKUP STAGE BLOCK_DDL on MariaDB, a reading transaction on MySQL 5.7)."""

from __future__ import annotations

import time

import pymysql

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity


class Server(object):
    def __init__(self, lab, name):
        self.lab = lab
        self.name = name
        self.row = lab.hosts[name]
        self._conn = None

    @property
    def conn(self):
        for attempt in range(20):  # another user of the lab may restart the server briefly
            try:
                if self._conn is None:
                    self._conn = self.lab.connect(self.name, via='socket')
                self._conn.ping(reconnect=False)
                return self._conn
            except pymysql.err.OperationalError:
                self._conn = None
                time.sleep(1)
        raise AssertionError('%s does not answer' % self.name)

    def sql(self, statement, args=None):
        with self.conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute(statement, args)
            return cur.fetchall()

    def value(self, statement):
        rows = self.sql(statement)
        return list(rows[0].values())[0] if rows else None

    def ahi(self):
        return 'ON' if int(self.value('SELECT @@GLOBAL.innodb_adaptive_hash_index')) else 'OFF'

    def set_ahi(self, value):
        self.sql('SET GLOBAL innodb_adaptive_hash_index = %s' % value)

    def exists(self, db, table):
        return bool(self.sql('SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                             (db, table)))

    def identity(self):
        rows = dict((k, self.value('SELECT @@GLOBAL.%s' % k)) for k in ('version', 'version_comment'))
        return server_identity.identity_from_variables(rows)

    def login(self):
        return dict(login_unix_socket=self.row['socket'], login_user=self.lab.admin_user,
                    login_password=self.lab.admin_password, config_file='')


class Blocker(object):
    """A session that makes DROP TABLE wait (see the module docstring), released by release()."""

    def __init__(self, server, schema, table):
        self.server = server
        self.conn = server.lab.connect(server.name, via='socket')
        ident = server.identity()
        with self.conn.cursor() as cur:
            if ident.flavor == 'mysql' and ident.version >= (8, 0, 0):
                cur.execute('LOCK INSTANCE FOR BACKUP')
                self.kind = 'backup lock'
            elif ident.flavor == 'mariadb':
                cur.execute('BACKUP STAGE START')
                cur.execute('BACKUP STAGE BLOCK_DDL')
                self.kind = 'backup stage'
            else:
                cur.execute('BEGIN')
                cur.execute('SELECT COUNT(*) FROM %s.%s' % (schema, table))
                cur.fetchall()
                self.kind = 'open transaction'

    def release(self):
        try:
            self.conn.close()
        except Exception:
            pass
