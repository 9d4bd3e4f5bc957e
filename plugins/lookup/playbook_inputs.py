# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import annotations

DOCUMENTATION = r'''
---
name: playbook_inputs
short_description: A playbook's inputs, checked against their specs and ranges and given their defaults
version_added: 1.0.0
description:
  - Reads the inputs of one of the collection's playbooks from the play's variables (C(<prefix>_<option>), such as
    C(drop_tables_lock_wait_timeout) for C(playbooks/drop_tables.yml)), checks them and returns them by option name with
    their defaults, so that a playbook takes its inputs once and restates no default or range.
  - The specs are data in C(plugins/plugin_utils/playbook_inputs.py); an option the playbook hands to a module or a
    role is the module's or the role's own definition (its default and range live once, in the engine).
  - Types, choices and required inputs are checked by Ansible's own C(ArgumentSpecValidator), with the messages of
    M(ansible.builtin.validate_argument_spec); then the ranges (C(drop_tables_lock_wait_timeout) 1-3600) and the engines'
    own checks of the values (table names, the target engine). Every problem is named in one error, with the
    variable and the value as given. The lookup runs on the controller and reaches no host.
options:
  _terms:
    description:
      - The playbook, by name (V(site), V(settings), V(verify), V(prerequisites), V(drop_tables),
        V(drop_tables_finish_staged), V(convert_tables), V(rolling_restart), V(ahi_advisor)).
    type: list
    elements: str
    required: true
  option:
    description:
      - One input only, by option name (V(hosts)), returned as its value, checked, or its default. For a play keyword
        that needs no other input, such as C(hosts) in a playbook with required inputs (C(ansible-playbook
        --syntax-check) works the hosts out without them).
    type: str
author:
  - dbfleet maintainers (@dbfleet)
notes:
  - A playbook's variables are named C(<playbook>_<option>), the playbook's name as prefix (as a role's variables
    take the role's name); C(settings.yml) takes C(dbfleet_settings_), as C(settings_) is the settings role's, and
    C(drop_tables_finish_staged.yml), the second half of C(drop_tables.yml)'s staged file removal, reads
    C(drop_tables.yml)'s. A variable's old name (C(drop_lock_wait_timeout)) is still read, with a deprecation
    warning naming the old and the new name; the new name wins when both are given.
  - Used in a play's C(hosts) keyword (its C(hosts) option, as C(site.yml) does), the inputs are checked as Ansible
    works out the play's hosts, before any host is read and whatever C(--limit) is.
  - A lookup rather than an action, so that the inputs become one non-persistent fact of every host of the run in one
    C(run_once) M(ansible.builtin.set_fact) task, without a module run or a connection; a module's C(ansible_facts)
    would land in the fact cache.
seealso:
  - module: ansible.builtin.validate_argument_spec
'''

EXAMPLES = r'''
- name: Take the inputs once, checked and with their defaults (every host of the run gets the fact)
  ansible.builtin.set_fact:
    __drop: "{{ lookup('dbfleet.innodb.playbook_inputs', 'drop_tables') }}"
  run_once: true

- name: Use one
  ansible.builtin.debug:
    msg: "lock_wait_timeout is {{ __drop.lock_wait_timeout }}"
'''

RETURN = r'''
_raw:
  description:
    - One dict per term, the playbook's inputs by option name (C(lock_wait_timeout) for C(drop_tables_lock_wait_timeout)),
      each the value given, converted to its type, or its default (null when it has none).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase
from ansible.utils.display import Display

from ansible_collections.dbfleet.innodb.plugins.plugin_utils import playbook_inputs

display = Display()


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        out = []
        for name in terms:
            playbook = playbook_inputs.PLAYBOOKS.get(name)
            if playbook is None:
                raise AnsibleLookupError('dbfleet.innodb.playbook_inputs: %r is not a playbook with inputs (%s)'
                                         % (name, ', '.join(sorted(playbook_inputs.PLAYBOOKS))))
            given = dict((variable, self._templar.template(variables[variable]))
                         for variable in list(playbook.variables) + list(playbook.old_variables) if variable in variables)
            given, messages = playbook_inputs.renamed(name, given)
            for message in messages:
                display.deprecated(message, version='2.0.0', collection_name='dbfleet.innodb')
            try:
                out.append(playbook_inputs.check(name, given, kwargs.get('option')))
            except playbook_inputs.PlaybookInputError as e:
                raise AnsibleLookupError(str(e))
        return out
