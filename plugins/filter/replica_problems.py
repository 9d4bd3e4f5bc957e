# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.replica_problems (documentation: replica_problems.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.hosts import replica_problems as _problems


def replica_problems(plan_hosts, run_hosts, check='sources', results=None, whole_topology=True):
    """The replicas that stop a guarded change over these hosts; see replica_problems.yml."""
    try:
        return _problems(plan_hosts, run_hosts, check, results=results, whole_topology=whole_topology)
    except ValueError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):

    def filters(self):
        return {'replica_problems': replica_problems}
