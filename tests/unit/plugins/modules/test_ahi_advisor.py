# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ahi_advisor input checks: refused with a message naming the input, before any connection."""

from __future__ import annotations

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
