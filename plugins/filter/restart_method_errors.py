# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter dbfleet.innodb.restart_method_errors (documentation: restart_method_errors.yml)."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.restart.method import restart_method_errors as _errors


def restart_method_errors(method, command=None, service_name=None):
    """The one check of the restart method (restart_method.restart_method_errors); see restart_method_errors.yml."""
    return _errors(method, command, service_name)


class FilterModule(object):

    def filters(self):
        return {'restart_method_errors': restart_method_errors}
