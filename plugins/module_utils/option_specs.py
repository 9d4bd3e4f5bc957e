# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options defined once with their ranges: an option's spec in Ansible's argument spec form that may also hold its
range ('range': (low, high), high None for no upper bound) and the engine's own check of its value ('check'). The
modules read option_spec() (what AnsibleModule takes) and check range_problems() against option_ranges(); the
playbooks' inputs (playbook_inputs.py) read the same definitions."""

from __future__ import annotations

import copy


# Keys of an option's spec that are the collection's, not Ansible's: its range (range_problems) and the engine's own
# check of its value (playbook_inputs.py).
OWN_SPEC_KEYS = ('range', 'check')


def option_spec(options):
    """The argument spec of options ({name: spec}, a spec may hold its range as 'range': (low, high) and a check
    of its value as 'check'), those left out: what AnsibleModule and ArgumentSpecValidator read."""
    return dict((name, copy.deepcopy(dict((k, v) for k, v in spec.items() if k not in OWN_SPEC_KEYS)))
                for name, spec in options.items())


def option_ranges(options):
    """The ranges of options ({name: (low, high)}), what range_problems checks."""
    return dict((name, spec['range']) for name, spec in options.items() if 'range' in spec)


def range_problems(params, ranges, given=None):
    """Messages for params outside their (low, high) range (high None: no upper bound), naming the input and
    the value given (given[name] when given holds it, the value as written before its type was converted)."""
    given = given or {}
    out = []
    for name, (low, high) in sorted(ranges.items()):
        value = params.get(name)
        if value is None or (low <= value and (high is None or value <= high)):
            continue
        bounds = ('%s or more' % low) if high is None else ('%s-%s' % (low, high))
        out.append('%s=%s is out of range %s' % (name, given.get(name, value), bounds))
    return out
