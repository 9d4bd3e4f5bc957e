# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files an InnoDB table owns, read from the server's own catalog (versions/capability_facts.py tablespace_files_catalog),
never guessed from names: the catalog query for a table and its partitions, the rows that are the table's, a table in
the system or a general tablespace left alone (it has no file of its own), and a path as the server names it seen
from this host. Pure; the staged file removal of drop_tables (guarded/staged_removal.py) reads them.
"""

from __future__ import annotations

import os


def filename_encode(name):
    """A plain identifier as the server names it on disk and in the InnoDB catalog (letters, digits and _ as
    they are, any other character as @ and its code point in four hex digits: $ -> @0024)."""
    out = []
    for c in name:
        if c.isascii() and (c.isalnum() or c == '_'):
            out.append(c)
        else:
            out.append('@%04x' % ord(c))
    return ''.join(out)


def like_escape(text):
    """text for a LIKE pattern, its wildcards (and the escape character) taken literally."""
    return text.replace('\\', '\\\\').replace('%', '\\%').replace('_', '\\_')


def catalog_query(catalog, db, table):
    """(sql, args) that lists the tablespaces of db.table and of each of its partitions from the catalog
    capability_facts.py tablespace_files_catalog names: table_name, space, space_name, space_type, path, file_size."""
    base = '%s/%s' % (filename_encode(db), filename_encode(table))
    plain = '%s/%s' % (db, table)
    join = (' LEFT JOIN %s d ON d.SPACE = t.SPACE' % catalog['datafiles']) if catalog.get('datafiles') else ''
    sql = ('SELECT t.NAME AS table_name, t.SPACE AS space, s.NAME AS space_name, %s AS space_type, %s AS path, '
           's.FILE_SIZE AS file_size FROM %s t LEFT JOIN %s s ON s.SPACE = t.SPACE%s '
           'WHERE t.NAME IN (%%s, %%s) OR t.NAME LIKE %%s ORDER BY t.NAME'
           % (catalog.get('space_type') or 'NULL', catalog['path'], catalog['tables'], catalog['tablespaces'], join))
    return sql, (base, plain, like_escape(base + '#') + '%')


def owned_files(rows, db, table):
    """The files db.table owns, from catalog_query's rows: (files, left_alone). files: [{catalog_name, partition,
    path, file_size}] (partition None for the table itself); left_alone: why the table has no file of its own
    (the system or a general tablespace), else None. Rows of another table whose name merely starts alike are
    not the table's: only the table's own name and '<name>#p#...' / '#P#...' (a partition, MySQL 8 / MySQL 5.7
    and MariaDB spelling) count."""
    names = set(('%s/%s' % (db, table), '%s/%s' % (filename_encode(db), filename_encode(table))))
    files, shared = [], []
    for r in rows:
        name = r['table_name']
        base, sep, rest = name.partition('#')
        if base not in names or (sep and not rest.lower().startswith('p#')):
            continue
        partition = rest[2:] if sep else None
        space_type = (r.get('space_type') or '').lower()
        if int(r.get('space') or 0) == 0 or space_type == 'system':
            shared.append('the system tablespace')
            continue
        if space_type == 'general':
            shared.append('the general tablespace %s' % r.get('space_name'))
            continue
        if not r.get('path'):
            shared.append('tablespace %s, whose file the catalog does not name' % r.get('space'))
            continue
        files.append(dict(catalog_name=name, partition=partition, path=r['path'],
                          file_size=int(r['file_size']) if r.get('file_size') is not None else None))
    left_alone = None
    if shared:
        left_alone = ('%s.%s is in %s: no file of its own to stage, left as it is (the DROP frees its pages inside '
                      'that tablespace)' % (db, table, ', '.join(sorted(set(shared)))))
    return files, left_alone


def server_path(server_root, datadir, path):
    """A path as the server names it (relative to its datadir, or absolute) as seen from this host, where the
    server's filesystem root is server_root ('/' unless the server runs in a chroot or container)."""
    full = path if os.path.isabs(path) else os.path.join(datadir, path)
    full = os.path.normpath(full)
    root = server_root or '/'
    return full if root == '/' else os.path.join(root, full.lstrip('/'))
