# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the play's hosts' variables from Ansible's hostvars (or a plain dict of dicts, in the unit tests), for the
filters that answer over a run's hosts instead of Jinja chains of extract / selectattr (filter host_values,
restart/steps.py, guarded/hosts.drop_blockers). Controller-side."""

from __future__ import annotations


def value(hostvars, host, name, default=None):
    """Variable name of host, default when the host or the variable is not there."""
    try:
        found = hostvars[host]
    except KeyError:
        return default
    return found[name] if name in found else default


def values(hostvars, hosts, name, default=None):
    """{host: its variable name, or default}, in the order of hosts."""
    return dict((host, value(hostvars, host, name, default)) for host in hosts)
