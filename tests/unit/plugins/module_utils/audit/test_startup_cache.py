# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option-file state of an earlier per-host run (audit/startup_cache.py): taken with its source and age while it
is fresh, refused when stale, from the future, malformed or missing the variable."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import startup_cache as sc
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verdict as v

NOW = sc.parse_time('2026-11-25T16:00:00Z')
CACHE = {'read_at': '2026-11-25T15:00:00Z', 'variables': {
    'innodb_io_capacity': {'value': '300', 'source': '/etc/mysql/conf.d/x.cnf:2 [mysqld]', 'state': 'known'},
    'innodb_flush_neighbors': {'value': None, 'source': None, 'state': 'known'}}}


def test_cached_startup_gives_the_value_its_source_and_age():
    startup, note = sc.cached_startup(CACHE, 'innodb_io_capacity', NOW, 86400)
    assert note is None and startup.state == 'known' and startup.value == '300'
    assert startup.read_at == '2026-11-25T15:00:00Z' and startup.age == 3600
    assert startup.source == '/etc/mysql/conf.d/x.cnf:2 [mysqld] (as the per-host run read it at 2026-11-25T15:00:00Z, 1h ago)'
    # nothing sets it: a restart brings the default, so a value set at runtime is drift_config again
    startup, note = sc.cached_startup(CACHE, 'innodb_flush_neighbors', NOW, 86400)
    startup.default = '1'
    assert v.decide(0, 'int', '0', startup, True, origin='SQL')[0] == v.DRIFT_CONFIG
    assert v.decide(300, 'int', '300', sc.cached_startup(CACHE, 'innodb_io_capacity', NOW)[0], True,
                    origin='SQL')[0] == v.OK


@pytest.mark.parametrize('cache, name, fragment', [
    (dict(CACHE, read_at='2026-11-24T15:00:00Z'), 'innodb_io_capacity', 'beyond the bound of 1h'),
    (dict(CACHE, read_at='2026-11-25T17:00:00Z'), 'innodb_io_capacity', 'later than now'),
    (dict(CACHE, read_at='yesterday'), 'innodb_io_capacity', 'no read_at time'),
    (dict(CACHE, read_at='2026-11-25T15:00:00'), 'innodb_io_capacity', 'no read_at time'),   # no timezone
    (CACHE, 'innodb_lru_scan_depth', 'did not read what a restart brings for innodb_lru_scan_depth'),
    (['not', 'a', 'dict'], 'innodb_io_capacity', 'not a mapping'),
])
def test_cached_startup_refuses_stale_future_malformed_and_missing(cache, name, fragment):
    startup, note = sc.cached_startup(cache, name, NOW, 3600)
    assert startup is None and fragment in note, note


def test_no_cache_is_no_note():
    assert sc.cached_startup(None, 'x', NOW) == (None, None)
