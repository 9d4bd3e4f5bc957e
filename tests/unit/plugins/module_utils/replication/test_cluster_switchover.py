# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_switchover.py: the switchover of a single-primary Group Replication group, over the lab group's recorded rows."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import cluster_switchover
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.replication.test_clusters_group_replication import (
    GR1, GR2, GR3, GROUP, HEALTHY, STATS, member, variables)


def test_switchover_plan_from_the_primary():
    primary = clusters.group_replication_from(variables(GR1), HEALTHY, STATS)
    plan = cluster_switchover.switchover_plan(primary)
    assert plan['needed'] and plan['problems'] == [] and plan['target']['id'] == GR2
    assert cluster_switchover.switchover_plan(primary, candidates=['nobody', GR3])['target']['id'] == GR3
    # a candidate that is not an ONLINE secondary is passed over
    rows = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352), member(GR3, 37353, 'RECOVERING')]
    recovering = clusters.group_replication_from(variables(GR1), rows, STATS)
    assert cluster_switchover.switchover_plan(recovering, candidates=[GR3])['target']['id'] == GR2


def test_no_switchover_needed_on_a_secondary_multi_primary_or_galera():
    assert not cluster_switchover.switchover_plan(clusters.group_replication_from(variables(GR2), HEALTHY, STATS))['needed']
    multi = clusters.group_replication_from(variables(GR1, group_replication_single_primary_mode='OFF'), HEALTHY, STATS)
    assert not cluster_switchover.switchover_plan(multi)['needed']
    assert not cluster_switchover.switchover_plan(dict(kind='galera', role=None))['needed']
    assert not cluster_switchover.switchover_plan(None)['needed']


def test_no_switchover_without_an_online_member_or_a_majority():
    rows = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352, 'UNREACHABLE'), member(GR3, 37353, 'UNREACHABLE')]
    plan = cluster_switchover.switchover_plan(clusters.group_replication_from(variables(GR1), rows, STATS))
    assert plan['needed'] and plan['target'] is None
    assert 'the group has no majority' in plan['problems']
    assert any(p.startswith('no other member is ONLINE') for p in plan['problems'])


class FakeGroup:
    """Answers the reader's queries from a group whose primary moves when set_as_primary is called."""

    def __init__(self, me, primary=GR1, version='8.0.33'):
        self.me, self.primary, self.calls, self.version = me, primary, [], version

    def rows(self):
        return [member(u, p, role='PRIMARY' if u == self.primary else 'SECONDARY')
                for u, p in ((GR1, 37351), (GR2, 37352), (GR3, 37353))]

    def query(self, conn, sql, args=None):
        if sql == cluster_switchover.GR_SET_AS_PRIMARY_SQL:
            self.calls.append(args)
            self.primary = args[0]
            return [dict(result='Primary server switched to: %s' % args[0])]
        return self.rows() if 'replication_group_members' in sql else STATS

    def global_variables(self, conn, names):
        return variables(self.me, version=self.version, version_comment='MySQL Community Server - GPL')


def test_run_switchover_hands_the_role_over_and_checks_it():
    group = FakeGroup(GR1)
    result = cluster_switchover.run_switchover(None, group.query, group.global_variables, candidates=[GR3], expect_cluster=GROUP)
    assert not result['failed'] and result['changed'] and group.calls == [(GR3,)]
    assert result['old_primary'] == dict(id=GR1, address='127.0.0.1:37351')
    assert result['new_primary'] == dict(id=GR3, address='127.0.0.1:37353')
    assert result['cluster']['role'] == 'SECONDARY'


def test_run_switchover_check_mode_refusal_and_no_need():
    group = FakeGroup(GR1)
    result = cluster_switchover.run_switchover(None, group.query, group.global_variables, check_mode=True)
    assert result['changed'] and not result['failed'] and group.calls == [] and result['new_primary']['id'] == GR2
    result = cluster_switchover.run_switchover(None, group.query, group.global_variables, allowed=False)
    assert result['failed'] and not result['changed'] and group.calls == []
    assert result['msg'].startswith('127.0.0.1:37351 is the PRIMARY of Group Replication group %s' % GROUP)
    assert 'restart_cluster_switchover: true' in result['msg']
    result = cluster_switchover.run_switchover(None, group.query, group.global_variables, expect_cluster='another-group')
    assert result['failed'] and 'not a member of group another-group' in result['msg'] and group.calls == []
    secondary = FakeGroup(GR2)
    result = cluster_switchover.run_switchover(None, secondary.query, secondary.global_variables, allowed=False)
    assert not result['failed'] and not result['changed'] and not result['needed']


def test_run_switchover_fails_when_the_role_did_not_move():
    group = FakeGroup(GR1)

    def stuck(conn, sql, args=None):
        if sql == cluster_switchover.GR_SET_AS_PRIMARY_SQL:
            return [dict(result='')]
        return group.query(conn, sql, args)

    result = cluster_switchover.run_switchover(None, stuck, group.global_variables)
    assert result['failed'] and 'this member is PRIMARY' in result['msg']


def test_run_switchover_needs_set_as_primary_from_8_0_13():
    group = FakeGroup(GR1, version='8.0.12')
    result = cluster_switchover.run_switchover(None, group.query, group.global_variables)
    assert result['failed'] and group.calls == []
    assert 'group_replication_set_as_primary() needs MySQL 8.0.13 or later on every member, this one runs mysql 8.0.12' \
        in result['msg']
