# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switchover of a single-primary Group Replication group (module dbfleet.innodb.cluster_switchover): what a
switchover away from a member needs (switchover_plan(), pure: the member to hand the primary role to, or why none can
take it), and the run that refuses or hands the role over with group_replication_set_as_primary() and reads the group
again (run_switchover()). The group is read by replication/clusters.py.
"""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts


# The statement that hands the primary role of a single-primary group to another member (MySQL 8.0.13 and
# later; it returns once the new primary is elected, after the old primary's running transactions end).
GR_SET_AS_PRIMARY_SQL = 'SELECT group_replication_set_as_primary(%s) AS result'


def switchover_plan(cluster, candidates=()):
    """What a switchover away from this member needs (pure): dict(needed, target, problems).

    needed: this member is the primary of a single-primary Group Replication group now; target: the member
    (dict of ``members``) to hand the role to: the first of candidates (server_uuids, in order of preference)
    that is an ONLINE SECONDARY, else the first ONLINE SECONDARY in the group's listing; problems: why no
    switchover can be made (the group has no majority, no member is ONLINE to take it, the member is not ONLINE)."""
    out = dict(needed=False, target=None, problems=[])
    if not cluster or cluster.get('kind') != clusters.GROUP_REPLICATION:
        return out
    if not cluster.get('single_primary') or cluster.get('role') != clusters.GR_PRIMARY:
        return out
    out['needed'] = True
    if cluster.get('state') != clusters.GR_ONLINE:
        out['problems'].append('this member is %s, not ONLINE' % cluster.get('state'))
    if not cluster.get('quorum'):
        out['problems'].append('the group has no majority')
    own = (cluster.get('member') or {}).get('id')
    online = [m for m in cluster.get('members') or [] if m.get('state') == clusters.GR_ONLINE and m.get('id') != own
              and m.get('role') == clusters.GR_SECONDARY]
    by_id = dict((m['id'], m) for m in online)
    preferred = [by_id[c] for c in candidates or () if c in by_id]
    out['target'] = (preferred or online or [None])[0]
    if out['target'] is None:
        out['problems'].append('no other member is ONLINE to take the primary role (members: %s)' % ', '.join(
            '%s %s' % (m.get('address') or m.get('id'), m.get('state')) for m in cluster.get('members') or []))
    return out


def set_as_primary(conn, query, member_id):
    """Run group_replication_set_as_primary(member_id) (returns once the group elected it)."""
    return query(conn, GR_SET_AS_PRIMARY_SQL, (member_id,))


def _brief(member):
    return dict(id=member.get('id'), address=member.get('address')) if member else None


def run_switchover(conn, query, global_variables, allowed=True, candidates=(), expect_cluster=None, check_mode=False):
    """The module cluster_switchover: read the group, refuse or hand the primary role over, read it again.

    Returns the module result with ``failed`` (True: the caller fails the task with ``msg``)."""
    cluster = clusters.read_group_replication(conn, query, global_variables)
    result = dict(failed=False, changed=False, needed=False, old_primary=None, new_primary=None, cluster=cluster)
    identity = server_identity.identity_from_variables(global_variables(conn, server_identity.DETECT_VARIABLES))
    if expect_cluster and (not cluster or cluster.get('name') != expect_cluster):
        result.update(failed=True, msg='this server is %s, not a member of group %s: nothing was changed'
                      % ('a member of %s' % clusters.describe(cluster) if cluster else 'no Group Replication member', expect_cluster))
        return result
    plan = switchover_plan(cluster, candidates)
    if not plan['needed']:
        result['msg'] = 'not the primary of a single-primary group: no switchover needed'
        return result
    me = cluster['member']
    where = me.get('address') or me.get('id')
    result.update(needed=True, old_primary=_brief(me))
    if not allowed:
        result.update(failed=True, msg='%s is the PRIMARY of %s: it is restarted only after a switchover, which is not '
                      'allowed (restart_cluster_switchover: true allows it); nothing was changed' % (where, clusters.describe(cluster)))
        return result
    if not capability_facts.capability('group_replication_set_as_primary', identity.flavor, identity.version):
        plan['problems'].append('group_replication_set_as_primary() needs MySQL 8.0.13 or later on every member, this '
                                'one runs %s %s' % (identity.flavor, flavors.format_version(identity.version)))
    if plan['problems']:
        result.update(failed=True, msg='%s is the PRIMARY of %s and no switchover can be made: %s; nothing was changed'
                      % (where, clusters.describe(cluster), '; '.join(plan['problems'])))
        return result
    result.update(changed=True, new_primary=_brief(plan['target']))
    if check_mode:
        result['msg'] = 'would hand the primary role to %s' % plan['target'].get('address')
        return result
    set_as_primary(conn, query, plan['target']['id'])
    after = clusters.read_group_replication(conn, query, global_variables)
    result['cluster'] = after
    now = (after or {}).get('primary') or {}
    if (after or {}).get('role') == clusters.GR_PRIMARY or now.get('id') != plan['target']['id']:
        result.update(failed=True, msg='group_replication_set_as_primary(%s) returned, but the primary is now %s and '
                      'this member is %s' % (plan['target']['id'], now.get('address') or now.get('id'),
                                             (after or {}).get('role')))
        return result
    result['msg'] = 'handed the primary role to %s' % plan['target'].get('address')
    return result
