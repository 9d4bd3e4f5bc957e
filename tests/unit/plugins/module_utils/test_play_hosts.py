# -*- coding: utf-8 -*-
"""play_hosts.py: the play's hosts' variables read from hostvars (filters host_values, drop_blockers, restart_*)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.filter.drop_blockers import drop_blockers
from ansible_collections.dbfleet.innodb.plugins.filter.host_values import host_values

HOSTVARS = {'db1': {'__drop_part': 'drop', '__drop_preflight': {'changed': True}},
            'db2': {'__drop_part': 'follow', '__drop_replica_ready': True},
            'db3': {'__drop_part': 'follow'},
            'db4': {'__drop_part': 'drop', '__drop_failed': 'lock wait timeout'},
            'db5': {}}


def test_host_values_in_host_order_with_the_default_for_a_host_without_it():
    assert list(host_values(HOSTVARS, ['db3', 'db1', 'nohost'], '__drop_preflight', {}).items()) == [
        ('db3', {}), ('db1', {'changed': True}), ('nohost', {})]
    assert host_values(HOSTVARS, ['db5'], '__drop_part') == {'db5': None}


def test_drop_blockers_name_the_replicas_not_ready_and_the_primaries_that_failed():
    assert drop_blockers(HOSTVARS, ['db1', 'db2', 'db3', 'db4', 'db5']) == dict(not_ready=['db3'], failed=['db4'])
    assert drop_blockers(HOSTVARS, ['db1', 'db2']) == dict(not_ready=[], failed=[])
