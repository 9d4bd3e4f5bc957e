# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The value a restart brings: what a role does with a persisted value of a setting it owns.

MySQL and Percona Server 8.0+ read mysqld-auto.cnf (performance_schema.persisted_variables, written by SET PERSIST /
SET PERSIST_ONLY) after every option file, so a persisted value wins over a role's drop-in at the next start. A role
that wrote the drop-in and set the running value would otherwise report done while a restart brings the persisted
value back (verify: "drift_config: a restart brings 300 from performance_schema.persisted_variables").

plan() is applied to every role's desired state by desired.for_role(), when the facts hold `persisted`
(server_facts.report(persisted=True), as dbfleet.innodb.desired_settings reads them). For each setting of the state
whose persisted value differs from the desired one, by the role's input <role>_persisted:
  reset   with persisted settings chosen (the state's runtime_persist: SET PERSIST / SET PERSIST_ONLY of the desired
          value already in its runtime steps or persist_only) nothing more; otherwise the name goes to the state's
          persisted_reset (RESET PERSIST, dbfleet.innodb.global_variables reset_persisted), so the drop-in decides;
  refuse  desired.InputError naming each setting and its persisted value, before anything changes.
Unit tests: tests/unit/plugins/module_utils/test_persisted.py.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils import values

MODES = ('reset', 'refuse')
SOURCE = 'performance_schema.persisted_variables (mysqld-auto.cnf)'


def input_name(role):
    """The role's input that says what to do with a persisted value (<role>_persisted)."""
    return role + '_persisted'


def kind_of(name, value, facts):
    """The kind to compare name's values by: the server facts' details, the version table, else the desired value's look."""
    details = (facts.get('variables') or {}).get(name) or {}
    if details.get('kind'):
        return details['kind']
    version = tuple(int(x) for x in (facts.get('version') or (0, 0, 0)))
    known = flavors.variable_facts(name, facts.get('flavor'), version)
    if known is not None:
        return known.kind
    return 'bool' if isinstance(value, bool) else values.guess_kind(value)


def same(name, wanted, persisted, facts):
    """Whether the persisted text means the desired value (compared by meaning, as verify does)."""
    kind = kind_of(name, wanted, facts)
    try:
        return values.equal(wanted, persisted, kind)
    except values.ValueError_:
        return str(wanted).strip().lower() == str(persisted).strip().lower()


def covered(name, state):
    """Whether the state's own steps persist the desired value of name (runtime_persist: SET PERSIST in its runtime
    steps, or SET PERSIST_ONLY in its persist_only)."""
    if not state.get('runtime_persist'):
        return False
    if name in (state.get('persist_only') or {}):
        return True
    return any(name in step for step in state.get('runtime_steps') or ())


def differing(state, facts):
    """[(name, desired, persisted)] of the state's settings whose persisted value means another value, by name."""
    persisted = facts.get('persisted') or {}
    out = []
    for name, wanted in sorted((state.get('settings') or {}).items()):
        held = persisted.get(name)
        if held is None or wanted is None or same(name, wanted, held, facts):
            continue
        out.append((name, wanted, held))
    return out


def plan(role, state, facts, mode):
    """Fill the state's persisted_reset (names for RESET PERSIST) and notes for the persisted values that differ from
    the desired ones; returns the refusal messages (mode refuse; empty otherwise). state is changed in place."""
    state.setdefault('persisted_reset', [])
    problem = facts.get('persisted_problem')
    if problem and facts.get('persisted') is not None and (facts.get('capabilities') or {}).get('set_persist'):
        state['notes'].append('persisted settings not checked: %s' % problem)
    refusals = []
    for name, wanted, held in differing(state, facts):
        shown_wanted = values.display(wanted, kind_of(name, wanted, facts))
        if mode == 'refuse':
            refusals.append('%s is persisted as %s in %s, the desired value is %s: a restart would bring %s back; '
                            '%s: refuse leaves persisted settings alone, so nothing changed (RESET PERSIST %s on the '
                            'server, or %s: reset)' % (name, held, SOURCE, shown_wanted, held, input_name(role), name,
                                                       input_name(role)))
        elif covered(name, state):
            state['notes'].append('%s: persisted as %s (%s); SET PERSIST writes %s over it'
                                  % (name, held, SOURCE, shown_wanted))
        else:
            state['persisted_reset'].append(name)
            state['notes'].append('%s: persisted as %s (%s), which a restart would bring over the drop-in\'s %s: '
                                  'RESET PERSIST %s removes it, so the drop-in decides' % (name, held, SOURCE,
                                                                                           shown_wanted, name))
    return refusals
