# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.ahi_advice_table (documentation: ahi_advice_table.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.ahi_advisor import advice_table


def ahi_advice_table(results, hosts):
    """The AHI advisor's results as one table, a line per host; see ahi_advice_table.yml."""
    return advice_table(results, hosts)


class FilterModule(object):

    def filters(self):
        return {'ahi_advice_table': ahi_advice_table}
