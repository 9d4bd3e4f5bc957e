# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one login action (plugins/plugin_utils/login.py): the action of dbfleet.innodb.login, and of every module whose
action does nothing more - meta/runtime.yml names it their action plugin
(plugin_routing.modules.<module>.action_plugin: dbfleet.innodb.login). A module whose action does more keeps a file of
its own (desired_settings, verify)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.plugin_utils.login import LoginActionModule as ActionModule

__all__ = ['ActionModule']
