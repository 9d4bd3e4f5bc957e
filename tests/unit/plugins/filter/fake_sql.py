# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A server that answers SHOW GLOBAL VARIABLES / SHOW GLOBAL STATUS with the values it is given (what the cluster
readers ask), for the unit tests of cluster_info(): test_verify_report_clusters.py, test_verify_imports.py."""

from __future__ import annotations


class Cursor:
    def __init__(self, rows):
        self.rows = rows

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        self.sql = sql

    def fetchall(self):
        return self.rows(self.sql)


class Conn:
    def __init__(self, variables, status):
        self.variables, self.status = variables, status

    def cursor(self, *args):
        def rows(sql):
            if 'GLOBAL VARIABLES' in sql:
                return [dict(Variable_name=k, Value=v) for k, v in self.variables.items()]
            if 'GLOBAL STATUS' in sql:
                return [dict(Variable_name=k, Value=v) for k, v in self.status.items()]
            return []
        return Cursor(rows)
