# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.ahi_advisor_table (documentation: ahi_advisor_table.yml); ahi_advice_table, its name before
1.1.0, is a deprecated redirect to it (meta/runtime.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.ahi_advisor import advice_table


def ahi_advisor_table(results, hosts):
    """The AHI advisor's results as one table, a line per host; see ahi_advisor_table.yml."""
    return advice_table(results, hosts)


class FilterModule(object):

    def filters(self):
        return {'ahi_advisor_table': ahi_advisor_table}
