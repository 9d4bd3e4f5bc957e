# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every playbook variable, role option and host variable that docs/*.md and README.md name exists in the code.

A name counts as one of these when it is written as code (between backquotes, alone or before ``:`` / ``=``) and
starts with a role's name (``adaptive_hash_``), a playbook's (``verify_``, ``drop_tables_``) or ``dbfleet_``. It
exists when the collection uses it: a role option (``roles/*/meta/argument_specs.yml``, any entry point), a key or
a Jinja name in the YAML of the roles and playbooks (their tasks, defaults, argument specs: comments do not count),
a name the plugins use (``dbfleet_login_*`` from the login doc fragment and the login action, module options,
results and facts), a playbook input (``drop_tables_lock_wait_timeout``: a variable of plugin_utils/playbook_inputs.py,
whose prefixes are checked as well), a plugin's own name, a role's host pattern (``verify_memcached_hosts``), or a name of the
project's tooling (AWX playbooks, the lab, Molecule, tests). The failure names the doc, the line and the unknown name.
"""

from __future__ import annotations

import glob
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
# A name written as code: `name`, `name: value`, `name=value`.
CODE = re.compile(r'`([a-z][a-z0-9_]*)(?:\s*[:=][^`]*)?`')


class _Loader(yaml.SafeLoader):  # pylint: disable=too-many-ancestors
    """A safe loader that reads Ansible's tags (!unsafe, !vault) as the plain values they tag."""


_Loader.add_multi_constructor('!', lambda loader, suffix, node: loader.construct_scalar(node)
                              if isinstance(node, yaml.ScalarNode) else None)


def _strings(node):
    """Every key and string value of a YAML document, recursively."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def yaml_names(pattern):
    """The identifiers in the keys and strings of the YAML files matched by pattern (not in their comments)."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, pattern), recursive=True):
        with open(path, encoding='utf-8') as handle:
            for document in yaml.load_all(handle, Loader=_Loader):  # noqa: S506 (safe)
                for text in _strings(document):
                    names.update(IDENT.findall(text))
    return names


def role_options():
    """Every option of every entry point of every role."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, 'roles', '*', 'meta', 'argument_specs.yml')):
        with open(path, encoding='utf-8') as handle:
            specs = yaml.safe_load(handle)['argument_specs']
        for entry in specs.values():
            names.update((entry.get('options') or {}).keys())
    return names


def plugin_names():
    """The names the plugins use (options, results, facts, host variables such as dbfleet_login_*), and the plugins'."""
    names = set()
    for path in glob.glob(os.path.join(ROOT, 'plugins', '**', '*.py'), recursive=True) + \
            glob.glob(os.path.join(ROOT, 'plugins', '**', '*.yml'), recursive=True):
        names.add(os.path.splitext(os.path.basename(path))[0])
        with open(path, encoding='utf-8') as handle:
            names.update(IDENT.findall(handle.read()))
    return names


def tooling_names():
    """The names of the project's own tooling the docs also write as code: the AWX playbooks' variables, the lab's
    inventory facts and chroots, Molecule scenarios, tests (their files' names and identifiers)."""
    names = yaml_names('awx/**/*.yml') | yaml_names('molecule/**/*.yml')
    for top in ('lab', 'tests', 'molecule'):
        for path in glob.glob(os.path.join(ROOT, top, '**', '*'), recursive=True):
            names.add(os.path.splitext(os.path.basename(path))[0])
            if path.endswith('.py') and os.path.abspath(path) != os.path.abspath(__file__):
                with open(path, encoding='utf-8') as handle:
                    names.update(IDENT.findall(handle.read()))
    return names


# Names the docs quote from other software, not variables of the collection.
NOT_OURS = {
    'verify_ready': "a step of Oracle's mysql-systemd-start (docs/hosts.md)",
    'verify_database': "a step of Oracle's mysql-systemd-start (docs/hosts.md)",
}


def playbook_inputs():
    """The playbooks' inputs by variable name (plugins/plugin_utils/playbook_inputs.py) and their prefixes."""
    from ansible_collections.dbfleet.innodb.plugins.plugin_utils.playbook_inputs import PLAYBOOKS
    return (set(name for playbook in PLAYBOOKS.values() for name in playbook.variables),
            set(playbook.prefix + '_' for playbook in PLAYBOOKS.values()))


def known_names():
    roles = [r for r in os.listdir(os.path.join(ROOT, 'roles')) if os.path.isdir(os.path.join(ROOT, 'roles', r))]
    # The host pattern of a role with hosts of its own: <playbook>_<role>_hosts (lookup dbfleet.innodb.roles).
    patterns = set('%s_%s_hosts' % (playbook, role) for playbook in ('site', 'verify') for role in roles)
    return (role_options() | plugin_names() | yaml_names('roles/**/*.yml') | yaml_names('playbooks/**/*.yml')
            | set(roles) | patterns | tooling_names() | set(NOT_OURS) | playbook_inputs()[0])


def prefixes():
    """Where a name belongs: a role's name, a playbook's or its inputs' prefix, dbfleet_."""
    roles = [r for r in os.listdir(os.path.join(ROOT, 'roles')) if os.path.isdir(os.path.join(ROOT, 'roles', r))]
    playbooks = [os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, 'playbooks', '*.yml'))]
    return tuple(sorted(set(name + '_' for name in roles + playbooks + ['dbfleet']) | playbook_inputs()[1]))


def unknown_names(paths, known, starts):
    """(doc, line number, name) of each name of the docs at paths that starts with one of starts and is not known."""
    found = []
    for path in paths:
        with open(path, encoding='utf-8') as handle:
            for number, line in enumerate(handle, 1):
                for name in CODE.findall(line):
                    if name.startswith(starts) and name not in known:
                        found.append((os.path.relpath(path, ROOT), number, name))
    return found


def doc_paths():
    return sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md'))) + [os.path.join(ROOT, 'README.md')]


def test_every_variable_and_option_the_docs_name_exists():
    unknown = unknown_names(doc_paths(), known_names(), prefixes())
    assert not unknown, 'names in the docs that no role, playbook or plugin has:\n' + '\n'.join(
        '%s:%d: %s' % item for item in unknown)


def test_an_unknown_name_is_named_with_its_doc_and_line(tmp_path):
    doc = tmp_path / 'x.md'
    doc.write_text('Set `adaptive_hash_enabled: true`.\nOr `adaptive_hash_partitions=8` and `verify_hosts`.\n'
                   'Log in as `dbfleet_login_usr`; `some_other_name` is not ours.\n')
    found = unknown_names([str(doc)], known_names(), prefixes())
    assert [(line, name) for _doc, line, name in found] == [(2, 'adaptive_hash_partitions'), (3, 'dbfleet_login_usr')]
