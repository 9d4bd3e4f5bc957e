"""The role registry as the playbooks read it (lookup dbfleet.innodb.roles)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleLookupError
from ansible.template import Templar
from ansible.parsing.dataloader import DataLoader

from ansible_collections.dbfleet.innodb.plugins.lookup.roles import LookupModule
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired

GROUPS = {'all': ['db1', 'db2', 'db3'], 'memcached': ['db2'], 'ungrouped': []}
# The registry these tests read: the roles of the first release, so that a role added later changes no line here.
KNOWN = ('flush_neighbors', 'adaptive_hash', 'memcached', 'myrocks', 'settings')


@pytest.fixture(autouse=True)
def known_roles(monkeypatch):
    registry = tuple(r for r in desired.REGISTRY if r.name in KNOWN)
    monkeypatch.setattr(desired, 'REGISTRY', registry)
    monkeypatch.setattr(desired, 'RECORDS', dict((r.name, r) for r in registry))
    monkeypatch.setattr(desired, 'ROLES', tuple(sorted(r.name for r in registry)))


def test_the_lookup_reads_the_registry(monkeypatch):
    monkeypatch.undo()
    assert run([]) == list(desired.ROLES) and run(['site']) == [r.name for r in desired.REGISTRY if r.site]


def run(terms, variables=None, **kwargs):
    loader = DataLoader()
    variables = dict(groups=GROUPS, hostvars=dict((h, {}) for h in GROUPS['all']), **(variables or {}))
    lookup = LookupModule(loader=loader, templar=Templar(loader=loader, variables=variables))
    # The options as Ansible sets them from the documentation's defaults and the keywords.
    options = dict(dict(selected=None, prefix='site', host=None), **kwargs)
    lookup.set_options = lambda **_kw: None
    lookup.get_option = options.__getitem__
    return lookup.run(terms, variables, **kwargs)


def test_every_role_and_the_site_roles():
    assert run([]) == ['adaptive_hash', 'flush_neighbors', 'memcached', 'myrocks', 'settings']
    assert run(['site']) == ['flush_neighbors', 'adaptive_hash', 'memcached']   # myrocks and settings are opt-in
    assert run(['every_host']) == ['flush_neighbors', 'adaptive_hash']
    assert run(['restart']) == ['adaptive_hash']
    assert run(['restart'], selected=list(KNOWN)) == ['adaptive_hash', 'myrocks', 'settings']
    assert run(['every_host'], selected=['myrocks', 'flush_neighbors']) == ['flush_neighbors', 'myrocks']


def test_roles_with_hosts_of_their_own():
    assert run(['own_hosts']) == [dict(name='memcached', hosts='memcached')]
    assert run(['own_hosts'], dict(site_memcached_hosts=['db3'])) == [dict(name='memcached', hosts=['db3'])]
    assert run(['role_hosts']) == [dict(memcached=['db2'])]
    assert run(['role_hosts'], dict(verify_memcached_hosts='db1', site_memcached_hosts='db3'), prefix='verify') \
        == [dict(memcached=['db1'])]
    assert run(['role_hosts'], dict(verify_memcached_hosts='nosuchgroup'), prefix='verify') == [dict(memcached=[])]
    assert run(['for_host'], host='db2') == ['flush_neighbors', 'adaptive_hash', 'memcached']
    assert run(['for_host'], host='db1') == ['flush_neighbors', 'adaptive_hash']
    assert run(['for_host'], host='db1', selected=['memcached']) == []
    assert run(['own_for_host'], host='db2') == ['memcached']
    assert run(['own_for_host'], dict(site_memcached_hosts=['db3', 'db1']), host='db1') == ['memcached']
    assert run(['own_for_host'], host='db1') == []


def test_bad_names_fail_naming_them():
    with pytest.raises(AnsibleLookupError, match="site_roles: 'myrock' is not a role with a desired state"):
        run(['every_host'], selected=['myrock'])
    with pytest.raises(AnsibleLookupError, match='the term is one of'):
        run(['everything'])
