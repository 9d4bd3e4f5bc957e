# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memcached role against the lab's real servers: the early failure where the plugin cannot
run (MySQL 5.7.22 without plugin files, MariaDB 10.11), the skip report, and bad input refused
before anything changes (on MySQL 8.0.33, which has the plugin).

The full install / idempotence / check / uninstall cycle runs in molecule/memcached on a private
server; these tests never install the plugin on the shared lab.
"""
import json
import os
import subprocess
import tempfile

import pytest
from dbfleet_testing.servers import LAB_HOSTS, alias_inventory

from dbfleet_testing.lab import REPO
from dbfleet_testing.runs import BIN, env

PLAYBOOK = """
- hosts: "{{ target }}"
  gather_facts: false
  tasks:
    - name: Apply the role and record the outcome
      block:
        - name: The role
          ansible.builtin.include_role:
            name: dbfleet.innodb.memcached
        - name: Record success
          ansible.builtin.copy:
            content: "{{ {'failed': false, 'report': memcached_report} | to_json }}"
            dest: "{{ result_file }}"
            mode: '0600'
          delegate_to: localhost
      rescue:
        - name: Record the failure
          ansible.builtin.copy:
            content: "{{ {'failed': true, 'task': ansible_failed_task.name,
                         'msg': ansible_failed_result.msg | default('')} | to_json }}"
            dest: "{{ result_file }}"
            mode: '0600'
          delegate_to: localhost
        - name: Fail again
          ansible.builtin.fail:
            msg: the role failed
"""

GOOD_CONTAINER = dict(name='token', schema='memc_itest', table='token', key_column='id',
                      value_columns=['token'], unique_index='PRIMARY')


def run_role(lab, hosts, extra, aliases=None):
    """Run the role in one run on lab hosts (one host or a list); returns (rc, {host: outcome dict: failed, task, msg
    or report, stdout: the run's}). With aliases ({alias: variables}), on the first host under those names instead,
    each with its variables (servers.alias_inventory): one run for several cases on one server."""
    hosts = [hosts] if isinstance(hosts, str) else list(hosts)
    with tempfile.TemporaryDirectory() as tmp:
        play = os.path.join(tmp, 'play.yml')
        with open(play, 'w') as handle:
            handle.write(PLAYBOOK)
        inventories = ['-i', lab.inventory]
        if aliases:
            inventories += ['-i', alias_inventory(os.path.join(tmp, 'aliases.yml'), hosts[0], aliases,
                                                  inventory=lab.inventory)]
            hosts = list(aliases)
        extra = dict(extra, target=':'.join(hosts), result_file=os.path.join(tmp, '{{ inventory_hostname }}.json'))
        extra_file = os.path.join(tmp, 'extra.json')
        with open(extra_file, 'w') as handle:
            json.dump(extra, handle)
        argv = [os.path.join(BIN, 'ansible-playbook')] + inventories
        argv += ['--limit', ':'.join(hosts), play, '-e', '@' + extra_file]
        proc = subprocess.run(argv, env=env(), capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
        outcomes = {}
        for host in hosts:
            result_file = os.path.join(tmp, host + '.json')
            if not os.path.exists(result_file):
                raise AssertionError('the playbook recorded no outcome for %s:\n%s\n%s' % (
                    host, proc.stdout[-3000:], proc.stderr[-3000:]))
            with open(result_file) as handle:
                outcomes[host] = dict(json.load(handle), stdout=proc.stdout)
    return proc.returncode, outcomes


def snapshot(lab, host):
    """What the role could change on host: its drop-in file and the innodb_memcache rows."""
    row = lab.hosts[host]
    dropin = os.path.join(row.get('dropin_dir') or '', '60-dbfleet-memcached.cnf')
    text = open(dropin).read() if os.path.exists(dropin) else None
    schema = lab.query(host, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'innodb_memcache'")
    rows = None
    if schema:
        rows = (lab.query(host, 'SELECT * FROM innodb_memcache.containers ORDER BY name'),
                lab.query(host, 'SELECT * FROM innodb_memcache.cache_policies ORDER BY policy_name'))
    plugin = lab.query(host, "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'daemon_memcached'")
    return dict(dropin=text, config=rows, plugin=plugin)


EARLY_FAILURES = [
    ('mariadb1011', 'MariaDB never shipped the InnoDB memcached plugin'),
    ('mysql97', 'the InnoDB memcached plugin was removed in MySQL 8.3.0 (deprecated since 8.0.22)'),
    ('mariadb118', 'MariaDB never shipped the InnoDB memcached plugin'),
] + ([('mysql57', 'has no libmemcached.so and innodb_engine.so in plugin_dir')] if 'mysql57' in LAB_HOSTS else [])


@pytest.fixture(scope='module')
def early_failures(lab):
    """The role on every host of EARLY_FAILURES in one run: (what each host had before, rc, {host: outcome}, what each
    host has after)."""
    hosts = [h for h, _reason in EARLY_FAILURES]
    before = dict((h, snapshot(lab, h)) for h in hosts)
    rc, outcomes = run_role(lab, hosts, dict(memcached_containers=[GOOD_CONTAINER]))
    return before, rc, outcomes, dict((h, snapshot(lab, h)) for h in hosts)


@pytest.mark.parametrize('host,reason', EARLY_FAILURES)
def test_memcached_role_fails_early_where_the_plugin_cannot_run(early_failures, host, reason):
    before, rc, outcomes, after = early_failures
    out = outcomes[host]
    assert rc != 0
    assert out['failed'] is True
    assert out['task'] == 'Stop here on a server that cannot have the plugin'
    assert reason in out['msg']
    assert 'memcached_skip_unsupported: true' in out['msg'], 'the message says what to do'
    assert 'Leave this host out' in out['msg']
    assert after[host] == before[host]


@pytest.fixture(scope='module')
def skip_reports(lab):
    """The role with memcached_skip_unsupported on every lab host but mysql80, in one run: (what each host had before,
    rc, {host: outcome}, what each host has after)."""
    hosts = [h for h in LAB_HOSTS if h != 'mysql80']
    before = dict((h, snapshot(lab, h)) for h in hosts)
    rc, outcomes = run_role(lab, hosts, dict(memcached_containers=[GOOD_CONTAINER], memcached_skip_unsupported=True))
    return before, rc, outcomes, dict((h, snapshot(lab, h)) for h in hosts)


@pytest.mark.parametrize('host', [h for h in LAB_HOSTS if h != 'mysql80'])
def test_memcached_role_reports_unsupported_hosts_as_skipped(skip_reports, host):
    before, rc, outcomes, after = skip_reports
    out = outcomes[host]
    assert rc == 0, out
    report = out['report']
    assert report['skipped'] is True
    assert 'memcached plugin' in report['reason'] or 'libmemcached.so' in report['reason']
    assert 'skipped: %s:' % host in out['stdout']
    assert after[host] == before[host]


@pytest.fixture(scope='module')
def itest_table(lab):
    """memc_itest.token on mysql80: a table the good container maps (created and dropped here)."""
    conn = lab.connect('mysql80')
    with conn.cursor() as cur:
        cur.execute('CREATE DATABASE IF NOT EXISTS memc_itest')
        cur.execute('CREATE TABLE IF NOT EXISTS memc_itest.token (id VARCHAR(32) NOT NULL PRIMARY KEY, '
                    'token VARCHAR(128) NOT NULL, note TEXT, n INT, KEY k_n (n))')
    yield
    with conn.cursor() as cur:
        cur.execute('DROP DATABASE IF EXISTS memc_itest')
    conn.close()


# The task that works the role's desired state out and checks its input (roles/scaffold/tasks/desired.yml).
DESIRED_TASK = 'Work out the desired settings and check the input of memcached'

BAD_INPUT = [
    ('missing table, column and index',
     dict(memcached_containers=[dict(GOOD_CONTAINER, table='nosuch'),
                                dict(GOOD_CONTAINER, name='c2', value_columns=['token', 'nope']),
                                dict(GOOD_CONTAINER, name='c3', unique_index='uk_nope'),
                                dict(GOOD_CONTAINER, name='c4', key_column='n', unique_index='k_n')]),
     'Load the configuration schema if needed, validate and write the containers and the cache policy',
     ["table memc_itest.nosuch does not exist", "value column 'nope' does not exist",
      "index 'uk_nope' does not exist", "index 'k_n' is not unique", 'nothing changed']),
    ('duplicate names',
     dict(memcached_containers=[GOOD_CONTAINER, GOOD_CONTAINER]),
     DESIRED_TASK, ['duplicate container names: token', 'nothing changed']),
    ('bind beyond loopback without the opt-in',
     dict(memcached_containers=[GOOD_CONTAINER], memcached_bind_address='0.0.0.0'),
     DESIRED_TASK,
     ['memcached_bind_address 0.0.0.0 is beyond loopback', 'memcached_allow_remote: true', 'CIS']),
    ('port 0', dict(memcached_containers=[GOOD_CONTAINER], memcached_port=0),
     DESIRED_TASK, ['memcached_port must be 1-65535; got 0']),
    ('port 70000', dict(memcached_containers=[GOOD_CONTAINER], memcached_port=70000),
     DESIRED_TASK, ['memcached_port must be 1-65535; got 70000']),
    ('a line break in the free-form daemon options',
     dict(memcached_containers=[GOOD_CONTAINER], memcached_daemon_extra_options='-c 64\ninnodb_buffer_pool_size = 1G'),
     DESIRED_TASK, ['memcached_daemon_extra_options must be on one line', 'nothing changed']),
    ('an unbalanced quote in the daemon options',
     dict(memcached_containers=[GOOD_CONTAINER], memcached_daemon_extra_options='-c "64'),
     DESIRED_TASK, ['memcached_daemon_extra_options has an unbalanced " quote', 'nothing changed']),
    # The plugin's own option parser: a -l clustered behind another flag is still -l (the old check passed it).
    ('a listen address hidden in a cluster of daemon options',
     dict(memcached_containers=[GOOD_CONTAINER], memcached_daemon_extra_options='-c 64 -vl 0.0.0.0'),
     DESIRED_TASK,
     ['memcached_daemon_extra_options: must not set -p, -l or -u', 'found -l', "'-c 64 -vl 0.0.0.0'", 'nothing changed']),
    ('a daemon option that would stop mysqld',
     dict(memcached_containers=[GOOD_CONTAINER], memcached_daemon_extra_options='-vh'),
     DESIRED_TASK,
     ['-h prints the help and calls exit(): it takes mysqld down', 'nothing changed']),
    ('a word for a batch size',
     dict(memcached_containers=[GOOD_CONTAINER], memcached_r_batch_size='ten'),
     None, ['memcached_r_batch_size', "'ten'"]),
    ('policy not in the choices', dict(memcached_containers=[GOOD_CONTAINER], memcached_write_policy='sometimes'),
     None, ['memcached_write_policy must be one of']),
]


@pytest.fixture(scope='module')
def bad_input_runs(lab, itest_table):
    """Every case of BAD_INPUT in one run on mysql80: each case is the host under a name of its own
    (servers.alias_inventory: case0, case1...) with its variables. (what mysql80 had before, rc, {case: outcome}, what
    it has after)."""
    before = snapshot(lab, 'mysql80')
    rc, outcomes = run_role(lab, 'mysql80', {}, aliases=dict(('case%d' % i, extra)
                                                             for i, (_label, extra, _task, _f) in enumerate(BAD_INPUT)))
    return before, rc, outcomes, snapshot(lab, 'mysql80')


@pytest.mark.parametrize('label,extra,task,fragments', BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_memcached_bad_input_is_refused_before_anything_changes(bad_input_runs, label, extra, task, fragments):
    before, rc, outcomes, after = bad_input_runs
    out = outcomes['case%d' % [b[0] for b in BAD_INPUT].index(label)]
    assert extra
    assert rc != 0
    assert out['failed'] is True
    if task is not None:
        assert out['task'] == task, out
    for fragment in fragments:
        assert fragment in out['msg'], (fragment, out['msg'])
    assert after == before
