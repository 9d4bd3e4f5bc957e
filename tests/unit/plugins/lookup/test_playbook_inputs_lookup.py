"""A playbook's inputs as the playbooks read them (lookup dbfleet.innodb.playbook_inputs)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleLookupError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

try:
    from ansible.template import trust_as_template
except ImportError:     # ansible-core before 2.19: every string is a template
    def trust_as_template(value):
        return value

from ansible_collections.dbfleet.innodb.plugins.lookup.playbook_inputs import LookupModule


def run(terms, variables):
    loader = DataLoader()
    lookup = LookupModule(loader=loader, templar=Templar(loader=loader, variables=variables))
    lookup.set_options = lambda **_kw: None
    return lookup.run(terms, variables)


def test_the_inputs_templated_checked_and_defaulted():
    # A variable the play holds as a template (inventory, extra vars) is templated before it is checked.
    variables = dict(drop_tables_tables=['shop.orders_2019'], drop_tables_window='02:00-05:00', two=2,
                     drop_tables_retries=trust_as_template('{{ two + 3 }}'), inventory_hostname='db1')
    [inputs] = run(['drop_tables'], variables)
    assert inputs['retries'] == 5 and inputs['lock_wait_timeout'] == 2 and inputs['tables'] == ['shop.orders_2019']


def test_bad_inputs_fail_in_one_error():
    with pytest.raises(AnsibleLookupError) as e:
        run(['convert_tables'], dict(convert_tables_tables=['shop.a'], convert_tables_window='02:00-05:00',
                                     convert_tables_lock_wait_timeout='0', convert_tables_replica_timeout=0))
    text = str(e.value)
    assert 'playbooks/convert_tables.yml: bad input, nothing was run: ' in text
    assert 'convert_tables_lock_wait_timeout=0 is out of range 1-3600' in text
    assert 'convert_tables_replica_timeout=0 is out of range 1 or more' in text


def test_an_unknown_playbook_is_named():
    with pytest.raises(AnsibleLookupError, match=r"'drop_table' is not a playbook with inputs \(ahi_advisor, "
                                                 r"convert_tables, drop_tables, drop_tables_finish_staged, prerequisites, "
                                                 r"rolling_restart, settings, site, verify\)"):
        run(['drop_table'], {})


def test_an_old_variable_name_works_with_a_deprecation_naming_old_and_new(monkeypatch):
    from ansible_collections.dbfleet.innodb.plugins.lookup import playbook_inputs as lookup_module
    said = []
    monkeypatch.setattr(lookup_module.display, 'deprecated', lambda msg, **kw: said.append((msg, kw)))
    (inputs,) = run(['drop_tables'], dict(drop_tables=['shop.orders_2019'], drop_window='02:00-05:00'))
    assert inputs['tables'] == ['shop.orders_2019'] and inputs['window'] == '02:00-05:00'
    assert [message for message, _kw in said] == [
        'drop_tables is the old name of drop_tables_tables (playbooks/drop_tables.yml): use drop_tables_tables',
        'drop_window is the old name of drop_tables_window (playbooks/drop_tables.yml): use drop_tables_window']
    assert all(kw == dict(version='2.0.0', collection_name='dbfleet.innodb') for _message, kw in said)
