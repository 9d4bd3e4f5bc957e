# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tests of the staged file removal share (test_table_files.py, test_shrink.py, test_staged_removal.py): a
catalog row, a real file of a size, a clock that sleeps by moving on."""

from __future__ import annotations

import os


def catalog_row(name, space, path, space_type=None, space_name=None, size=65536):
    """A row of table_files.catalog_query()'s answer."""
    return dict(table_name=name, space=space, path=path, space_type=space_type, space_name=space_name or name,
                file_size=size)


def write_file(path, size):
    """A file of size bytes; its (device, inode)."""
    with open(path, 'wb') as handle:
        handle.write(b'x' * size)
    st = os.stat(path)
    return (st.st_dev, st.st_ino)


class Clock(object):
    def __init__(self):
        self.t = 0.0
        self.sizes = []

    def sleep(self, seconds):
        self.t += seconds

    def __call__(self):
        return self.t
