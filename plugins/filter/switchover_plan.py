# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.switchover_plan: the checks and steps of an asynchronous replication switchover
(documentation: switchover_plan.yml; logic: module_utils/replication/switchover_plan.py)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import switchover_plan as _plan


def switchover_plan(members, primary, candidate=None, endpoint=None, max_lag=60, order=None, hosts=None, password_set=True,
                    haproxy=None):
    """The switchover of primary to candidate (None: chosen) over members' topology facts; see switchover_plan.yml."""
    return _plan.plan(primary, members, candidate or None, endpoint, int(max_lag), order, hosts, bool(password_set),
                      haproxy)


def switchover_stopped(switch, stage, failure, restored=None, endpoint_failed=None):
    """The message that stops the run when a switchover failed; see switchover_stopped.yml."""
    return _plan.stopped(switch, stage, failure, restored, endpoint_failed)


class FilterModule(object):

    def filters(self):
        return {'switchover_plan': switchover_plan, 'switchover_stopped': switchover_stopped}
