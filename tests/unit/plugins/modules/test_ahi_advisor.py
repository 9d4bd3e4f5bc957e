# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ahi_advisor input checks: refused with a message naming the input, before any connection."""

from __future__ import annotations

import itertools
import json

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.modules import ahi_advisor
from ansible_collections.dbfleet.innodb.tests.unit.plugins.modules.module_result import module_result


def run(capsys, monkeypatch, **args):
    def no_connect(module):
        raise AssertionError('connected although the input was bad')
    monkeypatch.setattr(connection, 'connect', no_connect)
    return module_result(capsys, ahi_advisor.main, args)


@pytest.mark.parametrize('args,needle', [
    (dict(sample_seconds=0), 'sample_seconds=0 is out of range 1-3600'),
    (dict(sample_seconds=4000), 'sample_seconds'),
    (dict(min_lookups=0), 'min_lookups'),
    (dict(min_hit_ratio=2.0), 'min_hit_ratio=2.0 is out of range 0-1'),
    (dict(max_buffer_pool_miss_ratio=-1.0), 'max_buffer_pool_miss_ratio'),
    (dict(max_write_share=1.1), 'max_write_share'),
    (dict(max_maintenance_per_hit=-0.5), 'max_maintenance_per_hit=-0.5 is out of range 0 or more'),
])
def test_bad_input_named_before_connecting(capsys, monkeypatch, args, needle):
    out = run(capsys, monkeypatch, login_password='s3cret-pw', **args)
    assert out['_rc'] == 1 and out['failed'] is True
    assert needle in out['msg']
    assert 's3cret-pw' not in json.dumps(out)


def test_all_bad_inputs_reported_together(capsys, monkeypatch):
    out = run(capsys, monkeypatch, sample_seconds=0, min_hit_ratio=3.0)
    assert 'sample_seconds' in out['msg'] and 'min_hit_ratio' in out['msg']


def test_defaults_match_the_decision_module():
    spec = ahi_advisor.__dict__
    assert 'DOCUMENTATION' in spec
    import yaml
    doc = yaml.safe_load(ahi_advisor.DOCUMENTATION)
    for name, value in ahi_advisor.ahi_advisor.DEFAULT_THRESHOLDS.items():
        assert doc['options'][name]['default'] == value
    assert doc['options']['sample_seconds']['default'] == 60


# ---------------------------------------------------------------- main()'s steps, each on its own
class StepModule:
    def __init__(self, check_mode=False, enable_monitors=True):
        self.check_mode, self.params, self.failed = check_mode, dict(enable_monitors=enable_monitors), None

    def fail_json(self, **kwargs):
        self.failed = kwargs
        raise SystemExit(1)


def rows(state):
    return dict((n, dict(NAME=n, STATUS=state, COUNT=5)) for n in ('adaptive_hash_searches', 'adaptive_hash_rows_added'))


@pytest.mark.parametrize('check_mode, enable, changed, enabled, warning', [
    (False, True, True, ['adaptive_hash_rows_added'], None),
    (True, True, True, [], 'left off (check mode); a real run turns them on'),
    (False, False, False, [], 'left off (enable_monitors=false)'),
])
def test_step_enable_counters(monkeypatch, check_mode, enable, changed, enabled, warning):
    calls = []
    monkeypatch.setattr(ahi_advisor, '_set_monitors', lambda conn, names, on: calls.append((list(names), on)) or {})
    monkeypatch.setattr(ahi_advisor, '_metrics', lambda conn, column: rows('enabled'))
    start = dict(rows('disabled'), adaptive_hash_searches=dict(NAME='adaptive_hash_searches', STATUS='enabled', COUNT=5))
    enabled_now, warnings, result = [], [], dict(changed=False)
    after = ahi_advisor._enable_counters(StepModule(check_mode, enable), None, 'STATUS', start,  # pylint: disable=protected-access
                                         enabled_now, warnings, result)
    assert enabled_now == enabled and result['changed'] is changed
    assert (after == rows('enabled')) is bool(enabled) and calls == ([(enabled, True)] if enabled else [])
    assert (warning in warnings[0]) if warning else warnings == []


def test_step_restore_counters_over_a_new_connection_and_failing_loudly(monkeypatch):
    class New:
        closed = False

        def close(self):
            self.closed = True

    new = New()
    restored = []

    def set_monitors(conn, names, on):
        assert on is False
        if conn is new and 'stuck' not in names:
            restored.extend(names)
            return {}
        return dict((n, 'gone') for n in names)

    monkeypatch.setattr(ahi_advisor, '_set_monitors', set_monitors)
    monkeypatch.setattr(connection, 'open_connection', lambda params: new)
    ahi_advisor._restore_counters(StepModule(), 'old', [], None, {})  # pylint: disable=protected-access
    ahi_advisor._restore_counters(StepModule(), 'old', ['x'], None, {})  # pylint: disable=protected-access
    assert restored == ['x'] and new.closed          # the old connection failed: a new one restored it
    module = StepModule()
    with pytest.raises(SystemExit):
        ahi_advisor._restore_counters(module, 'old', ['stuck'], None, {})  # pylint: disable=protected-access
    assert module.failed['msg'] == 'could not turn these AHI counters off again: stuck (gone)'


def test_step_read_sample_before_and_after(monkeypatch):
    monkeypatch.setattr(ahi_advisor, '_ahi_on', lambda conn: True)
    status = itertools.cycle([dict(handler_read_key=1), dict(handler_read_key=9)])
    monkeypatch.setattr(ahi_advisor, 'global_status', lambda conn, names: next(status))
    monkeypatch.setattr(ahi_advisor, '_metrics', lambda conn, column: rows('enabled'))
    monkeypatch.setattr(ahi_advisor, 'global_variables', lambda conn, names: dict(innodb_adaptive_hash_index_parts='8'))
    sample = ahi_advisor._read_sample(None, 'STATUS', rows('disabled'), 0, 'innodb_adaptive_hash_index_parts')  # pylint: disable=protected-access
    assert sample['status_before'] == dict(handler_read_key=1) and sample['status_after'] == dict(handler_read_key=9)
    assert sample['counts_before'] == sample['counts_after'] == dict(adaptive_hash_searches=5, adaptive_hash_rows_added=5)
    assert sample['partitions'] == 8 and sample['ahi_before'] is sample['ahi_after'] is True and sample['elapsed'] >= 0
    assert ahi_advisor._read_sample(None, 'STATUS', {}, 0, None)['partitions'] is None  # pylint: disable=protected-access
