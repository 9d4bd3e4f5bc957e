# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a guarded change's settings reach (guarded/scope.py): a single server, a Galera node, a Group Replication
member."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import engine as guarded
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded import scope as g

GALERA_VARS = dict(wsrep_on='ON', wsrep_provider='/usr/lib/galera/libgalera_smm.so', version='10.11.6-MariaDB')
GR_VARS = dict(group_replication_group_name='aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
               group_replication_single_primary_mode='ON', version='8.0.33')


# ---------------------------------------------------------------- scope_for
def test_galera_node_is_a_cluster_scope_in_total_order_isolation():
    scope = g.scope_for(None, GALERA_VARS)
    assert isinstance(scope, g.ClusterScope) and scope.name == 'galera'
    assert scope.ddl_reaches_members is True and scope.followed_result == 'dropped_by_cluster'
    # the drop's own session is TOI whatever the global method (RSU is never used)
    assert scope.session_sql == ("SET SESSION wsrep_OSU_method = 'TOI'",)


def test_group_replication_member_is_a_cluster_scope_without_session_settings():
    scope = g.scope_for(None, dict((k.upper(), v) for k, v in GR_VARS.items()))
    assert isinstance(scope, g.ClusterScope) and scope.name == 'group_replication' and scope.session_sql == ()


@pytest.mark.parametrize('variables', [
    dict(version='8.0.33'),
    dict(wsrep_on='OFF', wsrep_provider='/usr/lib/galera/libgalera_smm.so'),
    dict(wsrep_on='ON', wsrep_provider='none'),
    dict(group_replication_group_name='', group_replication_single_primary_mode='ON'),
])
def test_other_servers_keep_the_server_scope(variables):
    scope = g.scope_for(None, variables)
    assert not isinstance(scope, g.ClusterScope) and scope.ddl_reaches_members is False
    assert scope.followed_result == 'dropped_by_replication' and scope.session_sql == ()


def test_one_scope_for_a_single_server():
    scope = g.scope_for(None, {})
    assert isinstance(scope, g.ServerScope)
    change = guarded.GuardedChange({})
    change.conn = 'c'
    assert scope.members(change) == ['c'] and scope.members(change, 'other') == ['other']
