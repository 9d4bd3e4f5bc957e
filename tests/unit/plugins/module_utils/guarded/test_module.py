# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every guarded-change module shares (guarded/module.py): the window gate from the module's options."""

from __future__ import annotations

import datetime

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import module as g
from ansible_collections.dbfleet.innodb.plugins.module_utils.option_specs import option_ranges


class _GateModule(object):
    def __init__(self, **params):
        self.params = dict(dict(window=None, timezone='UTC', force_window=False), **params)
        self.warnings = []

    def fail_json(self, **kw):
        raise RuntimeError(kw)

    def warn(self, text):
        self.warnings.append(text)


def test_module_window_gate_fails_with_the_nothing_result_and_warns_when_forced():
    assert g.module_window_gate(_GateModule(), dict(dropped=[], changed=False)) is None
    with pytest.raises(RuntimeError) as e:
        g.module_window_gate(_GateModule(window='25:00-26:00'), dict(dropped=[], changed=False))
    failed = e.value.args[0]
    assert '25:00-26:00' in failed['msg'] and failed['dropped'] == [] and failed['changed'] is False
    later = (datetime.datetime.now(datetime.timezone.utc).hour + 2) % 24
    always_outside = '%02d:00-%02d:01' % (later, later)  # a minute two hours from now
    with pytest.raises(RuntimeError) as e:
        g.module_window_gate(_GateModule(window=always_outside), dict(converted=[], changed=False))
    assert 'set force_window' in e.value.args[0]['msg'] and e.value.args[0]['window']['inside'] is False
    forced = _GateModule(window=always_outside, force_window=True)
    st = g.module_window_gate(forced, {})
    assert st['inside'] is False and forced.warnings and forced.warnings[0].startswith('forced outside the window')
    read_only = _GateModule(window=always_outside)
    assert g.module_window_gate(read_only, {}, applies=False)['inside'] is False and read_only.warnings == []


class _Change(object):
    default_state_dir = '~/.dbfleet/x'


def test_module_argument_spec_and_ranges_read_the_one_definition():
    own = dict(follow_timeout=dict(type='int', default=600, range=(1, 86400)))
    spec = g.module_argument_spec(dict(login_host=dict(type='str')), _Change, own)
    assert spec['lock_wait_timeout'] == dict(type='int', default=2)
    assert spec['follow_timeout'] == dict(type='int', default=600)
    assert spec['state_dir'] == dict(type='path', default='~/.dbfleet/x') and 'login_host' in spec
    assert not any('range' in s for s in spec.values())
    assert g.module_ranges(own) == dict(lock_wait_timeout=(1, 3600), retries=(0, 10), retry_delay=(0, 300),
                                        restore_timeout=(1, 3600), follow_timeout=(1, 86400))
    assert g.MODULE_RANGES == option_ranges(g.GUARDED_OPTIONS)
