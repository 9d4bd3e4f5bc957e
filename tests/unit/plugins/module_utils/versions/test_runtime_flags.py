"""Whether a variable changes at runtime: the version table's spans (flavors.VARIABLES), the lab servers' own answers
(flavor_data, written by lab/read_flavor_data.py) and the compact copy modules carry (runtime_flags.py) agree."""

from __future__ import annotations

import os
import sys

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors, runtime_flags
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog as flavor_data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))))


@pytest.mark.parametrize('key', sorted(flavor_data.FACTS))
def test_the_hand_written_spans_agree_with_what_the_lab_server_answered(key):
    facts = flavor_data.FACTS[key]
    compared, problems = 0, []
    for name in sorted(flavors.VARIABLES):
        span = flavors.variable_facts(name, facts.flavor, facts.version)
        if span is None or span.dynamic is None or name not in facts.names():
            continue
        compared += 1
        if span.dynamic != facts.variable(name).dynamic:
            problems.append('%s on %s: dynamic %s in flavors.VARIABLES, %s on the lab server'
                            % (name, facts.label, span.dynamic, facts.variable(name).dynamic))
    assert compared >= 25 and not problems, problems


def test_runtime_flags_is_written_from_the_flavor_data_as_it_is():
    sys.path.insert(0, os.path.join(ROOT, 'lab'))
    try:
        import read_flavor_data  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    modules = read_flavor_data.data_modules(os.path.join(ROOT, 'plugins', 'module_utils', 'versions', 'flavor_data'))
    with open(os.path.join(ROOT, 'plugins', 'module_utils', 'versions', 'runtime_flags.py'), encoding='utf-8') as handle:
        assert handle.read() == read_flavor_data.render_flags(modules), (
            'runtime_flags.py is stale: python lab/read_flavor_data.py --flags-only')


def test_every_mysql_lab_version_has_flags_and_every_variable_one_flag():
    mysql = sorted(v for (f, _mm), v in ((k, f.version) for k, f in flavor_data.FACTS.items()) if f == 'mysql')
    assert sorted(v for (f, v) in runtime_flags.FLAGS if f == 'mysql') == mysql
    for (flavor, version), (read_only, dynamic) in runtime_flags.FLAGS.items():
        facts = flavor_data.facts_for(flavor, version)
        assert set(read_only.split()) | set(dynamic.split()) == facts.names()
        assert not set(read_only.split()) & set(dynamic.split())


@pytest.mark.parametrize('version,expected', [
    ((8, 0, 33), (True, 'a fresh MySQL 8.0.33 server')),
    ((8, 0, 40), (True, 'a fresh MySQL 8.0.33 server, the lab version nearest to 8.0.40')),
    ((8, 4, 3), (True, 'a fresh MySQL 8.0.33 server, the lab version nearest to 8.4.3')),
    ((9, 5, 0), (True, 'a fresh MySQL 9.7.4 server, the lab version nearest to 9.5.0')),
    ((5, 7, 44), (None, None)),
    ((9, 9, 0), (None, None)),
])
def test_a_version_between_two_lab_versions_takes_the_nearer_one(version, expected):
    assert flavors.runtime_flag('innodb_old_blocks_time', flavors.MYSQL, version) == expected


def test_the_version_table_comes_first_and_read_only_is_read_only():
    assert flavors.runtime_flag('innodb_io_capacity', flavors.MYSQL, (8, 0, 33)) == (True, 'the version table')
    assert flavors.runtime_flag('innodb_autoinc_lock_mode', flavors.MYSQL, (9, 7, 4)) == (
        False, 'a fresh MySQL 9.7.4 server')
    assert flavors.runtime_flag('no_such_variable', flavors.MYSQL, (9, 7, 4)) == (None, None)
    # MariaDB's catalog says it on the server itself (READ_ONLY): no copy here.
    assert flavors.runtime_flag('innodb_old_blocks_time', flavors.MARIADB, (11, 8, 9)) == (None, None)
