# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One server version's variables and options (the upgrade check's facts), without the data itself.

The data is the package flavor_data (about 310 KB of Python, every variable of four servers), which only the
controller imports: the verify module gets the facts as data from its action plugin only when an upgrade target is
asked for (catalog_data() on the controller, Catalog() in the module), so its payload does not carry them to every
host of an audit that names no target (AnsiballZ zips every module_utils a module imports, used or not).
"""

from __future__ import annotations

from collections import namedtuple

# kind: bool | int | float | enum | set | str; default: the running value of a fresh server (text), None for an
# instance value; machine: None (one number), 'instance' (the instance's own: paths, ids, ports) or why the default
# depends on the machine or another setting (then default is the lab's value, an example only).
Variable = namedtuple('Variable', 'name kind default dynamic minimum maximum choices machine')
INSTANCE = 'instance'


def _row(row):
    """A data row with its choices as a tuple (JSON gives lists)."""
    row = tuple(row)
    return row[:5] + (None if row[5] is None else tuple(row[5]),) + row[6:]


class VersionFacts(object):
    """One server version's variables and options: from a data module (flavor_data) or its data()."""

    def __init__(self, source, variables, options, removed_accepted=None):
        self.source = dict(source)
        self.flavor = self.source['flavor']
        self.version = tuple(self.source['version'])
        self.source['version'] = self.version
        self._variables = dict((name, _row(row)) for name, row in variables.items())
        self.options = frozenset(options)
        # Names of other versions this one lists nowhere but takes as no-ops, with the warning it prints.
        self.removed_accepted = dict(removed_accepted or {})

    @classmethod
    def from_module(cls, module):
        return cls(module.SOURCE, module.VARIABLES, module.OPTIONS, getattr(module, 'REMOVED_ACCEPTED', {}))

    def data(self):
        """The facts as plain data (module arguments); VersionFacts(**data) gives them back."""
        return dict(source=dict(self.source, version=list(self.version)),
                    variables=dict((name, list(row)) for name, row in self._variables.items()),
                    options=sorted(self.options), removed_accepted=dict(self.removed_accepted))

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


def catalog_data(catalog):
    """What a module's upgrade check needs of catalog (the package flavor_data), as plain data: every version's facts
    (VersionFacts.data()), the target's and the server's own (the current version's, known only once connected)."""
    return dict(facts=[f.data() for _key, f in sorted(catalog.FACTS.items())])


class Catalog(object):
    """catalog_data() read back: facts_for() and known_versions() answer as the package flavor_data does."""

    def __init__(self, data):
        facts = [VersionFacts(**one) for one in data.get('facts') or ()]
        self.FACTS = dict(((f.flavor, f.version[:2]), f) for f in facts)   # pylint: disable=invalid-name

    def facts_for(self, flavor, version):
        """The VersionFacts of flavor and version's major.minor, or None."""
        return self.FACTS.get((flavor, tuple(version)[:2]))

    def known_versions(self):
        """['mariadb 10.11.19', ...]: the versions these facts are of."""
        return sorted(f.label for f in self.FACTS.values())
