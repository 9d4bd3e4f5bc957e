# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host's settings as its start-up reads them, for the upgrade check (versions/upgrade.py): one Setting per line
of the option files or word of the command line, per value of mysqld-auto.cnf (SET PERSIST), or, where the files
cannot be read, per value the server records as set by a file, the command line or mysqld-auto.cnf (the origins it
gives each running value). Pure.
"""

from __future__ import annotations

from collections import namedtuple

# Where a running value came from, as the server says (MySQL variables_info VARIABLE_SOURCE, MariaDB
# GLOBAL_VALUE_ORIGIN): its default (compiled in, or sized at start-up) ...
DEFAULT_ORIGINS = ('COMPILED', 'COMPILE-TIME', 'AUTO')
# ... an option file, the command line, mysqld-auto.cnf.
FILE_ORIGINS = ('EXPLICIT', 'CONFIG', 'GLOBAL', 'SERVER', 'LOGIN', 'CLIENT', 'EXTRA')
COMMAND_LINE_ORIGINS = ('COMMAND_LINE', 'COMMAND-LINE')
PERSISTED_ORIGINS = ('PERSISTED',)
# ... or a SET GLOBAL since start-up.
RUNTIME_ORIGINS = ('DYNAMIC', 'SQL')

# A setting as the host's start-up reads it. origin: option_file | command_line | persisted | server (the server's
# record of where the value came from, when the files are not read); loose: written loose- (an unknown name is then
# ignored); where: file:line [group], 'the command line (...)', 'mysqld-auto.cnf'.
Setting = namedtuple('Setting', 'name value origin where loose file line group text')


def _loose(text):
    body = str(text or '').strip().lstrip('-').lower().replace('-', '_')
    return body.startswith('loose_')


def option_settings(entries, origin='option_file'):
    """Settings from optionfiles.Entry rows (option files, or the command line with origin 'command_line')."""
    out = []
    for entry in entries:
        if origin == 'command_line':
            where = 'the command line (%s)' % entry.text
        else:
            where = '%s:%d [%s]' % (entry.file, entry.line, entry.group)
        out.append(Setting(entry.name, entry.value, origin, where, _loose(entry.text), entry.file, entry.line,
                           entry.group, entry.text))
    return out


def persisted_settings(persisted):
    """Settings from performance_schema.persisted_variables ({name: value})."""
    return [Setting(name, value, 'persisted', 'mysqld-auto.cnf (SET PERSIST)', False, None, None, None, None)
            for name, value in sorted(persisted.items())]


def origin_settings(table):
    """Settings from the server's record of where each running value came from (variable_table rows), for an
    audit that cannot read the option files: the variables set by a file, the command line or mysqld-auto.cnf."""
    out = []
    for name, row in sorted(table.items()):
        origin = str(row.get('origin') or '').upper()
        if origin in FILE_ORIGINS:
            where = '%s (the server records it; the line is not known here)' % (row.get('path') or 'an option file')
            out.append(Setting(name, row.get('value'), 'server', where, None, row.get('path'), None, None, None))
        elif origin in COMMAND_LINE_ORIGINS:
            out.append(Setting(name, row.get('value'), 'server', 'the command line', None, None, None, None, None))
        elif origin in PERSISTED_ORIGINS:
            out.append(Setting(name, row.get('value'), 'persisted', 'mysqld-auto.cnf (SET PERSIST)', False, None,
                               None, None, None))
    return out
