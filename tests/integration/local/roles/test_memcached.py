# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The memcached role against the lab's real servers: the early failure where the plugin cannot
run (MySQL 5.7.22 without plugin files, MariaDB 10.11), the skip report, and bad input refused
before anything changes (on MySQL 8.0.33, which has the plugin): every case in one run of the role, each case a lab
server under a name of its own.

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
from dbfleet_testing.runs import BIN, env, recap

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


def run_role(lab, cases):
    """The role in one run on the cases ({name: (lab host, variables)}): each case is its host under the case's name
    (servers.alias_inventory), with its variables as host variables. Returns ({case: outcome dict: failed, task, msg
    or report, stdout: the run's}, {case: its PLAY RECAP counts})."""
    with tempfile.TemporaryDirectory() as tmp:
        play = os.path.join(tmp, 'play.yml')
        with open(play, 'w') as handle:
            handle.write(PLAYBOOK)
        inventories = ['-i', lab.inventory]
        for host in sorted(set(host for host, _variables in cases.values())):
            aliases = dict((name, variables) for name, (on, variables) in cases.items() if on == host)
            inventories += ['-i', alias_inventory(os.path.join(tmp, 'aliases-%s.yml' % host), host, aliases,
                                                  inventory=lab.inventory)]
        extra = dict(target=':'.join(cases), result_file=os.path.join(tmp, '{{ inventory_hostname }}.json'))
        extra_file = os.path.join(tmp, 'extra.json')
        with open(extra_file, 'w') as handle:
            json.dump(extra, handle)
        argv = [os.path.join(BIN, 'ansible-playbook')] + inventories
        argv += ['--limit', ':'.join(cases), play, '-e', '@' + extra_file]
        proc = subprocess.run(argv, env=env(), capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
        outcomes = {}
        for name in cases:
            result_file = os.path.join(tmp, name + '.json')
            if not os.path.exists(result_file):
                raise AssertionError('the playbook recorded no outcome for %s:\n%s\n%s' % (
                    name, proc.stdout[-3000:], proc.stderr[-3000:]))
            with open(result_file) as handle:
                outcomes[name] = dict(json.load(handle), stdout=proc.stdout)
    return outcomes, recap(proc.stdout)


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


SKIPPED = [h for h in LAB_HOSTS if h != 'mysql80']


@pytest.fixture(scope='module')
def role_run(lab, itest_table):
    """The role once, in one run, for every case of this file, each case a lab host under a name of its own with its
    variables (run_role()): 'early-<host>' on each host of EARLY_FAILURES, 'skip-<host>' (memcached_skip_unsupported)
    on every lab host but mysql80, 'case<i>' on mysql80 for each group of bad input (BAD_INPUT_GROUPS). None of them may
    change anything: (what each server had before, {case: outcome}, {case: recap counts}, what each has after)."""
    del itest_table     # the table the good container maps, for the bad-input cases
    cases = dict(('early-' + h, (h, dict(memcached_containers=[GOOD_CONTAINER]))) for h, _reason in EARLY_FAILURES)
    cases.update(('skip-' + h, (h, dict(memcached_containers=[GOOD_CONTAINER], memcached_skip_unsupported=True)))
                 for h in SKIPPED)
    cases.update(('case%d' % i, ('mysql80', bad_input_variables(labels))) for i, labels in enumerate(BAD_INPUT_GROUPS))
    servers = sorted(set(host for host, _variables in cases.values()))
    before = dict((h, snapshot(lab, h)) for h in servers)
    outcomes, counts = run_role(lab, cases)
    return before, outcomes, counts, dict((h, snapshot(lab, h)) for h in servers)


@pytest.fixture(scope='module')
def early_failures(role_run):
    """The role on every host of EARLY_FAILURES (role_run(), 'early-<host>'): (what each host had before,
    {host: outcome}, {host: recap counts}, what each host has after)."""
    before, outcomes, counts, after = role_run
    return before, dict((h, outcomes['early-' + h]) for h, _r in EARLY_FAILURES), \
        dict((h, counts['early-' + h]) for h, _r in EARLY_FAILURES), after


@pytest.mark.parametrize('host,reason', EARLY_FAILURES)
def test_memcached_role_fails_early_where_the_plugin_cannot_run(early_failures, host, reason):
    before, outcomes, counts, after = early_failures
    out = outcomes[host]
    assert counts[host]['failed'] == 1, counts[host]
    assert out['failed'] is True
    assert out['task'] == 'Stop here on a server that cannot have the plugin'
    assert reason in out['msg']
    assert 'memcached_skip_unsupported: true' in out['msg'], 'the message says what to do'
    assert 'Leave this host out' in out['msg']
    assert after[host] == before[host]


@pytest.fixture(scope='module')
def skip_reports(role_run):
    """The role with memcached_skip_unsupported on every lab host but mysql80 (role_run(), 'skip-<host>'): (what each
    host had before, {host: outcome}, {host: recap counts}, what each host has after)."""
    before, outcomes, counts, after = role_run
    return before, dict((h, outcomes['skip-' + h]) for h in SKIPPED), dict((h, counts['skip-' + h]) for h in SKIPPED), \
        after


@pytest.mark.parametrize('host', SKIPPED)
def test_memcached_role_reports_unsupported_hosts_as_skipped(skip_reports, host):
    before, outcomes, counts, after = skip_reports
    out = outcomes[host]
    # The run goes on for this host to the end: nothing failed or unreachable there.
    assert counts[host]['failed'] == 0 and counts[host]['unreachable'] == 0, (counts[host], out)
    report = out['report']
    assert report['skipped'] is True
    assert 'memcached plugin' in report['reason'] or 'libmemcached.so' in report['reason']
    assert 'skipped: skip-%s:' % host in out['stdout']
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
     dict(memcached_bind_address='0.0.0.0'),
     DESIRED_TASK,
     ['memcached_bind_address 0.0.0.0 is beyond loopback', 'memcached_allow_remote: true', 'CIS']),
    ('port 0', dict(memcached_port=0),
     DESIRED_TASK, ['memcached_port must be 1-65535; got 0']),
    ('port 70000', dict(memcached_port=70000),
     DESIRED_TASK, ['memcached_port must be 1-65535; got 70000']),
    ('a line break in the free-form daemon options',
     dict(memcached_daemon_extra_options='-c 64\ninnodb_buffer_pool_size = 1G'),
     DESIRED_TASK, ['memcached_daemon_extra_options must be on one line', 'nothing changed']),
    ('an unbalanced quote in the daemon options',
     dict(memcached_daemon_extra_options='-c "64'),
     DESIRED_TASK, ['memcached_daemon_extra_options has an unbalanced " quote', 'nothing changed']),
    # The plugin's own option parser: a -l clustered behind another flag is still -l (the old check passed it).
    ('a listen address hidden in a cluster of daemon options',
     dict(memcached_daemon_extra_options='-c 64 -vl 0.0.0.0'),
     DESIRED_TASK,
     ['memcached_daemon_extra_options: must not set -p, -l or -u', 'found -l', "'-c 64 -vl 0.0.0.0'", 'nothing changed']),
    ('a daemon option that would stop mysqld',
     dict(memcached_daemon_extra_options='-vh'),
     DESIRED_TASK,
     ['-h prints the help and calls exit(): it takes mysqld down', 'nothing changed']),
    ('a word for a batch size',
     dict(memcached_r_batch_size='ten'),
     None, ['memcached_r_batch_size', "'ten'"]),
    ('policy not in the choices', dict(memcached_write_policy='sometimes'),
     None, ['memcached_write_policy must be one of']),
]


# The cases of bad input by the name of mysql80 they share in the run: cases that the same task refuses, each problem
# named in its one message (the role's record checks every input before it fails: module_utils/roles/memcached.py
# read_inputs(); the argument specs likewise), share a name; two values of one variable, or a problem found by a later
# task, need names of their own.
BAD_INPUT_GROUPS = [
    ('missing table, column and index',),
    ('duplicate names', 'bind beyond loopback without the opt-in', 'port 0',
     'a line break in the free-form daemon options'),
    ('port 70000', 'an unbalanced quote in the daemon options'),
    ('a listen address hidden in a cluster of daemon options',),
    ('a daemon option that would stop mysqld',),
    ('a word for a batch size', 'policy not in the choices'),
]


def bad_input_variables(labels):
    """The variables of one group of bad input: the good container, then each case's variables (no two on one
    variable)."""
    variables = {}
    for label in labels:
        extra = next(b[1] for b in BAD_INPUT if b[0] == label)
        assert not set(extra) & set(variables), (label, variables)
        variables.update(extra)
    return dict({'memcached_containers': [GOOD_CONTAINER]}, **variables)


@pytest.fixture(scope='module')
def bad_input_runs(role_run):
    """Every case of BAD_INPUT, each in its group of BAD_INPUT_GROUPS: mysql80 under the name 'case<i>' (role_run()).
    (what mysql80 had before, {label: outcome}, {label: recap counts}, what it has after)."""
    before, outcomes, counts, after = role_run
    run = dict((label, 'case%d' % i) for i, labels in enumerate(BAD_INPUT_GROUPS) for label in labels)
    assert sorted(run) == sorted(b[0] for b in BAD_INPUT), 'every case of BAD_INPUT is in one group of BAD_INPUT_GROUPS'
    return before['mysql80'], dict((label, outcomes[name]) for label, name in run.items()), \
        dict((label, counts[name]) for label, name in run.items()), after['mysql80']


@pytest.mark.parametrize('label,extra,task,fragments', BAD_INPUT, ids=[b[0] for b in BAD_INPUT])
def test_memcached_bad_input_is_refused_before_anything_changes(bad_input_runs, label, extra, task, fragments):
    before, outcomes, counts, after = bad_input_runs
    out = outcomes[label]
    assert extra
    assert counts[label]['failed'] == 1, counts[label]
    assert out['failed'] is True
    if task is not None:
        assert out['task'] == task, out
    for fragment in fragments:
        assert fragment in out['msg'], (fragment, out['msg'])
    assert after == before
