# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of dbfleet.innodb.cluster_drain: the collection's one login path (plugin_utils/login.py)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.plugin_utils.login import LoginActionModule as ActionModule

__all__ = ['ActionModule']
