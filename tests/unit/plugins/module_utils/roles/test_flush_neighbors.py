# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The flush_neighbors role's desired state (module_utils/roles/flush_neighbors.py): the whole state from the storage
detected or given, bad input named, and each step on its own."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import flush_neighbors as fnr
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import inputs as role_input

from test_desired import SSD, UNKNOWN, error_of, facts


def test_flush_neighbors_detected_ssd():
    out = fnr.flush_neighbors({}, facts(), SSD)
    assert out['settings'] == {'innodb_flush_neighbors': 0}
    assert out['storage']['storage_class'] == 'ssd' and out['storage']['source'] == 'sysfs'
    assert out['storage']['devices'] == ['sda']
    assert out['runtime'] == [{'innodb_flush_neighbors': 0}]
    assert out['option_file'] == [dict(name='innodb_flush_neighbors', value='0')]


def test_flush_neighbors_override_wins_and_says_so():
    out = fnr.flush_neighbors({'flush_neighbors_storage_class': 'hdd', 'flush_neighbors_map': {'hdd': 2}},
                              facts(), SSD)
    assert out['settings'] == {'innodb_flush_neighbors': 2} and out['storage']['source'] == 'override'
    assert 'wins over the detected ssd' in out['storage']['reasons'][0]


def test_flush_neighbors_unknown_or_low_confidence_leaves_alone():
    assert fnr.flush_neighbors({}, facts(), UNKNOWN)['left_alone'] is True
    low = dict(SSD, confidence='low')
    out = fnr.flush_neighbors({'flush_neighbors_min_confidence': 'high'}, facts(), low)
    assert out['settings'] == {} and out['storage']['storage_class'] == 'unknown'
    assert 'low confidence' in out['storage']['reasons'][0]


def test_flush_neighbors_io_profile_order_raises_the_maximum_first():
    running = facts(runtime={'innodb_io_capacity_max': '2000'})
    out = fnr.flush_neighbors({'flush_neighbors_io_profile': True,
                               'flush_neighbors_io_capacity': {'ssd': 3000}}, running, SSD)
    assert out['settings'] == {'innodb_flush_neighbors': 0, 'innodb_io_capacity': 3000,
                               'innodb_io_capacity_max': 4000}
    assert out['runtime'] == [{'innodb_flush_neighbors': 0}, {'innodb_io_capacity_max': 4000},
                              {'innodb_io_capacity': 3000}]
    lower = fnr.flush_neighbors({'flush_neighbors_io_profile': True}, running, SSD)
    assert lower['runtime'][1:] == [{'innodb_io_capacity': 2000}, {'innodb_io_capacity_max': 4000}]


def test_flush_neighbors_mariadb_note():
    out = fnr.flush_neighbors({'flush_neighbors_storage_class': 'hdd'}, facts('mariadb', (10, 11, 6)), SSD)
    assert out['notes'] and 'non-rotational' in out['notes'][0]


@pytest.mark.parametrize('variables,message', [
    ({'flush_neighbors_map': {'ssd': 3}}, 'flush_neighbors_map.ssd must be 0-2 on MySQL 8.0; got 3'),
    ({'flush_neighbors_map': {'ssd': 'ten'}}, "flush_neighbors_map.ssd must be a whole number; got 'ten'"),
    ({'flush_neighbors_map': 'ssd'}, "flush_neighbors_map must be a map of ssd/hdd/mixed to values; got 'ssd'"),
    ({'flush_neighbors_map': {'fast': 0}}, 'flush_neighbors_map has keys fast; it takes only ssd, hdd, mixed'),
    ({'flush_neighbors_io_capacity': {'ssd': 50}}, 'flush_neighbors_io_capacity.ssd must be 100 or more on MySQL 8.0; got 50'),
    ({'flush_neighbors_io_capacity': {'ssd': 5000}}, 'flush_neighbors_io_capacity.ssd (5000) may not exceed'),
    ({'flush_neighbors_storage_class': 'nvme'}, "flush_neighbors_storage_class must be one of ssd, hdd; got 'nvme'"),
    ({'flush_neighbors_probe': 'perhaps'}, "flush_neighbors_probe must be true or false; got 'perhaps'"),
])
def test_flush_neighbors_bad_input(variables, message):
    assert message in error_of(fnr.flush_neighbors, variables, facts(), SSD)


def test_flush_neighbors_set_persist_needs_the_capability():
    text = error_of(fnr.flush_neighbors, {'flush_neighbors_persist': 'set_persist'},
                    facts('mariadb', (10, 11, 6)), SSD)
    assert 'needs SET PERSIST' in text
    assert fnr.flush_neighbors({'flush_neighbors_persist': 'both'}, facts(), SSD)['persist'] == 'both'


def test_flush_neighbors_header_has_no_line_break():
    out = fnr.flush_neighbors({}, facts(datadir='/data\n[client]\n'), SSD)
    assert '\n' not in out['header']


# ---------------------------------------------------------------- the steps of flush_neighbors(), each on its own
def checker(**variables):
    return role_input.Checker(variables, desired.INPUTS['flush_neighbors'], facts())


def test_read_inputs_merges_the_maps_under_the_built_in_ones_and_names_a_capacity_over_its_maximum():
    check = checker(flush_neighbors_map={'ssd': 1}, flush_neighbors_io_capacity={'hdd': None})
    inputs = fnr.read_inputs(check, facts())
    assert check.errors == []
    assert inputs['flush_neighbors'] == dict(ssd=1, hdd=1, mixed=1)
    assert inputs['io_capacity'] == dict(ssd=2000, hdd=None, mixed=200) and inputs['persist'] == 'dropin'
    check = checker(flush_neighbors_io_capacity={'ssd': 5000})
    fnr.read_inputs(check, facts())
    assert any('flush_neighbors_io_capacity.ssd (5000) may not exceed flush_neighbors_io_capacity_max.ssd (4000)' in e
               for e in check.errors), check.errors


def test_storage_decision_override_then_confident_detection_then_none():
    given = fnr.storage_decision('hdd', 'low', SSD, '/data')
    assert (given['storage_class'], given['source'], given['confidence']) == ('hdd', 'override', 'high')
    assert given['reasons'][0].startswith('override flush_neighbors_storage_class=hdd wins over the detected ssd')
    probed = fnr.storage_decision(None, 'low', dict(SSD, probe=dict(storage_class='ssd')), '/data')
    assert (probed['storage_class'], probed['source'], probed['devices'], probed['datadir']) == (
        'ssd', 'sysfs+probe', ['sda'], '/data')
    unsure = fnr.storage_decision(None, 'high', dict(SSD, confidence='low'), '/data')
    assert (unsure['storage_class'], unsure['source'], unsure['confidence']) == ('unknown', 'none', 'low')
    assert 'detected ssd with low confidence' in unsure['reasons'][0]


def test_class_settings_follow_the_maps_and_the_io_profile():
    inputs = dict(flush_neighbors=dict(ssd=0, hdd=None), io_profile=True, io_capacity=dict(ssd=2000, hdd=200),
                  io_capacity_max=dict(ssd=None, hdd=2000))
    assert fnr.class_settings('ssd', inputs) == dict(innodb_flush_neighbors=0, innodb_io_capacity=2000)
    assert fnr.class_settings('hdd', inputs) == dict(innodb_io_capacity=200, innodb_io_capacity_max=2000)
    assert fnr.class_settings('hdd', dict(inputs, io_profile=False)) == {}
    assert fnr.class_settings('unknown', inputs) == {}


def test_runtime_order_raises_the_maximum_first_only_when_the_capacity_goes_above_it():
    settings = dict(innodb_flush_neighbors=0, innodb_io_capacity=3000, innodb_io_capacity_max=6000)
    assert fnr.runtime_order(settings, '2000') == [
        {'innodb_flush_neighbors': 0}, {'innodb_io_capacity_max': 6000}, {'innodb_io_capacity': 3000}]
    assert fnr.runtime_order(settings, '4000') == [
        {'innodb_flush_neighbors': 0}, {'innodb_io_capacity': 3000}, {'innodb_io_capacity_max': 6000}]
    assert fnr.runtime_order(dict(innodb_io_capacity=3000), 'n/a') == [{'innodb_io_capacity': 3000}]
