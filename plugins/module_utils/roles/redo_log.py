# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The redo log's size in the names and unit each server takes (flavors.REDO_LOG): one capacity (MySQL 8.0.30+), a
size per file times a number of files (MySQL before 8.0.30), one file (MariaDB). The settings role writes it once,
either name (settings_values), and each server gets its own (roles/settings.py).
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils import values


def translate_redo(wanted, catalog, where):
    """The redo log's size in the names and unit this server takes (flavors.REDO_LOG).

    wanted: {name: value} of the user's map (normalized names). Returns (wanted, translated, errors): the map with the
    redo names replaced by the server's, what was translated (dict(written, value, name, server_value, reason)),
    and messages."""
    names = flavors.REDO_LOG
    capacity, file_size, files = names['capacity'], names['file_size'], names['files']
    given = [n for n in (capacity, file_size) if n in wanted]
    if not given and files not in wanted:
        return wanted, [], []
    out = dict((k, v) for k, v in wanted.items() if k not in (capacity, file_size, files))
    translated, errors = [], []
    if len(given) == 2:
        return out, [], ['settings_values names both %s and %s: write the redo log size once (either name; each '
                         'server gets its own)' % (capacity, file_size)]
    files_given = wanted.get(files)
    n_files = None
    if files_given is not None:
        try:
            n_files = values.parse_int(files_given)
        except values.ValueError_:
            return out, [], ['settings_values.%s must be a whole number; got %s' % (files, desired.shown(files_given))]
    if not given:
        # Only the number of files: a setting of its own (the caller reports a server without it).
        out[files] = files_given
        return out, [], []
    written = given[0]
    raw = wanted[written]
    size = role_input.size_or_none(raw)
    if size is None:
        return out, [], ['settings_values.%s must be a size (digits with K, M, G); got %s' % (written, desired.shown(raw))]
    running_files = role_input.size_or_none((catalog.get(files) or {}).get('value'))
    if capacity in catalog:
        if written == capacity:
            out[capacity] = raw
            if files_given is not None:
                translated.append(dict(written=files, value=files_given, name=None, server_value=None,
                                       reason='%s takes the redo log as one size (%s): %s is left out'
                                       % (where, capacity, files)))
            return out, translated, errors
        count = n_files or running_files or 2
        out[capacity] = size * count
        translated.append(dict(written=file_size, value=raw, name=capacity, server_value=size * count,
                               reason='%s takes the redo log as one size: %s %s x %d file(s) = %s %d'
                               % (where, file_size, raw, count, capacity, size * count)))
        return out, translated, errors
    if file_size not in catalog:
        out[written] = raw       # reported as not on this server by the caller
        return out, translated, errors
    if files in catalog:
        # MySQL before 8.0.30: a size per file.
        count = n_files or running_files or 2
        if written == capacity:
            per_file = size // count
            out[file_size] = per_file
            translated.append(dict(written=capacity, value=raw, name=file_size, server_value=per_file,
                                   reason='%s takes the redo log as %d file(s) of %s: %s %s / %d = %d'
                                   % (where, count, file_size, capacity, raw, count, per_file)))
        else:
            out[file_size] = raw
        if files_given is not None:
            out[files] = files_given
        return out, translated, errors
    # MariaDB: one file.
    count = n_files or 1
    out[file_size] = size * count
    if written == capacity or count != 1:
        translated.append(dict(written=written, value=raw, name=file_size, server_value=size * count,
                               reason='%s keeps the redo log in one file, %s: %s%s' % (
                                   where, file_size, '%s %s' % (written, raw),
                                   (' x %d file(s) = %d' % (count, size * count)) if count != 1 else '')))
    return out, translated, errors
