# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who a server is: its flavor and version read from @@version, @@version_comment and @@aurora_version
(DETECT_VARIABLES), as a ServerIdentity (identity_from_variables()), and the version text read (parse_version()).
"""

from __future__ import annotations

import re
from collections import namedtuple

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavors import AURORA, MARIADB, MYSQL, PERCONA, format_version

_VERSION_RE = re.compile(r'^(\d+)\.(\d+)\.(\d+)')

DETECT_VARIABLES = ('version', 'version_comment', 'aurora_version', 'innodb_read_only')


def parse_version(text):
    """'10.11.19-MariaDB-0+deb12u1' -> (10, 11, 19). Raises ValueError on garbage."""
    m = _VERSION_RE.match(str(text or '').strip())
    if not m:
        raise ValueError('cannot read a version from %r' % (text,))
    return tuple(int(x) for x in m.groups())


def detect_flavor(version, version_comment='', aurora_version=None):
    """Flavor name from @@version, @@version_comment and @@aurora_version."""
    text = ('%s %s' % (version or '', version_comment or '')).lower()
    if aurora_version:
        return AURORA
    if 'mariadb' in text:
        return MARIADB
    if 'percona' in text:
        return PERCONA
    return MYSQL


class ServerIdentity(namedtuple('ServerIdentity', 'flavor version version_string aurora_reader')):
    """Who the server is: flavor, version triple, the raw version text."""

    def to_dict(self):
        return dict(flavor=self.flavor, version=list(self.version),
                    version_string=self.version_string,
                    version_text=format_version(self.version),
                    aurora_reader=self.aurora_reader)


def identity_from_variables(variables):
    """ServerIdentity from a {name: value} dict of global variables (see DETECT_VARIABLES)."""
    version_string = variables.get('version', '')
    flavor = detect_flavor(version_string, variables.get('version_comment', ''),
                           variables.get('aurora_version'))
    aurora_reader = None
    if flavor == AURORA:
        # Aurora readers run with innodb_read_only=ON.
        aurora_reader = str(variables.get('innodb_read_only', '')).upper() in ('ON', '1')
    return ServerIdentity(flavor, parse_version(version_string), version_string, aurora_reader)
