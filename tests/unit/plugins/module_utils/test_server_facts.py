# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""server_facts: the option files of the server process found in a fake /proc tree, and the facts it reports."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import capability_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts as si
from ansible_collections.dbfleet.innodb.plugins.module_utils.host.process import local_process
from ansible_collections.dbfleet.innodb.tests.unit.plugins.module_utils.host.proc_trees import SOCKET, fake_proc

MYSQL80 = server_identity.ServerIdentity('mysql', (8, 0, 33), '8.0.33', None)
MARIADB = server_identity.ServerIdentity('mariadb', (10, 11, 19), '10.11.19-MariaDB', None)


def test_plan_default_search_order_with_extra_file_and_suffix(tmp_path):
    proc, variables = fake_proc(tmp_path, 4245, ['/usr/sbin/mariadbd', '--defaults-extra-file=/srv/x.cnf',
                                                 '--defaults-group-suffix=_b'], uid=105, home='/var/lib/mysql')
    process = local_process(variables, SOCKET, proc)[0]
    plan = si.option_file_plan(MARIADB, process, '')
    assert plan['files'] == ['/etc/my.cnf', '/etc/mysql/my.cnf', '/srv/x.cnf', '/var/lib/mysql/.my.cnf']
    assert 'mariadbd-10.11' in plan['groups'] and 'mysqld_b' in plan['groups']
    assert plan['source'].startswith('server command line (pid 4245): default search order')


def test_plan_fallback_when_not_local():
    plan = si.option_file_plan(MYSQL80, None, 'the server (192.0.2.10) is not on this host',
                               fallback_option_files=['/etc/mysql/my.cnf'])
    assert plan['files'] == ['/etc/mysql/my.cnf'] and plan['explicit'] is True
    assert 'fallback_option_files' in plan['source']
    plan = si.option_file_plan(MYSQL80, None, 'the server (192.0.2.10) is not on this host')
    assert plan['files'] == [] and plan['source'] == 'unavailable'
    assert 'not on this host' in plan['note']


def test_plan_explicit_option_files_win(tmp_path):
    proc, variables = fake_proc(tmp_path, 4246, ['/usr/sbin/mysqld', '--defaults-file=/srv/db/my.cnf'])
    process = local_process(variables, SOCKET, proc)[0]
    plan = si.option_file_plan(MYSQL80, process, '', option_files=['/tmp/a.cnf'])
    assert plan['files'] == ['/tmp/a.cnf'] and plan['source'] == 'option_files parameter'


@pytest.mark.parametrize('flavor, version, statement', [
    ('mysql', (8, 0, 33), 'SHOW REPLICA STATUS'),
    ('mysql', (8, 0, 21), 'SHOW SLAVE STATUS'),
    ('mysql', (5, 7, 22), 'SHOW SLAVE STATUS'),
    ('percona', (8, 0, 36), 'SHOW REPLICA STATUS'),
    ('mariadb', (10, 11, 19), 'SHOW ALL SLAVES STATUS'),
])
def test_replica_status_statement_capability(flavor, version, statement):
    assert capability_facts.capability('replica_status_statement', flavor, version) == statement


def test_variable_source_table_capabilities():
    assert capability_facts.capability('variables_info_table', 'mysql', (8, 0, 33)) is True
    assert capability_facts.capability('variables_info_table', 'mysql', (5, 7, 22)) is False
    assert capability_facts.capability('system_variables_table', 'mariadb', (10, 11, 19)) is True
    assert capability_facts.capability('system_variables_table', 'mysql', (8, 0, 33)) is False


def test_added_variable_facts():
    assert flavors.variable_facts('innodb_dedicated_server', 'mysql', (8, 0, 33)).dynamic is False
    assert flavors.variable_facts('innodb_dedicated_server', 'mysql', (5, 7, 22)) is None
    assert flavors.variable_facts('innodb_dedicated_server', 'mariadb', (10, 11, 19)) is None
    assert flavors.variable_facts('innodb_buffer_pool_chunk_size', 'mysql', (8, 0, 33)).kind == 'size'


def test_report_adds_the_details_of_named_variables(monkeypatch):
    """si.report: public facts plus each named variable resolved and described the way the
    setter and verify see it; one table read for all of them; its failure is a note, not an error."""
    identity = server_identity.ServerIdentity(flavors.MARIADB, (10, 11, 9), '10.11.9-MariaDB', None)
    variables = {'innodb_adaptive_hash_index_parts': '8', 'innodb_max_dirty_pages_pct': '90.000000'}
    reads = []

    def table(conn, ident, names):
        reads.append(sorted(names))
        return {'innodb_max_dirty_pages_pct': dict(type='DOUBLE', read_only=False, default='90.000000',
                                                   origin='COMPILE-TIME')}, 'cannot read it all'
    monkeypatch.setattr(si, 'variable_table', table)
    facts = {'_identity': identity, 'notes': ['n1'], 'flavor': 'mariadb'}
    out = si.report(None, identity, variables, facts,
                    ['innodb_adaptive_hash_index_partitions', 'innodb_max_dirty_pages_pct', 'innodb_dedicated_server'])
    assert '_identity' not in out and out['notes'] == ['n1', 'cannot read it all'] and facts['notes'] == ['n1']
    assert reads == [['innodb_adaptive_hash_index_parts', 'innodb_max_dirty_pages_pct']]
    parts = out['variables']['innodb_adaptive_hash_index_partitions']
    assert parts['resolved_name'] == 'innodb_adaptive_hash_index_parts' and parts['exists'] is True
    assert (parts['kind'], parts['dynamic'], parts['default']) == ('int', False, '8')
    pct = out['variables']['innodb_max_dirty_pages_pct']
    assert (pct['kind'], pct['dynamic'], pct['origin'], pct['settable']) == ('float', True, 'COMPILE-TIME', True)
    absent = out['variables']['innodb_dedicated_server']
    assert absent['exists'] is False and absent['reason'] == 'mariadb 10.11.9 has no such variable'
    assert si.report(None, identity, variables, facts)['variables'] == {}
