# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""verdict.decide(): one row per situation, every status covered; its steps each on its own; the summary."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verdict as v
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit.verdict import Startup

FILE = '/etc/mysql/conf.d/60-dbfleet-x.cnf:3 [mysqld]'
NOTHING = Startup()                                   # nothing configures it, default unknown
UNAVAILABLE = Startup(state='unavailable', reason='the server (10.0.0.5) is not on this host')
UNREADABLE = Startup(state='error', reason='/etc/my.cnf: Permission denied')
GIB = 1 << 30

# (id, kwargs for decide, expected status, a fragment expected in the notes or None)
TABLE = [
    ('ok: runs it, file says it', dict(desired='ON', kind='bool', runtime='ON', startup=Startup('1', FILE)),
     v.OK, None),
    ('ok: bool spelled as YAML true', dict(desired=True, kind='bool', runtime='ON', startup=Startup('on', FILE)),
     v.OK, None),
    ('ok: size suffix', dict(desired='1G', kind='size', runtime=str(GIB), startup=Startup('1024M', FILE)),
     v.OK, None),
    ('ok: enum case', dict(desired='o_direct', kind='enum', runtime='O_DIRECT', dynamic=False,
                           choices=('fsync', 'O_DIRECT'), startup=Startup('O_DIRECT', FILE)), v.OK, None),
    ('ok: compiled default, nothing configures it',
     dict(desired=0, kind='int', runtime='0', startup=NOTHING, origin='COMPILED'), v.OK, None),
    ('ok: default known and equal',
     dict(desired=1, kind='int', runtime='1', startup=Startup(default='1')), v.OK, None),
    ('ok: buffer pool rounded up by the server',
     dict(desired='1000M', kind='size', runtime=str(GIB), startup=Startup('1000M', FILE),
          rounding=(128 << 20, 2)), v.OK, 'rounds'),
    ('drift_runtime: below chunk x instances the chunk shrinks, no rounding up',
     dict(desired='64M', kind='size', runtime=str(128 << 20), startup=Startup('64M', FILE), dynamic=True,
          rounding=(128 << 20, 1)), v.DRIFT_RUNTIME, None),
    ('ok: option files not readable from here, the server says the value came from one at startup',
     dict(desired=0, kind='int', runtime='0', startup=UNAVAILABLE, origin='CONFIG'), v.OK, 'only the running value'),
    ('startup_unknown: option files not read and no origin either',
     dict(desired=0, kind='int', runtime='0', startup=UNAVAILABLE), v.STARTUP_UNKNOWN, 'only the running value'),
    ('startup_unknown: set at runtime, option files not read: says it is not known (not drift)',
     dict(desired=0, kind='int', runtime='0', startup=UNAVAILABLE, origin='DYNAMIC'), v.STARTUP_UNKNOWN,
     'whether a restart keeps it is not known'),
    ('drift_runtime: option files not read, running value differs',
     dict(desired=0, kind='int', runtime='2', startup=UNAVAILABLE, origin='DYNAMIC', dynamic=True),
     v.DRIFT_RUNTIME, 'the server runs 2'),
    ('drift_runtime: running differs, nothing configured',
     dict(desired=0, kind='int', runtime='2', startup=Startup(default='1'), dynamic=True), v.DRIFT_RUNTIME,
     'the server runs 2'),
    ('drift_runtime: configured right, changed at runtime',
     dict(desired=0, kind='int', runtime='2', startup=Startup('0', FILE), dynamic=True, origin='DYNAMIC'),
     v.DRIFT_RUNTIME, 'set at runtime'),
    ('drift_runtime: file edited after start (dynamic)',
     dict(desired=300, kind='int', runtime='200', startup=Startup('300', FILE), dynamic=True,
          origin='COMPILE-TIME'), v.DRIFT_RUNTIME, 'SET GLOBAL or a restart'),
    ('drift_runtime: read-only, configured wrong too',
     dict(desired=16, kind='int', runtime='8', startup=Startup('8', FILE), dynamic=False), v.DRIFT_RUNTIME,
     'needs the option file and a restart'),
    ('drift_runtime: config unreadable and running differs',
     dict(desired=0, kind='int', runtime='1', startup=UNREADABLE, dynamic=True), v.DRIFT_RUNTIME,
     'Permission denied'),
    ('drift_config: set at runtime only (default differs)',
     dict(desired=0, kind='int', runtime='0', startup=Startup(default='1'), dynamic=True, origin='SQL'),
     v.DRIFT_CONFIG, 'default 1'),
    ('drift_config: set at runtime only, default unknown, origin says SET',
     dict(desired=0, kind='int', runtime='0', startup=NOTHING, dynamic=True, origin='DYNAMIC'),
     v.DRIFT_CONFIG, 'lost at the next restart'),
    ('drift_config: file says something else',
     dict(desired='OFF', kind='bool', runtime='OFF', startup=Startup('ON', FILE)), v.DRIFT_CONFIG, FILE),
    ('drift_config: persisted value overrides',
     dict(desired='512M', kind='size', runtime=str(512 << 20),
          startup=Startup('268435456', 'performance_schema.persisted_variables')), v.DRIFT_CONFIG,
     'persisted_variables'),
    ('pending_restart: read-only, configured right',
     dict(desired=16, kind='int', runtime='8', startup=Startup('16', FILE), dynamic=False),
     v.PENDING_RESTART, 'a restart applies it'),
    ('pending_restart: dynamic unknown, configured right',
     dict(desired='O_DIRECT', kind='str', runtime='fsync', startup=Startup('O_DIRECT', FILE), dynamic=None),
     v.PENDING_RESTART, 'not known'),
    ('unsupported', dict(desired=1, kind='int', runtime=None, startup=NOTHING, exists=False), v.UNSUPPORTED,
     None),
    ('not_settable: AHI on an Aurora reader',
     dict(desired='ON', kind='bool', runtime='OFF', startup=NOTHING,
          settable=(False, 'Aurora reader instances run without the adaptive hash index')), v.NOT_SETTABLE,
     'Aurora'),
    ('error: malformed size', dict(desired='12Q', kind='size', runtime='1', startup=NOTHING), v.ERROR,
     "'12Q' is not a size"),
    ('error: malformed integer', dict(desired='lots', kind='int', runtime='1', startup=NOTHING), v.ERROR,
     "'lots' is not an integer"),
    ('error: not a boolean', dict(desired='maybe', kind='bool', runtime='ON', startup=NOTHING), v.ERROR,
     'not a boolean'),
    ('error: list as a value', dict(desired=[1, 2], kind='int', runtime='1', startup=NOTHING), v.ERROR,
     'scalar'),
    ('error: runs right but the option files cannot be read',
     dict(desired=0, kind='int', runtime='0', startup=UNREADABLE), v.ERROR, 'Permission denied'),
]


@pytest.mark.parametrize('kwargs, status, fragment', [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_decide(kwargs, status, fragment):
    got, notes = v.decide(**kwargs)
    assert got == status, notes
    if fragment:
        assert any(fragment in n for n in notes), notes


def test_table_covers_every_status():
    assert set(t[2] for t in TABLE) == set(v.STATUSES)


def test_summarize_counts_every_status_and_flags_drift():
    summary, drift = v.summarize({'a': {'status': 'ok'}, 'b': {'status': 'unsupported'}})
    assert summary['ok'] == 1 and summary['unsupported'] == 1 and summary['error'] == 0
    assert set(summary) == set(v.STATUSES)
    assert drift is False
    assert v.summarize({'a': {'status': 'pending_restart'}})[1] is True
    # runtime matches, startup unknown: counted on its own, not drift
    summary, drift = v.summarize({'a': {'status': 'startup_unknown'}, 'b': {'status': 'ok'}})
    assert summary['startup_unknown'] == 1 and drift is False


# ---------------------------------------------------------------- decide()'s steps
def test_step_restart_ok_from_the_files_the_compiled_value_or_the_default():
    notes = []
    assert v._restart_ok('1G', 'size', None, None, None, Startup('1024M', FILE), None, '1', False, notes) is True  # pylint: disable=protected-access
    assert v._restart_ok(200, 'int', None, None, None, NOTHING, 'COMPILED', '200', True, []) is True  # pylint: disable=protected-access
    with_default = Startup()
    with_default.default = '100'
    assert v._restart_ok(200, 'int', None, None, None, with_default, None, None, False, []) is False  # pylint: disable=protected-access
    assert v._restart_ok(200, 'int', None, None, None, UNAVAILABLE, None, '200', True, []) is None  # pylint: disable=protected-access


def test_step_verdicts_running_and_differing():
    assert v._running_verdict(True, NOTHING, None, []) == (v.OK, [])  # pylint: disable=protected-access
    status, notes = v._running_verdict(None, UNAVAILABLE, 'DYNAMIC', [])  # pylint: disable=protected-access
    assert status == v.STARTUP_UNKNOWN and 'set at runtime (DYNAMIC)' in notes[0]
    assert v._running_verdict(None, UNREADABLE, None, [])[0] == v.ERROR  # pylint: disable=protected-access
    status, notes = v._differing_verdict(True, Startup('400', FILE), None, '200', False, [])  # pylint: disable=protected-access
    assert status == v.PENDING_RESTART and notes == ['read-only variable: configured 400 in %s; a restart applies it' % FILE]
    status, notes = v._differing_verdict(False, NOTHING, None, '200', True, [])  # pylint: disable=protected-access
    assert status == v.DRIFT_RUNTIME and notes[0] == 'the server runs 200'
