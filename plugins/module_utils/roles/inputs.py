# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading a role's input as the user wrote it: Checker collects a message for every bad variable (each reader
returns the checked value or None) and raises desired.InputError naming them all, before anything changes; ranges
come from the version table (flavors.VARIABLES) for the server at hand. Used by every role's desired-state function
(module_utils/roles/states.py, module_utils/roles/settings.py), loaded only when a role's desired state is worked out. Unit tests: test_desired.py,
test_values.py.
"""

from __future__ import annotations

import re

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

_INT_RE = re.compile(r'^\s*[-+]?\d+\s*$')


def size_or_none(value):
    """Bytes of a size as the user wrote it (1073741824, '1G', '512M'), or None when it is not one."""
    try:
        return values.parse_size(value)
    except values.ValueError_:
        return None


def server_text(facts):
    """'MySQL 8.0', 'MariaDB 10.11': the flavor and series, for range messages."""
    version = facts.get('version') or [0, 0, 0]
    return '%s %d.%d' % (flavors.display_name(facts.get('flavor')), int(version[0]), int(version[1]))


def identity(facts):
    return facts.get('flavor'), tuple(int(x) for x in (facts.get('version') or (0, 0, 0)))


def variable_range(name, facts):
    """(minimum, maximum) of server variable name on this server, from flavors.VARIABLES.

    When the server has no such variable, the range of its newest span anywhere (so input is still
    checked on a host the role will skip). ValueError for a name the table has no spans of: a role's setting
    without a range is a gap in the table, not an input without checks (test_desired.py holds every record's
    settings to it)."""
    flavor, version = identity(facts)
    vf = flavors.variable_facts(name, flavor, version)
    if vf is None:
        spans = flavors.VARIABLES.get(name) or []
        if not spans:
            raise ValueError('%s has no spans in flavors.VARIABLES: add them (with their source) before a role '
                             'checks its input against the server\'s range' % name)
        value = spans[-1].value
        return value.get('minimum'), value.get('maximum')
    return vf.minimum, vf.maximum


class Checker:
    """Collects messages about bad input; each reader returns the checked value (or None)."""

    def __init__(self, variables, defaults, facts):
        self.vars = dict(defaults)
        self.vars.update(variables or {})
        self.facts = facts
        self.errors = []

    def raw(self, name):
        return self.vars.get(name)

    def error(self, message):
        self.errors.append(message)

    def done(self):
        if self.errors:
            raise desired.InputError(self.errors)

    def boolean(self, name, value=None, label=None, allow_none=True):
        value = self.raw(name) if label is None else value
        label = label or name
        if value is None:
            if allow_none:
                return None
            self.error('%s must be true or false; got null' % label)
            return None
        try:
            return values.parse_bool(value)
        except values.ValueError_:
            self.error('%s must be true or false; got %s' % (label, desired.shown(value)))
            return None

    def integer(self, name, minimum=None, maximum=None, value=None, label=None, where=None):
        """An integer within [minimum, maximum]; where ('on MySQL 8.0') says whose range it is."""
        value = self.raw(name) if label is None else value
        label = label or name
        if value is None:
            return None
        is_number = isinstance(value, int) or (isinstance(value, str) and _INT_RE.match(value))
        if isinstance(value, bool) or not is_number:
            self.error('%s must be a whole number; got %s' % (label, desired.shown(value)))
            return None
        number = int(value)
        low_ok = minimum is None or number >= minimum
        high_ok = maximum is None or number <= maximum
        if not (low_ok and high_ok):
            if minimum is not None and maximum is not None:
                rule = ('must be %d-%d' if minimum >= 0 else 'must be %d to %d') % (minimum, maximum)
            elif minimum is not None:
                rule = 'must be %d or more' % minimum
            else:
                rule = 'must be at most %d' % maximum
            self.error('%s %s%s; got %s' % (label, rule, (' ' + where) if where else '', desired.shown(value)))
            return None
        return number

    def choice(self, name, choices, allow_none=False):
        value = self.raw(name)
        if value is None and allow_none:
            return None
        if not isinstance(value, str) or value not in choices:
            self.error('%s must be one of %s; got %s' % (name, ', '.join(choices), desired.shown(value)))
            return None
        return value

    def mapping(self, name, keys=None):
        """A dict (null and '' read as empty); keys, when given, are the only ones allowed."""
        value = self.raw(name)
        if value is None or value == '':
            return {}
        if not isinstance(value, dict):
            self.error('%s must be a map%s; got %s'
                       % (name, (' of ' + '/'.join(keys) + ' to values') if keys else '', desired.shown(value)))
            return {}
        if keys:
            extra = sorted(str(k) for k in value if k not in keys)
            if extra:
                self.error('%s has keys %s; it takes only %s' % (name, ', '.join(extra), ', '.join(keys)))
                return {}
        return dict(value)

    def text(self, name, allow_none=True):
        value = self.raw(name)
        if value is None:
            if not allow_none:
                self.error('%s must be a string; got null' % name)
            return None
        if not isinstance(value, str):
            self.error('%s must be a string; got %s' % (name, desired.shown(value)))
            return None
        return value


def server_variable(facts, name):
    return (facts.get('variables') or {}).get(name) or {}


# The ranges of the restart role's gate inputs (restart_timeout, restart_max_lag): what each role with restarts
# checks of its <role>_restart_timeout / <role>_restart_max_lag, and rolling_restart.yml of its own (playbook_inputs.py).
RESTART_RANGES = dict(restart_timeout=(1, None), restart_max_lag=(0, None))


def restart_inputs(check, role):
    check.choice(role + '_restart', ('never', 'allowed'))
    for name, (low, high) in RESTART_RANGES.items():
        check.integer('%s_%s' % (role, name), low, high)


def restart_state(pending, settings, reason):
    """The restart part of a role's desired state: pending_restart, and while a restart is pending the
    settings it applies (restart_settings) and why (restart_reason)."""
    return dict(pending_restart=pending, restart_settings=settings if pending else {}, restart_reason=reason if pending else '')
