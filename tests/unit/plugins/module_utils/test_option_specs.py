# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options defined once with their ranges (option_specs.py): the spec Ansible reads, the ranges, their check."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils import option_specs as o


def test_range_problems_name_the_input_and_value():
    ranges = dict(retries=(0, 10), lock_wait_timeout=(1, 3600))
    assert o.range_problems(dict(retries=11, lock_wait_timeout=0), ranges) == [
        'lock_wait_timeout=0 is out of range 1-3600', 'retries=11 is out of range 0-10']
    assert o.range_problems(dict(retries=10, lock_wait_timeout=1), ranges) == []


def test_range_problems_without_upper_bound_and_with_the_value_as_given():
    ranges = dict(max_lag=(0, None), retries=(0, 10))
    assert o.range_problems(dict(max_lag=-1, retries=11), ranges, dict(retries='11')) == [
        'max_lag=-1 is out of range 0 or more', 'retries=11 is out of range 0-10']
    assert o.range_problems(dict(max_lag=10 ** 9, retries=None), ranges) == []


def test_option_spec_and_option_ranges_split_one_definition():
    options = dict(retries=dict(type='int', default=3, range=(0, 10)), engine=dict(type='str', check=len),
                   expect=dict(type='dict', default={}))
    spec = o.option_spec(options)
    assert spec == dict(retries=dict(type='int', default=3), engine=dict(type='str'),
                        expect=dict(type='dict', default={}))
    assert spec['expect']['default'] is not options['expect']['default']   # no shared mutable default
    assert o.option_ranges(options) == dict(retries=(0, 10))
