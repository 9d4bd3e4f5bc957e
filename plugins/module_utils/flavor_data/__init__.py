# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every system variable and option of the lab's real servers, per version: the upgrade check's facts.

Part of the version facts of flavors.py (which keeps the hand-checked spans), in a package of its own because it
is large: only the modules that compare with a target (upgrade.py) import it, so the other modules' payloads stay
small. Each data module (mysql_8_0, mysql_9_7, mariadb_10_11, mariadb_11_8) is written by lab/read_flavor_data.py
from a private server started on a fresh datadir with no setting of its own (SOURCE says which server, how it was
read and when) and asserted against every lab server of its version by tests/integration/test_flavor_data.py.
The rule of what is kept: every global system variable of that server and every option name of its binary.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.dbfleet.innodb.plugins.module_utils.flavor_data import mariadb_10_11
from ansible_collections.dbfleet.innodb.plugins.module_utils.flavor_data import mariadb_11_8
from ansible_collections.dbfleet.innodb.plugins.module_utils.flavor_data import mysql_8_0
from ansible_collections.dbfleet.innodb.plugins.module_utils.flavor_data import mysql_9_7

# kind: bool | int | float | enum | set | str; default: the running value of a fresh server (text), None for an
# instance value; machine: None (one number), 'instance' (the instance's own: paths, ids, ports) or why the default
# depends on the machine or another setting (then default is the lab's value, an example only).
Variable = namedtuple('Variable', 'name kind default dynamic minimum maximum choices machine')
INSTANCE = 'instance'

_MODULES = (mysql_8_0, mysql_9_7, mariadb_10_11, mariadb_11_8)


class VersionFacts(object):
    """One server version's variables and options (a data module, read once)."""

    def __init__(self, module):
        self.source = dict(module.SOURCE)
        self.flavor = self.source['flavor']
        self.version = tuple(self.source['version'])
        self._variables = module.VARIABLES
        self.options = frozenset(module.OPTIONS)
        # Names of other versions this one lists nowhere but takes as no-ops, with the warning it prints.
        self.removed_accepted = dict(getattr(module, 'REMOVED_ACCEPTED', {}))

    def __repr__(self):
        return 'VersionFacts(%s %s)' % (self.flavor, '.'.join(str(x) for x in self.version))

    @property
    def label(self):
        """'mysql 9.7.4', for messages."""
        return '%s %s' % (self.flavor, '.'.join(str(x) for x in self.version))

    def names(self):
        return frozenset(self._variables)

    def variable(self, name):
        """Variable for name (lower case, '_' spelling) or None when this version has no such variable."""
        row = self._variables.get(name)
        return None if row is None else Variable(name, *row)

    def accepts_option(self, name):
        """True when the server binary takes name ('_' spelling) as an option: a variable, another option, or a
        removed name it still takes as a no-op (removed_accepted)."""
        return name in self._variables or name in self.options or name in self.removed_accepted

    def source_text(self):
        return '%s (%s), read %s by %s: %s' % (self.label, self.source.get('version_string'), self.source.get('date'),
                                               self.source.get('generator'), self.source.get('read'))


FACTS = dict(((f.flavor, f.version[:2]), f) for f in (VersionFacts(m) for m in _MODULES))


def facts_for(flavor, version):
    """The VersionFacts of flavor and version's major.minor (the lab's server of that series), or None."""
    return FACTS.get((flavor, tuple(version)[:2]))


def known_versions():
    """['mariadb 10.11.19', ...]: the versions this package has facts of."""
    return sorted(f.label for f in FACTS.values())
