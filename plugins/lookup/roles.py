# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r'''
---
name: roles
short_description: The roles with a desired state, from the collection's role registry
version_added: 0.3.0
description:
  - Reads the role registry (C(REGISTRY) in C(plugins/module_utils/desired.py)), so the playbooks take their
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
options:
  _terms:
    description: What to list (none, or one of V(site), V(every_host), V(own_hosts), V(restart)).
    type: list
    elements: str
  selected:
    description: The roles chosen (C(site_roles)); default the V(site) roles. Unknown names fail.
    type: list
    elements: str
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

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.dbfleet.innodb.plugins.module_utils import desired

WHAT = ('site', 'every_host', 'own_hosts', 'restart')


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
        if what == 'own_hosts':
            return [dict(name=r.name, hosts=self._templar.template(variables.get('site_%s_hosts' % r.name, r.hosts)))
                    for r in records if r.hosts]
        every = [r for r in records if not r.hosts]
        if what == 'restart':
            return [r.name for r in every if r.restarts]
        return [r.name for r in every]
