# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a server runs with versus what is wanted: the per-variable verdict of dbfleet.innodb.verify.

decide() is a pure function (unit-tested with a table covering every status): from the desired value, the running
value, what a restart gives (Startup) and where the running value came from, one status and the notes that say why.
audit/verify.py gathers that evidence over one connection and calls it per setting.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils import values

OK = 'ok'
# Runs the desired value, but what a restart brings cannot be told from here (the option files are not read:
# the controller-side audit; nothing else says it): neither ok nor drift, counted on its own.
STARTUP_UNKNOWN = 'startup_unknown'
DRIFT_RUNTIME = 'drift_runtime'
DRIFT_CONFIG = 'drift_config'
PENDING_RESTART = 'pending_restart'
UNSUPPORTED = 'unsupported'
NOT_SETTABLE = 'not_settable'
ERROR = 'error'
STATUSES = (OK, STARTUP_UNKNOWN, DRIFT_RUNTIME, DRIFT_CONFIG, PENDING_RESTART, UNSUPPORTED, NOT_SETTABLE, ERROR)
# Statuses that do not count as drift.
NO_DRIFT = (OK, STARTUP_UNKNOWN, UNSUPPORTED)

# Where a running value came from, as the server says (MySQL 8 VARIABLE_SOURCE, MariaDB
# GLOBAL_VALUE_ORIGIN): the compiled-in default (a restart gives the same value again) ...
COMPILED_ORIGINS = ('COMPILED', 'COMPILE-TIME', 'AUTO')
# ... or a SET GLOBAL since startup (lost at restart unless also configured).
RUNTIME_ORIGINS = ('DYNAMIC', 'SQL')


class Startup(object):
    """What a restart would give a variable: value (text) and where it comes from.

    state: 'known' (value/source say it; value None = nothing sets it), 'unavailable' (option files
    not readable from here, nothing to go on), 'error' (a file the server reads could not be read)."""

    def __init__(self, value=None, source=None, state='known', reason=None, default=None, read_at=None, age=None):
        self.value = value
        self.source = source
        self.state = state
        self.reason = reason
        self.default = default
        # Taken from an earlier per-host run (cached_startup()): when it read the option files, and how long ago.
        self.read_at = read_at
        self.age = age


def decide(desired, kind, runtime, startup, dynamic=None, choices=None, origin=None, rounding=None,
           exists=True, settable=(True, ''), limits=None):
    """(status, notes) for one variable.

    desired: as the user wrote it; runtime: the GLOBAL value (text) or None;
    startup: Startup (what a restart gives); dynamic: True/False/None (unknown);
    origin: where the running value came from as the server says (optional);
    exists: the server has the variable; settable: flavors.settable() result;
    limits: values.Limits of the variable (a desired value outside them is an error, as for the setter).
    Values are compared by values.compare, the same comparison the setter uses.
    """
    notes = []
    if not exists:
        return UNSUPPORTED, notes
    if not settable[0]:
        return NOT_SETTABLE, [settable[1]]
    if isinstance(desired, (dict, list, tuple, set)):
        return ERROR, ['desired value must be a scalar (string, number or boolean), got %s'
                       % type(desired).__name__]
    try:
        values.check(desired, kind, choices, limits)
    except values.ValueError_ as e:
        return ERROR, ['desired value: %s' % e]
    running_ok, note = values.compare(desired, runtime, kind, choices, rounding, limits)
    if note:
        notes.append(note)
    restart_ok = _restart_ok(desired, kind, choices, rounding, limits, startup, origin, runtime, running_ok, notes)
    if running_ok:
        return _running_verdict(restart_ok, startup, origin, notes)
    return _differing_verdict(restart_ok, startup, origin, runtime, dynamic, notes)


def _restart_ok(desired, kind, choices, rounding, limits, startup, origin, runtime, running_ok, notes):
    """Step of decide(): whether a restart brings the desired value (True / False), None when that is not known.
    Nothing set and a compiled-in running value: a restart brings what runs now; else the default, when known."""
    if startup.state == 'known' and startup.value is not None:
        restart_ok, note = values.compare(desired, startup.value, kind, choices, rounding, limits)
        if note and note not in notes:
            notes.append(note)
        return restart_ok
    if startup.state == 'known':
        # Nothing sets it: a restart gives the compiled-in default.
        if str(origin or '').upper() in COMPILED_ORIGINS and runtime is not None:
            return running_ok
        if startup.default is not None:
            return values.compare(desired, startup.default, kind, choices, rounding, limits)[0]
    return None


def _running_verdict(restart_ok, startup, origin, notes):
    """Step of decide(), the server runs the desired value: ok, drift_config (a restart loses it), startup_unknown
    or error (what a restart brings cannot be told), with the notes that say why."""
    origin_up = str(origin or '').upper()
    if restart_ok is True:
        return OK, notes
    if restart_ok is False:
        if startup.value is None:
            notes.append('nothing configures it: a restart brings the default %s' % (startup.default,))
        else:
            notes.append('a restart brings %s from %s' % (startup.value, startup.source))
        return DRIFT_CONFIG, notes
    if startup.state == 'error':
        return ERROR, notes + ['runs the desired value, but what a restart brings is unknown: %s'
                               % startup.reason]
    if origin_up in RUNTIME_ORIGINS and startup.state == 'unavailable':
        notes.append('set at runtime (%s); option files not read (%s): whether a restart keeps it is not '
                     'known' % (origin, startup.reason))
        return STARTUP_UNKNOWN, notes
    if origin_up in RUNTIME_ORIGINS:
        notes.append('set at runtime (%s) and not configured: lost at the next restart' % origin)
        return DRIFT_CONFIG, notes
    if startup.state == 'unavailable' and not origin_up:
        # Nothing says where the running value came from, and the option files were not read.
        notes.append('option files not read (%s) and the server does not say where the running value came '
                     'from: only the running value was checked' % startup.reason)
        return STARTUP_UNKNOWN, notes
    if startup.state == 'unavailable':
        notes.append('option files not read (%s): only the running value was checked; the server says it '
                     'came from %s at startup' % (startup.reason, origin))
    else:
        notes.append('no option file sets it and its default is not known here: '
                     'only the running value was checked')
    return OK, notes


def _differing_verdict(restart_ok, startup, origin, runtime, dynamic, notes):
    """Step of decide(), the running value differs: pending_restart (a restart applies what is configured) or
    drift_runtime, with the notes that say what runs and what is configured."""
    origin_up = str(origin or '').upper()
    if restart_ok is True:
        if dynamic is False:
            notes.append('read-only variable: configured %s in %s; a restart applies it'
                         % (startup.value, startup.source))
            return PENDING_RESTART, notes
        if dynamic is None and origin_up not in RUNTIME_ORIGINS:
            notes.append('configured %s in %s; whether it can change at runtime is not known: '
                         'a restart applies it' % (startup.value, startup.source))
            return PENDING_RESTART, notes
        if origin_up in RUNTIME_ORIGINS:
            notes.append('configured %s in %s, but the running value %s was set at runtime'
                         % (startup.value, startup.source, runtime))
        else:
            notes.append('configured %s in %s, but the server runs %s (the file changed after the '
                         'server started?): SET GLOBAL or a restart applies it'
                         % (startup.value, startup.source, runtime))
        return DRIFT_RUNTIME, notes
    notes.append('the server runs %s' % (_shown(runtime),))
    if startup.state == 'error':
        notes.append('option files: %s' % startup.reason)
    elif startup.value is not None:
        notes.append('configured %s in %s' % (startup.value, startup.source))
    elif startup.state == 'known':
        notes.append('no option file sets it (default %s)' % (
            'not known here' if startup.default is None else _shown(startup.default)))
    if dynamic is False:
        notes.append('read-only variable: needs the option file and a restart')
    return DRIFT_RUNTIME, notes


def _shown(value):
    """A value for a message: an empty string is shown as ''."""
    if value is None:
        return 'nothing'
    text = '%s' % (value,)
    return text if text.strip() else repr(text)


def summarize(results):
    """Counts per status (every status present, zero when unused) and the drift flag."""
    summary = dict((s, 0) for s in STATUSES)
    for item in results.values():
        summary[item['status']] = summary.get(item['status'], 0) + 1
    drift = any(item['status'] not in NO_DRIFT for item in results.values())
    return summary, drift
