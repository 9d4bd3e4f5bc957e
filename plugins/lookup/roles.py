# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r'''
---
name: roles
short_description: The roles with a desired state, from the collection's role registry
version_added: 1.0.0
description:
  - Reads the role registry (C(REGISTRY) in C(plugins/module_utils/roles/desired.py)), so the playbooks take their
    role lists from it and a new role is applied, audited and restarted for without editing them.
  - Without a term, every role's name, sorted (the choices of C(site_roles), C(verify_desired_from),
    C(rolling_restart_roles)).
  - V(site), the roles C(playbooks/site.yml) applies and C(playbooks/verify.yml) audits by default, in the
    registry's order (a role whose record says C(site=False), such as C(myrocks), only when asked for).
  - V(every_host), the roles of O(selected) (default V(site)) that apply to every host of the play, in the
    registry's order.
  - V(own_hosts), the roles of O(selected) that apply to hosts of their own, each as C({name, hosts}) with the
    host pattern from the variable C(site_<role>_hosts) when set, else the record's group.
  - V(restart), the roles of V(every_host) that may restart a server (C(playbooks/rolling_restart.yml)'s default).
  - V(role_hosts), one dict, role to the inventory hosts it applies to, for each role of O(selected) with hosts of
    its own (C(verify_fleet)'s C(role_hosts)).
  - V(for_host), the roles of O(selected) that apply to the host O(host) - every V(every_host) role, and each role
    with hosts of its own whose hosts hold it (C(playbooks/verify.yml), per host); V(own_for_host) only the latter
    (C(playbooks/site.yml)'s second play).
  - A role's host pattern is the variable C(<prefix>_<role>_hosts) when set (O(prefix)), else C(site_<role>_hosts),
    else its record's group. A group or host name is looked up directly (a name that is neither matches no host,
    without a warning); anything else is an inventory pattern.
options:
  _terms:
    description:
      - What to list (none, or one of V(site), V(every_host), V(own_hosts), V(restart), V(role_hosts), V(for_host),
        V(own_for_host)).
    type: list
    elements: str
  selected:
    description: The roles chosen (C(site_roles), C(verify_desired_from)); default the V(site) roles. Unknown names fail.
    type: list
    elements: str
  prefix:
    description:
      - Whose host pattern variables are read first (C(verify) reads C(verify_<role>_hosts), then C(site_<role>_hosts)).
    type: str
    default: site
  host:
    description: The inventory host of V(for_host) and V(own_for_host).
    type: str
author:
  - dbfleet maintainers (@dbfleet)
'''

EXAMPLES = r'''
- name: Apply every role of the site to this host
  ansible.builtin.include_role:
    name: "dbfleet.innodb.{{ role_name_item }}"
  loop: "{{ query('dbfleet.innodb.roles', 'every_host', selected=site_roles | default(none)) }}"
  loop_control:
    loop_var: role_name_item
'''

RETURN = r'''
_raw:
  description: Role names, or for V(own_hosts) dicts C({name, hosts}).
  type: list
  elements: raw
'''

import re

from ansible.errors import AnsibleLookupError
from ansible.plugins.loader import lookup_loader
from ansible.plugins.lookup import LookupBase

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired

WHAT = ('site', 'every_host', 'own_hosts', 'restart', 'role_hosts', 'for_host', 'own_for_host')
_NAME_RE = re.compile(r'^[A-Za-z0-9_.-]+$')


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        if not terms:
            return list(desired.ROLES)
        what = terms[0]
        if len(terms) > 1 or what not in WHAT:
            raise AnsibleLookupError('dbfleet.innodb.roles: the term is one of %s; got %s'
                                     % (', '.join(WHAT), ', '.join(str(t) for t in terms)))
        if what == 'site':
            return [r.name for r in desired.REGISTRY if r.site]
        selected = self.get_option('selected')
        if selected is None:
            selected = [r.name for r in desired.REGISTRY if r.site]
        try:
            selected = desired.check_roles(selected, 'site_roles')
        except ValueError as e:
            raise AnsibleLookupError(str(e))
        records = [r for r in desired.REGISTRY if r.name in selected]
        every = [r for r in records if not r.hosts]
        own = [r for r in records if r.hosts]
        if what == 'own_hosts':
            return [dict(name=r.name, hosts=self._pattern(r, variables)) for r in own]
        if what == 'restart':
            return [r.name for r in every if r.restarts]
        if what == 'role_hosts':
            return [dict((r.name, self._hosts(self._pattern(r, variables), variables)) for r in own)]
        if what in ('for_host', 'own_for_host'):
            host = self.get_option('host')
            return [r.name for r in (records if what == 'for_host' else own)
                    if not r.hosts or host in self._hosts(self._pattern(r, variables), variables)]
        return [r.name for r in every]

    def _pattern(self, record, variables):
        """The role's host pattern: <prefix>_<role>_hosts, else site_<role>_hosts, else the record's group."""
        for name in ('%s_%s_hosts' % (self.get_option('prefix'), record.name), 'site_%s_hosts' % record.name):
            if name in variables:
                return self._templar.template(variables[name])
        return record.hosts

    def _hosts(self, pattern, variables):
        """The inventory hosts of a pattern (or a list of them)."""
        out = []
        for one in (pattern if isinstance(pattern, list) else [pattern]):
            one = str(one)
            groups = variables.get('groups') or {}
            if one in groups:
                found = list(groups[one])
            elif one in (variables.get('hostvars') or {}):
                found = [one]
            elif _NAME_RE.match(one):
                found = []
            else:
                found = lookup_loader.get('ansible.builtin.inventory_hostnames', loader=self._loader,
                                          templar=self._templar).run([one], variables)
            out.extend(h for h in found if h not in out)
        return out
