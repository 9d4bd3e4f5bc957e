# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Group Replication read into the cluster shape; rows recorded from the lab's group (gr1 gr2 gr3, MySQL 8.0.33). The
switchover is test_cluster_switchover.py's."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters

GROUP = 'd6df88c0-0f29-5386-ac4b-a3cbf58450b1'
GR1, GR2, GR3 = ('5c967574-e8cf-11f1-99bf-02fc00000001', '5caa445d-e8cf-11f1-89fb-02fc00000001',
                 '5ce3f771-e8cf-11f1-b255-02fc00000001')


def variables(uuid, **extra):
    return dict(dict(group_replication_group_name=GROUP, group_replication_single_primary_mode='ON',
                     group_replication_start_on_boot='ON', server_uuid=uuid), **extra)


def member(uuid, port, state='ONLINE', role='SECONDARY'):
    # SELECT ... FROM performance_schema.replication_group_members, as PyMySQL's DictCursor gives it
    return dict(MEMBER_ID=uuid, MEMBER_HOST='127.0.0.1', MEMBER_PORT=port, MEMBER_STATE=state, MEMBER_ROLE=role,
                MEMBER_VERSION='8.0.33')


def stats(uuid, in_queue=0, applier=0):
    return dict(MEMBER_ID=uuid, COUNT_TRANSACTIONS_IN_QUEUE=in_queue, COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE=applier)


HEALTHY = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352), member(GR3, 37353)]
STATS = [stats(GR1), stats(GR2), stats(GR3)]


def test_the_primary_of_a_healthy_group():
    c = clusters.group_replication_from(variables(GR1), HEALTHY, STATS)
    assert c['kind'] == 'group_replication' and c['name'] == GROUP and c['size'] == 3
    assert c['state'] == 'ONLINE' and c['role'] == 'PRIMARY' and c['ready'] is True and c['quorum'] is True
    assert c['queue'] == 0 and c['reachable'] == 3 and c['single_primary'] is True
    assert c['primary'] == dict(id=GR1, address='127.0.0.1:37351')
    assert c['member'] == dict(id=GR1, name=None, address='127.0.0.1:37351')
    assert [(m['address'], m['state'], m['role']) for m in c['members']] == [
        ('127.0.0.1:37351', 'ONLINE', 'PRIMARY'), ('127.0.0.1:37352', 'ONLINE', 'SECONDARY'),
        ('127.0.0.1:37353', 'ONLINE', 'SECONDARY')]
    assert clusters.member_problems(c) == []
    assert clusters.describe(c) == 'Group Replication group %s' % GROUP


def test_a_secondary_knows_the_primary():
    c = clusters.group_replication_from(variables(GR2), HEALTHY, STATS)
    assert c['role'] == 'SECONDARY' and c['primary']['id'] == GR1 and c['ready'] is True


def test_a_member_that_left_the_group_lists_only_itself():
    # gr3 after STOP GROUP_REPLICATION: one row, its own, OFFLINE with an empty role
    c = clusters.group_replication_from(variables(GR3), [member(GR3, 37353, 'OFFLINE', '')],
                                        [stats(GR3)])
    assert c['state'] == 'OFFLINE' and c['role'] is None and c['ready'] is False and c['quorum'] is False
    assert c['primary'] is None
    assert clusters.member_problems(c) == ['state OFFLINE, not ONLINE: not in the group (Group Replication does not run here)']


def test_a_recovering_member_is_not_ready_but_counts_for_the_majority():
    rows = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352, 'RECOVERING'), member(GR3, 37353)]
    c = clusters.group_replication_from(variables(GR2), rows, STATS)
    assert c['state'] == 'RECOVERING' and c['ready'] is False and c['quorum'] is True
    assert clusters.member_problems(c) == ['state RECOVERING, not ONLINE']
    primary = clusters.group_replication_from(variables(GR1), rows, STATS)
    assert primary['ready'] is True


def test_two_unreachable_members_of_three_leave_no_majority():
    # what the survivor lists after kill -9 of two members: it still calls itself ONLINE PRIMARY
    rows = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352, 'UNREACHABLE'), member(GR3, 37353, 'UNREACHABLE')]
    c = clusters.group_replication_from(variables(GR1), rows, STATS)
    assert c['state'] == 'ONLINE' and c['reachable'] == 1 and c['quorum'] is False and c['ready'] is False
    assert clusters.member_problems(c) == ['the group has no majority (1 of 3 members reachable)']


def test_one_unreachable_member_of_three_keeps_the_majority():
    rows = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352), member(GR3, 37353, 'UNREACHABLE')]
    c = clusters.group_replication_from(variables(GR1), rows, STATS)
    assert c['quorum'] is True and c['ready'] is True and c['reachable'] == 2


def test_the_queue_is_certification_plus_applier():
    c = clusters.group_replication_from(variables(GR2), HEALTHY, [stats(GR1), stats(GR2, 2, 7), stats(GR3, 0, 40)])
    assert (c['certification_queue'], c['applier_queue'], c['queue']) == (2, 7, 9)
    assert clusters.member_problems(c) == ['9 transaction(s) received and not yet applied (limit 0)']
    assert clusters.member_problems(c, max_queue=None) == []


@pytest.mark.parametrize('values', [{}, dict(group_replication_group_name=''), dict(server_uuid=GR1)])
def test_not_in_a_group(values):
    assert clusters.group_replication_from(values, HEALTHY, STATS) is None


def test_multi_primary_has_no_single_primary():
    rows = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352, role='PRIMARY'), member(GR3, 37353, role='PRIMARY')]
    c = clusters.group_replication_from(variables(GR1, group_replication_single_primary_mode='OFF'), rows, STATS)
    assert c['single_primary'] is False and c['primary'] is None and c['role'] == 'PRIMARY'


def test_group_replication_channels_are_not_async_sources():
    assert clusters.is_group_replication_channel('group_replication_applier')
    assert clusters.is_group_replication_channel('group_replication_recovery')
    assert not clusters.is_group_replication_channel('')
    assert not clusters.is_group_replication_channel('from_db1')


def test_stop_problems_on_a_group():
    ok = dict((h, clusters.group_replication_from(variables(u), HEALTHY, STATS)) for h, u in
              (('gr1', GR1), ('gr2', GR2), ('gr3', GR3)))
    assert clusters.stop_problems(ok, 'gr2') == []
    rows = [member(GR1, 37351, role='PRIMARY'), member(GR2, 37352), member(GR3, 37353, 'RECOVERING')]
    recovering = dict((h, clusters.group_replication_from(variables(u), rows, STATS)) for h, u in
                      (('gr1', GR1), ('gr2', GR2), ('gr3', GR3)))
    assert clusters.stop_problems(recovering, 'gr2') == ['gr3: state RECOVERING, not ONLINE']


class FakeConn:
    pass


def test_read_group_replication_uses_the_callables():
    seen = []

    def query(conn, sql):
        seen.append(sql)
        return HEALTHY if 'replication_group_members' in sql else STATS

    def global_variables(conn, names):
        assert 'group_replication_group_name' in names and 'server_uuid' in names
        return variables(GR3)

    c = clusters.read_group_replication(FakeConn(), query, global_variables)
    assert c['role'] == 'SECONDARY' and c['ready'] is True
    assert seen == [clusters.GR_MEMBERS_SQL, clusters.GR_STATS_SQL]
    assert clusters.read_cluster(FakeConn(), 'mysql', query, global_variables, None)['name'] == GROUP
    assert clusters.read_group_replication(FakeConn(), query, lambda c, n: {}) is None


def test_read_group_replication_keeps_a_read_error_and_fails_closed():
    def query(conn, sql):
        raise RuntimeError(1142, 'SELECT command denied to user')

    c = clusters.read_group_replication(FakeConn(), query, lambda conn, names: variables(GR1))
    assert c['ready'] is False and c['quorum'] is False
    assert 'SELECT command denied' in c['error']
    assert c['error'] in clusters.member_problems(c)
