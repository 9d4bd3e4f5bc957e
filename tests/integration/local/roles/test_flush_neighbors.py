"""storage_facts and the flush_neighbors role against the lab's real servers (inventories/lab).

Every test puts back what it changed: innodb_flush_neighbors / innodb_io_capacity(_max) at runtime,
persisted values on MySQL 8, and the role's drop-in file. One test restarts each lab server once
(the value must survive through the drop-in); the others only change dynamic values.
"""
import json
import os
import re
import subprocess

import pytest
from dbfleet_testing.servers import LAB_HOSTS, alias_inventory, persisted_put_back

from dbfleet_testing.lab import REPO as ROOT
from dbfleet_testing.runs import BIN, env, host_failure
DROPIN = '60-dbfleet-flush_neighbors.cnf'
VARS = ('innodb_flush_neighbors', 'innodb_io_capacity', 'innodb_io_capacity_max')

PLAYBOOK = """
- name: flush_neighbors under test
  hosts: "{{ target }}"
  gather_facts: false
  roles:
    - role: dbfleet.innodb.flush_neighbors
  post_tasks:
    # Every host's facts in one file, written once (one module run per play, not one per host): fact -> host -> value.
    - name: Keep the role's facts for the test
      vars:
        __hosts: "{{ ansible_play_hosts }}"
      ansible.builtin.copy:
        content: >-
          {{ {'report': dict(__hosts | zip(__hosts | map('extract', hostvars, 'flush_neighbors_report'))),
              'storage': dict(__hosts | zip(__hosts | map('extract', hostvars, 'flush_neighbors_storage'))),
              'desired': dict(__hosts | zip(__hosts | map('extract', hostvars, 'flush_neighbors_desired_settings')))}
             | to_json }}
        dest: "{{ out_dir }}/facts.json"
        mode: "0644"
      delegate_to: localhost
      run_once: true
      check_mode: false
      changed_when: false
"""


class Run(object):
    def __init__(self, proc, out_dir, host):
        self.rc = proc.returncode
        self.out = proc.stdout + proc.stderr
        m = re.search(r'^%s\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)' % re.escape(host),
                      self.out, re.M)
        assert m, self.out[-3000:]
        self.ok, self.changed, self.unreachable, self.failed = (int(x) for x in m.groups())
        path = os.path.join(out_dir, 'facts.json')
        facts = json.load(open(path)) if os.path.exists(path) else {}
        self.facts = (dict((name, facts[name][host]) for name in ('report', 'storage', 'desired'))
                      if host in facts.get('report', {}) else None)


@pytest.fixture(scope='module')
def inventory(lab, tmp_path_factory):
    """A private inventory of the shared lab (inventories/lab/hosts.yml may be rewritten by other labs), written once
    for the tests of this module."""
    path = str(tmp_path_factory.mktemp('flush-inventory') / 'hosts.yml')
    lab.run('--inventory', path, 'inventory')
    return path


@pytest.fixture
def play(tmp_path, inventory):
    book = tmp_path / 'play.yml'
    book.write_text(PLAYBOOK)

    def run(host, extra=None, check=False):
        """One run on host; on a list of hosts, one run on all of them: {host: Run}."""
        for f in tmp_path.glob('*.json'):
            f.unlink()
        argv = [os.path.join(BIN, 'ansible-playbook'), '-i', inventory, str(book), '--diff',
                '-e', 'target=%s out_dir=%s' % (host if isinstance(host, str) else ':'.join(host), tmp_path)]
        if extra is not None:
            argv += ['-e', json.dumps(extra)]
        if check:
            argv.append('--check')
        proc = subprocess.run(argv, capture_output=True, text=True, env=env(ANSIBLE_DEPRECATION_WARNINGS='0'), cwd=ROOT, timeout=600,
                              check=False)
        if isinstance(host, str):
            return Run(proc, str(tmp_path), host)
        return dict((name, Run(proc, str(tmp_path), name)) for name in host)
    return run


def query(lab, host, sql, args=None):
    """One statement, retried while another user of the lab restarts the server."""
    return lab.query(host, sql, args, tries=20)


def values(lab, host):
    rows = query(lab, host, 'SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s, %s, %s)', VARS)
    return dict((r['Variable_name'], int(r['Value'])) for r in rows)


def persisted(lab, host):
    # MySQL 8.0 and later have SET PERSIST (9.7 too: its values are put back as the used lab had them).
    if lab.hosts[host].get('flavor') != 'mysql' or int(lab.hosts[host]['version'].split('.')[0]) < 8:
        return {}
    rows = query(lab, host, 'SELECT VARIABLE_NAME, VARIABLE_VALUE FROM performance_schema.persisted_variables')
    return dict((r['VARIABLE_NAME'], r['VARIABLE_VALUE']) for r in rows if r['VARIABLE_NAME'] in VARS)


def dropin(lab, host):
    return os.path.join(lab.hosts[host]['dropin_dir'], DROPIN)


def snapshot(lab, host):
    """The flushing variables of host: (running, persisted, the role's drop-in or None)."""
    path = dropin(lab, host)
    return (values(lab, host), persisted(lab, host), open(path).read() if os.path.exists(path) else None)


def put_back(lab, host, saved):
    """host's flushing variables as snapshot() saw them."""
    vals, pers, text = saved
    # The persisted values as they were (a used server's own, or none), not only the ones the test added removed.
    now = persisted(lab, host)
    for name in VARS:
        if now.get(name) != pers.get(name):
            query(lab, host, *persisted_put_back(name, pers.get(name)))
    # capacity and max in an order the server accepts
    top = max(vals['innodb_io_capacity_max'], values(lab, host)['innodb_io_capacity'])
    query(lab, host, 'SET GLOBAL innodb_io_capacity_max = %s', (top,))
    query(lab, host, 'SET GLOBAL innodb_io_capacity = %s', (vals['innodb_io_capacity'],))
    query(lab, host, 'SET GLOBAL innodb_io_capacity_max = %s', (vals['innodb_io_capacity_max'],))
    query(lab, host, 'SET GLOBAL innodb_flush_neighbors = %s', (vals['innodb_flush_neighbors'],))
    path = dropin(lab, host)
    if text is None:
        if os.path.exists(path):
            os.unlink(path)
    else:
        with open(path, 'w') as f:
            f.write(text)


@pytest.fixture
def restore(lab):
    """Snapshot the flushing variables of a host (running, persisted, the role's drop-in) and put them back
    afterwards."""
    saved = {}

    def snap(host):
        saved[host] = snapshot(lab, host)
        return saved[host][0]
    yield snap
    for host, was in saved.items():
        put_back(lab, host, was)


def opposite(value):
    """The override whose mapped value differs from the running one, so every run must change something."""
    return ('ssd', 0) if value != 0 else ('hdd', 1)


# ---------------------------------------------------------------- storage_facts on this machine
def test_storage_facts_on_lab_datadir(lab, tmp_path):
    host = 'mariadb1011'
    argv = [os.path.join(BIN, 'ansible'), 'localhost', '-m', 'dbfleet.innodb.storage_facts', '-a',
            json.dumps(dict(login_unix_socket=lab.hosts[host]['socket'], login_user=lab.admin_user,
                            login_password=lab.admin_password, probe=True, probe_max_reads=100)),
            '-e', 'ansible_python_interpreter=%s' % os.path.join(BIN, 'python'), '-o']
    proc = subprocess.run(argv, capture_output=True, text=True, env=env(ANSIBLE_DEPRECATION_WARNINGS='0'), cwd=ROOT, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout.split('=>', 1)[1])
    assert result['path_source'] == 'server'
    assert result['resolved_path'].rstrip('/') == os.path.realpath(
        query(lab, host, 'SELECT @@datadir AS d')[0]['d']).rstrip('/')
    assert lab.admin_password not in proc.stdout
    # this machine: virtio-blk, rotational=1 -> sysfs alone says nothing; the probe decides (low confidence)
    vda = [d for d in result['devices'] if d['kind'] == 'virtio']
    if vda:
        assert vda[0]['rotational'] == 1 and vda[0]['storage_class'] == 'unknown'
        assert any('virtio-blk always reports rotational=1' in r for r in result['reasons'])
        assert 0 < result['probe']['reads'] <= 100
        assert result['confidence'] == 'low'
        assert result['storage_class'] == result['probe']['storage_class']


# ---------------------------------------------------------------- the role
def test_role_check_apply_idempotent_restart(lab, play, restore):
    """Each step is one run over the four servers, each given the class whose value differs from what it runs (a
    per-host value, from an extra variable the run templates for each host)."""
    hosts = list(LAB_HOSTS)
    before = dict((host, restore(host)) for host in hosts)
    want = dict((host, opposite(before[host]['innodb_flush_neighbors'])) for host in hosts)
    extra = {'flush_neighbors_storage_class': '{{ __test_class[inventory_hostname] }}',
             '__test_class': dict((host, want[host][0]) for host in hosts)}
    text_before = dict((host, read_or_none(dropin(lab, host))) for host in hosts)

    check = play(hosts, extra, check=True)
    for host in hosts:
        run = check[host]
        assert run.rc == 0 and run.changed >= 2, run.out[-3000:]     # drop-in + runtime value predicted
        # One run prints every host's diff: each value shown at least once per host that has it.
        old, new = before[host]['innodb_flush_neighbors'], want[host][1]
        assert run.out.count('-    innodb_flush_neighbors: \'%d\'' % old) >= sum(
            1 for h in hosts if before[h]['innodb_flush_neighbors'] == old), run.out[-3000:]
        assert run.out.count('+    innodb_flush_neighbors: \'%d\'' % new) >= sum(
            1 for h in hosts if want[h][1] == new), run.out[-3000:]
        assert values(lab, host)['innodb_flush_neighbors'] == before[host]['innodb_flush_neighbors']   # nothing changed
        assert read_or_none(dropin(lab, host)) == text_before[host]

    first = play(hosts, extra)
    for host in hosts:
        run = first[host]
        assert run.rc == 0 and run.changed == check[host].changed, run.out[-3000:]   # check mode predicted it
        assert values(lab, host)['innodb_flush_neighbors'] == want[host][1]
        text = open(dropin(lab, host)).read()
        assert re.search(r'^\[mysqld\]$', text, re.M) and re.search(r'^innodb_flush_neighbors = %d$' % want[host][1], text, re.M)
        assert 'dbfleet.innodb.flush_neighbors' in text
        assert run.facts['storage']['source'] == 'override'
        assert run.facts['desired'] == {'innodb_flush_neighbors': want[host][1]}
        assert run.facts['report']['verify']['ok'] == 1
        if lab.hosts[host].get('flavor') == 'mariadb':
            assert any('MariaDB' in n for n in run.facts['report']['notes']) == (want[host][1] > 0)

    second = play(hosts, extra)
    assert all(second[host].rc == 0 and second[host].changed == 0 for host in hosts), second[hosts[0]].out[-3000:]

    for host in hosts:
        lab.run('restart', host)
        assert values(lab, host)['innodb_flush_neighbors'] == want[host][1]
    after = play(hosts, extra, check=True)
    assert all(after[host].rc == 0 and after[host].changed == 0 for host in hosts), after[hosts[0]].out[-3000:]


def read_or_none(path):
    return open(path).read() if os.path.exists(path) else None


def test_role_unknown_leaves_server_alone(lab, play, restore):
    host = 'mysql97'
    before = restore(host)
    # On the lab's virtio disk detection has low confidence at best; asking for high makes the class unknown.
    run = play(host, {'flush_neighbors_storage_class': None, 'flush_neighbors_min_confidence': 'high'})
    assert run.rc == 0 and run.changed == 0, run.out
    assert run.facts['desired'] == {} and run.facts['report']['left_alone'] is True, run.facts
    assert 'leaving innodb_flush_neighbors alone' in run.out
    assert values(lab, host) == before


BAD_INPUT = [
    ({'flush_neighbors_storage_class': 'nvme'}, 'must be one of'),
    # The keys and values of the maps are checked by module_utils/roles/desired.py (the server's range, each key named); a map of
    # the wrong type by the argument spec, naming the variable (issue 19: not a Python type error).
    ({'flush_neighbors_map': {'ssd': 3}}, 'flush_neighbors_map.ssd must be 0-2 on MariaDB 10.11; got 3'),
    ({'flush_neighbors_map': {'fast': 0}}, 'flush_neighbors_map has keys fast; it takes only ssd, hdd, mixed'),
    ({'flush_neighbors_map': [0, 1]}, "argument 'flush_neighbors_map' is of type list"),
    ({'flush_neighbors_persist': 'set_persist'}, 'needs SET PERSIST'),
    ({'flush_neighbors_io_profile': True, 'flush_neighbors_io_capacity': {'ssd': 50}}, '100 or more'),
    ({'flush_neighbors_storage_class': None, 'flush_neighbors_min_confidence': 'high',
      'flush_neighbors_unknown_action': 'fail'}, 'nothing was changed'),
]


@pytest.fixture(scope='module')
def bad_input_run(lab, inventory, tmp_path_factory):
    """Every bad input of BAD_INPUT in one run on mariadb1011: each case is that host under a name of its own
    (servers.alias_inventory: case0, case1...), given the case's variables over the class whose value differs from what
    the server runs (a run that went through would change something). The host's flushing variables and drop-in
    before and after the run ({case: Run}), put back afterwards."""
    host = 'mariadb1011'
    tmp = tmp_path_factory.mktemp('flush-bad')
    saved = snapshot(lab, host)
    klass = 'ssd' if saved[0]['innodb_flush_neighbors'] else 'hdd'
    cases = dict(('case%d' % i, dict({'flush_neighbors_storage_class': klass}, **extra))
                 for i, (extra, _words) in enumerate(BAD_INPUT))
    book = tmp / 'play.yml'
    book.write_text(PLAYBOOK)
    argv = [os.path.join(BIN, 'ansible-playbook'), '-i', inventory, '-i',
            alias_inventory(tmp / 'cases.yml', host, cases, inventory=inventory), str(book), '--diff',
            '-e', 'target=%s out_dir=%s' % (':'.join(cases), tmp)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env(ANSIBLE_DEPRECATION_WARNINGS='0'),
                              cwd=ROOT, timeout=600, check=False)
        runs = dict((case, Run(proc, str(tmp), case)) for case in cases)
        yield dict(before=saved[0], had_dropin=saved[2] is not None, runs=runs, values=values(lab, host),
                   has_dropin=os.path.exists(dropin(lab, host)), out=proc.stdout + proc.stderr)
    finally:
        put_back(lab, host, saved)


@pytest.mark.parametrize('extra, words', BAD_INPUT)
def test_role_bad_input_changes_nothing(bad_input_run, extra, words):
    run = bad_input_run['runs']['case%d' % BAD_INPUT.index((extra, words))]
    assert run.rc != 0 and run.failed == 1 and run.changed == 0
    assert words in host_failure(run.out, 'case%d' % BAD_INPUT.index((extra, words))), run.out
    assert bad_input_run['values'] == bad_input_run['before']
    assert bad_input_run['has_dropin'] == bad_input_run['had_dropin']


def test_role_set_persist_and_io_profile_on_mysql8(lab, play, restore):
    host = 'mysql80'
    before = restore(host)
    klass, want = opposite(before['innodb_flush_neighbors'])
    extra = {'flush_neighbors_storage_class': klass, 'flush_neighbors_persist': 'set_persist',
             'flush_neighbors_io_profile': True, 'flush_neighbors_io_capacity': {klass: 3000},
             'flush_neighbors_io_capacity_max': {klass: 6000}}
    assert before['innodb_io_capacity_max'] < 3000, before
    run = play(host, extra)
    # Raising the capacity above the running maximum needs the maximum first, in the role's one
    # global_variables run: MySQL keeps a capacity set first at the running maximum, and the module's read-back fails.
    assert run.rc == 0, run.out[-3000:]
    assert values(lab, host) == {'innodb_flush_neighbors': want, 'innodb_io_capacity': 3000,
                                 'innodb_io_capacity_max': 6000}
    assert persisted(lab, host) == {'innodb_flush_neighbors': str(want), 'innodb_io_capacity': '3000',
                                    'innodb_io_capacity_max': '6000'}
    assert not os.path.exists(dropin(lab, host))          # set_persist: no drop-in
    again = play(host, extra)
    assert again.rc == 0 and again.changed == 0
