# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a restart brings, as an earlier per-host run read it: the option-file state audit() returns (kept by
playbooks/verify.yml as the cacheable fact verify_startup_state, with its read_at time), used by the controller-side
audit where the option files cannot be read, while it is fresh (cached_startup()).
"""

from __future__ import annotations

import datetime

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.verdict import Startup

# The option-file state a per-host run read (audit()'s startup_state, kept by playbooks/verify.yml as the cacheable
# fact verify_startup_state) is used by the controller-side audit for this long by default (seconds).
DEFAULT_STARTUP_CACHE_MAX_AGE = 86400
# A read_at this far ahead of the controller's clock is still taken (clocks of the host and the controller differ).
CLOCK_SKEW = 300


def parse_time(text):
    """A timezone-aware datetime (UTC) from an ISO 8601 text with an offset (2026-11-25T16:00:00Z, ...+00:00),
    or None (offpeak.parse_now reads it, as it reads the windows' times)."""
    if not isinstance(text, str) or not text.strip():
        return None
    # Imported here: only the controller-side audit reads cached times (the per-host run does not compile it).
    from ansible_collections.dbfleet.innodb.plugins.module_utils import offpeak
    try:
        return offpeak.parse_now(text)
    except offpeak.WindowError:
        return None


def cached_startup(cache, name, now, max_age=DEFAULT_STARTUP_CACHE_MAX_AGE):
    """(Startup or None, note): what a restart brings for variable name, as an earlier per-host run read it.

    cache: the startup_state an earlier per-host audit returned, with read_at (ISO 8601 UTC) added by the playbook
    (the fact verify_startup_state); now: an aware datetime; max_age: seconds beyond which the state is stale.
    None with a note when the cache is missing, stale, malformed or did not read the variable."""
    if not cache:
        return None, None
    if not isinstance(cache, dict):
        return None, 'the cached option-file state is not a mapping: not used'
    read_at = parse_time(cache.get('read_at'))
    if read_at is None:
        return None, 'the cached option-file state has no read_at time (ISO 8601, UTC): not used'
    age = (now - read_at).total_seconds()
    stamp = read_at.astimezone(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')
    if age < -CLOCK_SKEW:
        return None, 'the cached option-file state was read at %s, later than now: not used' % stamp
    if age > max_age:
        return None, ('the option files as the per-host run read them at %s are %s old, beyond the bound of %s: not used'
                      % (stamp, _duration(age), _duration(max_age)))
    entry = (cache.get('variables') or {}).get(name)
    if not isinstance(entry, dict) or entry.get('state') != 'known':
        return None, 'the per-host run at %s did not read what a restart brings for %s' % (stamp, name)
    where = entry.get('source') or 'no option file sets it'
    return Startup(entry.get('value'), '%s (as the per-host run read it at %s, %s ago)' % (where, stamp, _duration(age)),
                   'known', read_at=stamp, age=max(0, int(age))), None


def _duration(seconds):
    seconds = max(0, int(seconds))
    for unit, size in (('d', 86400), ('h', 3600), ('min', 60)):
        if seconds >= size:
            return '%d%s%s' % (seconds // size, unit, (' %ds' % (seconds % size)) if unit == 'min' and seconds % size else '')
    return '%ds' % seconds
