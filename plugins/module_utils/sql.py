# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""SQL on an open connection: queries with bound arguments, the one SHOW GLOBAL reader, identifiers, and the
one-line text of a PyMySQL error."""

from __future__ import annotations

from collections.abc import Mapping


def error_text(e):
    """A one-line text for a PyMySQL error."""
    args = getattr(e, 'args', ())
    if len(args) >= 2:
        return '(%s) %s' % (args[0], args[1])
    return str(e)


def query(conn, sql, args=None):
    """Run sql with bound args and return all rows as dicts."""
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall() or [])


def query_one(conn, sql, args=None):
    rows = query(conn, sql, args)
    return rows[0] if rows else None


def execute(conn, sql, args=None):
    with conn.cursor() as cur:
        return cur.execute(sql, args)


def _show_global(conn, what, names):
    """SHOW GLOBAL <what> (VARIABLES or STATUS) as {lower-case name: str value}, only names when given."""
    if names:
        names = sorted(set(n.lower() for n in names))
        placeholders = ', '.join(['%s'] * len(names))
        rows = query(conn, 'SHOW GLOBAL %s WHERE Variable_name IN (%s)' % (what, placeholders), names)
    else:
        rows = query(conn, 'SHOW GLOBAL %s' % what)
    return dict((r['Variable_name'].lower(), r['Value']) for r in rows)


def global_variables(conn, names=None):
    """GLOBAL values (never session values) as {lower-case name: str value}."""
    return _show_global(conn, 'VARIABLES', names)


def global_status(conn, names=None):
    """GLOBAL status counters as {lower-case name: str value}."""
    return _show_global(conn, 'STATUS', names)


_IDENT_OK = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$')


def is_plain_identifier(name):
    """True for identifiers made of [A-Za-z0-9_$] only, 1-64 characters, not all digits."""
    return (isinstance(name, str) and 0 < len(name) <= 64 and all(c in _IDENT_OK for c in name)
            and not name.isdigit())


def quote_identifier(name):
    """Backtick-quote a plain identifier; anything else is refused (ValueError)."""
    if not is_plain_identifier(name):
        raise ValueError('not a plain identifier: %r' % (name,))
    return '`%s`' % name


def all_global_variables(conn):
    """Every GLOBAL variable of the server, {lower-case name: value} (one statement)."""
    return global_variables(conn)


class NamedGlobalVariables(Mapping):
    """The GLOBAL variables of names, read in one statement (SHOW GLOBAL VARIABLES WHERE Variable_name IN ...),
    as a read-only {lower-case name: value} mapping that answers like all_global_variables() does.

    For a name asked for, what the server returned is the whole truth (a name it lacks is absent). A look-up of
    any other name, iterating or len() reads every variable (all_global_variables(), once) and answers from that:
    so what the caller does not foresee (a close-name hint over every name) costs a second statement, never a
    different answer. complete: whether every variable has been read."""

    def __init__(self, conn, names):
        self._conn = conn
        self._asked = frozenset(str(n).lower() for n in names)
        if not self._asked:
            raise ValueError('NamedGlobalVariables needs at least one name')
        self._values = global_variables(conn, sorted(self._asked))
        self.complete = False

    def _read_all(self):
        if not self.complete:
            self._values = all_global_variables(self._conn)
            self.complete = True

    def __getitem__(self, name):
        try:
            return self._values[name]
        except KeyError:
            if self.complete or name in self._asked:
                raise
        self._read_all()
        return self._values[name]

    def read(self, conn, names):  # pylint: disable=unused-argument  # global_variables()' signature
        """global_variables(conn, names) answered from this mapping: no statement when every name was asked for."""
        return dict((str(n).lower(), self[str(n).lower()]) for n in names if str(n).lower() in self)

    def __iter__(self):
        self._read_all()
        return iter(self._values)

    def __len__(self):
        self._read_all()
        return len(self._values)
