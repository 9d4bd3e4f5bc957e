# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.drop_blockers (documentation: drop_blockers.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.hosts import drop_blockers as _blockers


def drop_blockers(hostvars, run_hosts):
    """The replicas not ready and the primaries whose drop failed; see drop_blockers.yml."""
    return _blockers(hostvars, run_hosts)


class FilterModule(object):

    def filters(self):
        return {'drop_blockers': drop_blockers}
