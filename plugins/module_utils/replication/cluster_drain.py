# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The drain of a cluster member before its stop (module dbfleet.innodb.cluster_drain; role restart,
restart_cluster_drain; docs/topology.md "Drain"): the methods (DRAIN_METHODS: one GLOBAL variable each, its value
while drained and the one that serves), why a method cannot drain a server (drain_problems(), pure), and the run that
drains the server and waits, or puts back the value it served with (run_drain()).
"""

from __future__ import annotations

import time

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import clusters
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import cluster_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.values import as_int


# How a member is taken out of its clients' view before its stop and put back after its gate (role restart,
# restart_cluster_drain; docs/topology.md "Drain"). Each method is one GLOBAL variable (flavors.VARIABLES says
# which flavor/version has it), its value while drained and the value that serves:
# - reject_queries (MariaDB Galera): wsrep_reject_queries=ALL: every client query fails with error 1047 ("WSREP has
#   not yet prepared node for application use"), as clustercheck-style health checks do, so a load balancer
#   moves the node's clients away; the node stays in the cluster and keeps applying write-sets;
# - offline_mode (MySQL, Percona Server): offline_mode=ON: sessions of users without CONNECTION_ADMIN / SUPER are
#   disconnected, new ones refused with error 3032 (ER_SERVER_OFFLINE_MODE); replication threads keep running.
DRAIN_METHODS = {
    'reject_queries': dict(variable='wsrep_reject_queries', drained='ALL', serving='NONE', galera=True),
    'offline_mode': dict(variable='offline_mode', drained='ON', serving='OFF', galera=False),
}
DRAIN_STATES = ('drained', 'restored')
_BOOL_WORDS = {'1': 'ON', 'TRUE': 'ON', 'YES': 'ON', '0': 'OFF', 'FALSE': 'OFF', 'NO': 'OFF'}


def drain_value(value):
    """A drain variable's value as the server names it, upper case (1/0 of a boolean as ON/OFF)."""
    text = str(value if value is not None else '').strip().upper()
    return _BOOL_WORDS.get(text, text)


def drain_problems(method, identity, variables):
    """Why `method` cannot drain this server (empty list: it can). Pure.

    identity: server_identity.ServerIdentity of the server; variables: its GLOBAL variables ({lower-case name: value}), at least
    the method's variable and cluster_facts.GALERA_VARIABLES."""
    spec = DRAIN_METHODS.get(method)
    if spec is None:
        return ['unknown drain method %r (one of: %s)' % (method, ', '.join(sorted(DRAIN_METHODS)))]
    variables = clusters.lower_names(variables)
    name = spec['variable']
    where = '%s %s' % (flavors.display_name(identity.flavor), flavors.format_version(identity.version))
    if flavors.variable_facts(name, identity.flavor, identity.version) is None:
        spans = flavors.VARIABLES.get(name, [])
        needs = '; '.join('%s %s and later' % ('/'.join(flavors.display_name(f) for f in s.flavors),
                                               flavors.format_version(s.since)) for s in spans)
        return ['drain %s needs %s (%s); this server runs %s' % (method, name, needs or 'no known server', where)]
    if name not in variables:
        return ['drain %s needs %s, which this server (%s) does not list in SHOW GLOBAL VARIABLES' % (method, name, where)]
    if spec['galera'] and not clusters.galera_enabled(variables):
        return ['drain %s works on Galera nodes only: this server (%s) runs no Galera provider (wsrep_on=%s, '
                'wsrep_provider=%s)' % (method, where, variables.get('wsrep_on'), variables.get('wsrep_provider'))]
    return []


def run_drain(conn, query, execute, global_variables, global_status, method, state, restore_value=None, seconds=0,
              expect_cluster=None, check_mode=False, sleep=None):
    """The module cluster_drain: take the server out of its clients' view (state drained) and wait `seconds`, or put
    back the value it served with (state restored: restore_value, else the method's serving value).

    Returns the module result with ``failed`` (True: the caller fails the task with ``msg``). Nothing is changed
    when the server cannot be drained by the method or is not a member of expect_cluster."""
    spec = DRAIN_METHODS.get(method) or {}
    result = dict(failed=False, changed=False, method=method, state=state, variable=spec.get('variable'),
                  before=None, after=None, waited=0, clients_before=None, clients_after=None)
    if state not in DRAIN_STATES:
        result.update(failed=True, msg='state must be one of %s, got %r; nothing was changed' % (', '.join(DRAIN_STATES), state))
        return result
    names = tuple(server_identity.DETECT_VARIABLES) + cluster_facts.GALERA_VARIABLES + cluster_facts.GR_VARIABLES + ((spec['variable'],) if spec else ())
    variables = global_variables(conn, names)
    identity = server_identity.identity_from_variables(variables)
    problems = drain_problems(method, identity, variables)
    if not problems and expect_cluster:
        cluster = clusters.read_cluster(conn, identity.flavor, query, global_variables, global_status)
        if not cluster or cluster.get('name') != expect_cluster:
            where = clusters.describe(cluster) if cluster else 'no cluster member'
            problems.append('this server is %s, not a member of %s' % (where, expect_cluster))
    if problems:
        result.update(failed=True, msg='%s; nothing was changed' % '; '.join(problems))
        return result
    name = spec['variable']
    before = drain_value(variables.get(name))
    if state == 'drained':
        want = spec['drained']
    else:
        # The value read before the drain: a node its owner kept out of view before the run stays out.
        want = drain_value(restore_value) if restore_value not in (None, '') else spec['serving']
    result['before'] = before
    result['clients_before'] = _clients(conn, global_status)
    if before == want:
        result.update(after=before, clients_after=result['clients_before'],
                      msg='%s=%s already: nothing to change' % (name, before))
        return result
    result['changed'] = True
    if check_mode:
        result.update(after=want, msg='would set %s=%s (now %s)%s' % (
            name, want, before, ', then wait %d s for clients to move away' % seconds if state == 'drained' and seconds else ''))
        return result
    # The value is one of the method's own words (never user text): no quoting issue.
    execute(conn, 'SET GLOBAL %s = %%s' % name, (want,))
    after = drain_value(global_variables(conn, (name,)).get(name))
    result['after'] = after
    if after != want:
        result.update(failed=True, msg='SET GLOBAL %s=%s returned, but the server reports %s' % (name, want, after))
        return result
    if state == 'drained' and seconds > 0:
        started = time.monotonic()
        (sleep or time.sleep)(seconds)
        result['waited'] = round(time.monotonic() - started, 1)
    result['clients_after'] = _clients(conn, global_status)
    result['msg'] = 'set %s=%s (was %s)%s' % (name, after, before, ', waited %.1f s: %s client connection(s) left' % (
        result['waited'], result['clients_after']) if state == 'drained' and seconds > 0 else '')
    return result


def _clients(conn, global_status):
    """Client connections besides this one (Threads_connected - 1)."""
    value = as_int(global_status(conn, ('threads_connected',)).get('threads_connected'))
    return None if value is None else max(value - 1, 0)
