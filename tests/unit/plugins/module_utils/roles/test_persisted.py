"""What every role does with a persisted value of a setting it owns (module_utils/roles/persisted.py through desired.for_role)."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired, persisted

from test_desired import facts as role_facts
from test_settings import server


def run(role, inputs, facts, found=None):
    def detect(_datadir, _probe):
        return found or dict(storage_class='ssd', confidence='high', reasons=[])
    return desired.for_role(role, inputs, facts, detect)


def settings_state(persisted_values, values_map, **inputs):
    facts = server(running=dict(innodb_io_capacity=200), extra=dict(innodb_old_blocks_time=dict(value='1000')))
    facts['persisted'], facts['persisted_problem'] = dict(persisted_values), None
    return run('settings', dict(inputs, settings_values=values_map), facts)


def test_every_role_with_a_desired_state_has_the_input_with_reset_by_default():
    for role in desired.ROLES:
        assert desired.INPUTS[role][persisted.input_name(role)] == 'reset', role


def test_a_differing_persisted_value_is_reset_so_the_drop_in_decides():
    out = settings_state({'innodb_io_capacity': '300', 'innodb_old_blocks_time': '1000'},
                         dict(innodb_io_capacity=1500, innodb_old_blocks_time=2000))
    assert out['persisted_reset'] == ['innodb_io_capacity', 'innodb_old_blocks_time']
    assert any(n.startswith('innodb_io_capacity: persisted as 300') and 'RESET PERSIST innodb_io_capacity' in n
               for n in out['notes'])
    # The running value still goes to the map at runtime; the drop-in holds it for the next start.
    assert {'innodb_io_capacity': 1500} in out['runtime']
    assert 'innodb_io_capacity = 1500' in out['option_file_text']


def test_a_persisted_value_equal_in_meaning_is_left_alone():
    out = settings_state({'innodb_io_capacity': '1500', 'innodb_buffer_pool_size': '134217728'},
                         dict(innodb_io_capacity=1500, innodb_buffer_pool_size='128M'))
    assert out['persisted_reset'] == []
    assert not [n for n in out['notes'] if 'persisted' in n]


def test_with_persisted_settings_chosen_set_persist_writes_over_it_and_nothing_is_reset():
    out = settings_state({'innodb_io_capacity': '300', 'innodb_sort_buffer_size': '1048576'},
                         dict(innodb_io_capacity=1500, innodb_sort_buffer_size='2M'), settings_persist=True)
    assert out['persisted_reset'] == []
    assert {'innodb_io_capacity': 1500} in out['runtime'] and out['runtime_persist'] is True
    # A read-only setting goes to SET PERSIST_ONLY.
    assert out['persist_only'] == {'innodb_sort_buffer_size': 2 << 20}
    assert any('SET PERSIST writes 1500 over it' in n for n in out['notes'])


def test_refuse_names_each_setting_and_its_persisted_value_before_anything_changes():
    with pytest.raises(desired.InputError) as info:
        settings_state({'innodb_io_capacity': '300', 'innodb_old_blocks_time': '1000'},
                       dict(innodb_io_capacity=1500, innodb_old_blocks_time=2000), settings_persisted='refuse')
    assert len(info.value.messages) == 2
    assert info.value.messages[0].startswith('innodb_io_capacity is persisted as 300 in performance_schema.'
                                             'persisted_variables (mysqld-auto.cnf), the desired value is 1500')
    assert 'settings_persisted: refuse' in info.value.messages[1] and 'as 1000' in info.value.messages[1]


def test_refuse_is_no_refusal_when_the_persisted_value_is_the_desired_one():
    out = settings_state({'innodb_io_capacity': '1500'}, dict(innodb_io_capacity=1500), settings_persisted='refuse')
    assert out['persisted_reset'] == []


def test_a_bad_mode_is_named():
    with pytest.raises(desired.InputError) as info:
        settings_state({}, dict(innodb_io_capacity=1500), settings_persisted='keep')
    assert info.value.messages == ["settings_persisted must be one of reset, refuse; got 'keep'"]


def test_without_persisted_facts_nothing_is_decided():
    """verify and verify_fleet work desired states out without the persisted values: their own audit reports them."""
    facts = server()
    out = run('settings', dict(settings_values=dict(innodb_io_capacity=1500), settings_persisted='refuse'), facts)
    assert out['persisted_reset'] == []


def test_flush_neighbors_persisted_value_is_reset_with_the_drop_in_and_persisted_over_with_set_persist():
    facts = role_facts()
    facts['persisted'] = {'innodb_flush_neighbors': '1'}
    out = run('flush_neighbors', {}, facts)
    assert out['settings']['innodb_flush_neighbors'] == 0
    assert out['persisted_reset'] == ['innodb_flush_neighbors']
    out = run('flush_neighbors', dict(flush_neighbors_persist='both'), facts)
    assert out['persisted_reset'] == []
    with pytest.raises(desired.InputError) as info:
        run('flush_neighbors', dict(flush_neighbors_persisted='refuse'), facts)
    assert 'innodb_flush_neighbors is persisted as 1' in str(info.value)


def test_adaptive_hash_boolean_compared_by_meaning():
    facts = role_facts()
    facts['persisted'] = {'innodb_adaptive_hash_index': 'OFF'}
    out = run('adaptive_hash', dict(adaptive_hash_enabled=False), facts)
    assert out['persisted_reset'] == []
    out = run('adaptive_hash', dict(adaptive_hash_enabled=True), facts)
    assert out['persisted_reset'] == ['innodb_adaptive_hash_index']


def test_for_roles_prefixes_a_refusal_with_its_role():
    facts = role_facts()
    facts['persisted'] = {'innodb_flush_neighbors': '1'}
    with pytest.raises(desired.InputError) as info:
        desired.for_roles(['flush_neighbors'], dict(flush_neighbors_persisted='refuse'), facts,
                          lambda datadir, probe: dict(storage_class='ssd', confidence='high', reasons=[]))
    assert info.value.by_role['flush_neighbors'][0].startswith('innodb_flush_neighbors is persisted as 1')
