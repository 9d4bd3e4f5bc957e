# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""version_facts: the version facts sent to a module as data give the same answers as flavor_data; no module's
payload carries the flavor_data package (AnsiballZ zips every module_utils a module imports, statically)."""

from __future__ import annotations

import ast
import json
import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import upgrade
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import facts as version_facts

PLUGINS = os.path.join(os.path.dirname(os.path.abspath(upgrade.__file__)), '..', '..')
PREFIX = 'ansible_collections.dbfleet.innodb.plugins.module_utils'


def test_catalog_data_through_json_answers_as_flavor_data():
    for facts in flavor_data.FACTS.values():
        data = json.loads(json.dumps(version_facts.catalog_data(flavor_data)))
        catalog = version_facts.Catalog(data)
        sent = catalog.facts_for(facts.flavor, facts.version[:2] + (0,))
        assert sent is not None and sent.label == facts.label
        assert sent.names() == facts.names()
        assert all(sent.variable(n) == facts.variable(n) for n in facts.names())
        assert sent.options == facts.options and sent.removed_accepted == facts.removed_accepted
        assert sent.source_text() == facts.source_text()
        assert catalog.known_versions() == flavor_data.known_versions()
    assert catalog.facts_for('percona', (8, 0, 33)) is None


def test_a_target_without_facts_names_the_known_versions():
    catalog = version_facts.Catalog(json.loads(json.dumps(version_facts.catalog_data(flavor_data))))
    target = upgrade.Target('mysql', (8, 4, 0), catalog)
    assert not target.complete
    assert target.source() == upgrade.Target('mysql', (8, 4, 0), flavor_data).source()
    assert 'mysql 9.7.4' in target.source()


def test_upgrade_finds_the_same_with_facts_sent_as_data():   # the findings' own tests: test_upgrade.py
    sent = upgrade.Target('mysql', (9, 7, 0), version_facts.Catalog(json.loads(json.dumps(
        version_facts.catalog_data(flavor_data)))))
    here = upgrade.Target('mysql', (9, 7, 0), flavor_data)
    for name in ('innodb_log_file_size', 'optimizer_switch', 'innodb_flush_method', 'no_such_thing', 'datadir'):
        assert sent.variable(name) == here.variable(name)
        assert sent.accepts(name) == here.accepts(name)


def _module_utils_imports(path):
    """Names under module_utils that path imports (anywhere in it, as AnsiballZ finds them): 'versions.upgrade',
    'versions.flavor_data.mysql_8_0'."""
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX):
            rest = node.module[len(PREFIX):].lstrip('.')
            for alias in node.names:
                name = rest + '.' + alias.name if rest else alias.name
                yield name if os.path.exists(os.path.join(PLUGINS, 'module_utils', *name.split('.')) + '.py') else rest


def _closure(path):
    """Every module_utils name path imports, directly or not."""
    seen, todo = set(), [path]
    while todo:
        for name in _module_utils_imports(todo.pop()):
            if name in seen:
                continue
            seen.add(name)
            base = os.path.join(PLUGINS, 'module_utils', *name.split('.'))
            for candidate in (base + '.py', os.path.join(base, '__init__.py')):
                if os.path.exists(candidate):
                    todo.append(candidate)
    return seen


def test_no_module_imports_flavor_data():
    modules = os.path.join(PLUGINS, 'modules')
    for name in sorted(os.listdir(modules)):
        if name.endswith('.py') and name != '__init__.py':
            imported = _closure(os.path.join(modules, name))
            assert not [n for n in imported if n.startswith('versions.flavor_data')], name
    assert 'versions.upgrade' in _closure(os.path.join(modules, 'verify.py'))        # the check itself is still there
