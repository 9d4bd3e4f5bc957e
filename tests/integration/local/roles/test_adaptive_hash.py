"""Role dbfleet.innodb.adaptive_hash and playbooks/rolling_restart.yml against real servers.

On the shared lab (inventories/lab): AHI on/off at runtime and in the drop-in, check mode, idempotence,
partitions reported as pending a restart, bad input. Every test puts back what it changed.

Restarts run on a private lab of this test module (lab.py --lab-dir .lab/p-ahi-it, port base
DBFLEET_LAB_PORT_BASE + 11100, MariaDB 10.11 and MySQL 5.7), started here and removed at the end.
"""
import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest
import yaml
from dbfleet_testing.lab import require_lab_hosts
from dbfleet_testing.runs import host_failure, playbook_proc, recap
from dbfleet_testing.servers import alias_inventory, socket_connect, socket_global_value

from dbfleet_testing.lab import REPO as ROOT
INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')
PY = os.path.join(ROOT, '.venv', 'bin', 'python')
LAB = os.path.join(ROOT, 'lab', 'lab.py')
PRIVATE_DIR = os.path.join(ROOT, '.lab', 'p-ahi-it')
PRIVATE_INV = os.path.join(PRIVATE_DIR, 'hosts.yml')
# Its own ports, beside the shared lab's (DBFLEET_LAB_PORT_BASE, as test_upgrade's private lab): two clones' runs on one
# machine do not meet.
PRIVATE_PORT_BASE = int(os.environ.get('DBFLEET_LAB_PORT_BASE') or 33000) + 11100
PRIVATE_ARGS = ['--lab-dir', PRIVATE_DIR, '--port-base', str(PRIVATE_PORT_BASE), '--inventory', PRIVATE_INV]
DROPIN = '60-dbfleet-adaptive_hash.cnf'


def inventory_hosts(path):
    return require_lab_hosts(path)


HOSTS = inventory_hosts(INVENTORY)


def ahi_on(hv):
    return socket_global_value(hv, 'innodb_adaptive_hash_index') in ('1', 'ON')


def set_ahi(hv, on):
    conn = socket_connect(hv)
    try:
        with conn.cursor() as cur:
            cur.execute('SET GLOBAL innodb_adaptive_hash_index = %s' % ('ON' if on else 'OFF'))
    finally:
        conn.close()


def dropin_path(hv):
    return os.path.join(hv['dbfleet_option_dropin_dir'], DROPIN)


def read_file(path):
    return open(path).read() if os.path.exists(path) else None


def run_role(inventory, limit, extra, check=False, diff=False):
    """Apply the role; returns (recap, {host: adaptive_hash_report}, output)."""
    report_dir = tempfile.mkdtemp(prefix='ahi-report-')
    play = [{
        'name': 'Apply the adaptive_hash role',
        'hosts': 'all',
        'gather_facts': False,
        'roles': [{'role': 'dbfleet.innodb.adaptive_hash'}],
        # Every host's report in one file, written once (one module run per play, not one per host).
        'post_tasks': [{
            'name': 'Keep the reports',
            'ansible.builtin.copy': {
                'content': "{{ dict(ansible_play_hosts | zip(ansible_play_hosts | map('extract', hostvars, "
                           "'adaptive_hash_report'))) | to_json }}",
                'dest': report_dir + '/reports.json', 'mode': '0600'},
            'check_mode': False, 'changed_when': False, 'run_once': True,
        }],
    }]
    pb = os.path.join(report_dir, 'play.yml')
    with open(pb, 'w') as f:
        yaml.safe_dump(play, f)
    try:
        proc = playbook_proc(inventory, pb, extra, check=check, diff=diff, limit=limit)
        reports = {}
        if os.path.exists(os.path.join(report_dir, 'reports.json')):
            with open(os.path.join(report_dir, 'reports.json'), encoding='utf-8') as handle:
                reports = json.load(handle)
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)
    return recap(proc.stdout), reports, proc.stdout + proc.stderr


def run_playbook(inventory, playbook, extra=None, check=False, limit=None):
    """(CompletedProcess, recap, output) of a playbook of playbooks/."""
    proc = playbook_proc(inventory, playbook, extra, check=check, limit=limit, timeout=900)
    return proc, recap(proc.stdout), proc.stdout + proc.stderr


class Restore(object):
    """Put back innodb_adaptive_hash_index and the role's drop-in on a shared lab host."""

    def __init__(self, hv):
        self.hv = hv

    def __enter__(self):
        self.ahi = ahi_on(self.hv)
        self.file = read_file(dropin_path(self.hv))
        return self

    def __exit__(self, *exc):
        path = dropin_path(self.hv)
        if self.file is None:
            if os.path.exists(path):
                os.remove(path)
        else:
            with open(path, 'w') as f:
                f.write(self.file)
        set_ahi(self.hv, self.ahi)


# ---------------------------------------------------------------- shared lab, no restarts
class ForeignChange(Exception):
    """Someone else changed innodb_adaptive_hash_index on this shared server meanwhile."""


def parts_inventory(directory, wanted):
    """An inventory beside the lab's giving each host its own adaptive_hash_parts (host variables, over the lab's
    group_vars); its path."""
    path = os.path.join(directory, 'parts.yml')
    with open(path, 'w', encoding='utf-8') as handle:
        yaml.safe_dump({'all': {'hosts': dict((host, {'adaptive_hash_parts': parts}) for host, parts in wanted.items())}},
                       handle)
    return path


def _shared_scenario(hosts, directory):
    """Each step is one run over every host (each flips what it runs now: a per-host value, from an extra variable
    the run templates for each host), as a DBA would run the role over the fleet: check mode (with diff), the run,
    check mode again (nothing left to do; with a misspelt variable, adaptive_hash_part, that the role names in a
    warning and ignores), then the run that flips every host back and also asks each for partitions
    it does not run (host variables of parts_inventory()), that run again (nothing to do; the partitions still
    pending), and rolling_restart.yml in check mode (what verify and the rolling restart see). What each step said,
    and what each server ran after it; raises ForeignChange when a server's value moved under the scenario."""
    start = dict((host, not ahi_on(HOSTS[host])) for host in hosts)      # flip whatever each server runs now
    running = dict((host, int(socket_global_value(HOSTS[host], 'innodb_adaptive_hash_index_parts'))) for host in hosts)
    wanted = dict((host, 4 if running[host] != 4 else 16) for host in hosts)
    with_parts = [INVENTORY, parts_inventory(directory, wanted)]

    def run(check=False, diff=False, flip=False, inventory=INVENTORY, extra=None):
        ahi = dict((host, start[host] is not flip) for host in hosts)
        variables = dict({'adaptive_hash_enabled': '{{ __test_wanted[inventory_hostname] }}', '__test_wanted': ahi},
                         **(extra or {}))
        return run_role(inventory, ':'.join(hosts), variables, check=check, diff=diff)

    def unchanged_by_others(value):
        if any(ahi_on(HOSTS[host]) is not value[host] for host in hosts):
            raise ForeignChange()

    def parts_now():
        return dict((host, int(socket_global_value(HOSTS[host], 'innodb_adaptive_hash_index_parts'))) for host in hosts)

    flipped = dict((host, not start[host]) for host in hosts)
    seen = dict(start=start, running=running, wanted=wanted)
    seen['check'] = run(check=True, diff=True)
    unchanged_by_others(flipped)                  # check mode changed nothing (or someone else did)
    seen['apply'] = run()
    seen['ahi_after_apply'] = dict((host, ahi_on(HOSTS[host])) for host in hosts)
    seen['dropins_after_apply'] = dict((host, read_file(dropin_path(HOSTS[host]))) for host in hosts)
    # A value the run did not set is the role's failure, not someone else's change: stop with the run's output.
    assert seen['ahi_after_apply'] == start, seen['apply'][2]
    seen['check_again'] = run(check=True, extra={'adaptive_hash_part': 16})
    unchanged_by_others(start)
    # The partitions written and reported pending: each host asked for a count it does not run.
    seen['flip'] = run(diff=True, flip=True, inventory=with_parts)
    seen['ahi_after_flip'] = dict((host, ahi_on(HOSTS[host])) for host in hosts)
    assert seen['ahi_after_flip'] == flipped, seen['flip'][2]
    seen['dropins'] = dict((host, read_file(dropin_path(HOSTS[host]))) for host in hosts)
    seen['parts_after_runs'] = parts_now()
    seen['second'] = run(flip=True, inventory=with_parts)
    unchanged_by_others(flipped)
    # What verify (and the rolling restart) sees.
    seen['rolling'] = run_playbook(with_parts, 'rolling_restart.yml', check=True, limit=':'.join(hosts))
    seen['parts_after_check'] = parts_now()
    return seen


@pytest.fixture(scope='module')
def shared_runs(tmp_path_factory):
    """_shared_scenario() over every host of the shared lab, every host put back afterwards (runtime value and
    drop-in), with the drop-ins before and after. The lab may be shared: a change made by someone else meanwhile
    restarts the scenario."""
    hosts = sorted(HOSTS)
    before_files = dict((host, read_file(dropin_path(HOSTS[host]))) for host in hosts)
    for attempt in range(3):
        with contextlib.ExitStack() as stack:
            for host in hosts:
                stack.enter_context(Restore(HOSTS[host]))
            try:
                seen = _shared_scenario(hosts, str(tmp_path_factory.mktemp('ahi-parts')))
                break
            except ForeignChange:
                if attempt == 2:
                    pytest.fail('innodb_adaptive_hash_index kept changing under the test: is another run '
                                'using this lab? (give each run its own DBFLEET_LAB_PORT_BASE)')
    seen.update(hosts=hosts, before_files=before_files,
                after_files=dict((host, read_file(dropin_path(HOSTS[host]))) for host in hosts))
    return seen


def test_enable_disable_runtime_dropin_check_mode_idempotence(shared_runs):
    """The lab may be shared: a change made by someone else meanwhile restarts the scenario (shared_runs)."""
    hosts, start = shared_runs['hosts'], shared_runs['start']
    rc, rep, out = shared_runs['check']
    check_changed = {}
    for host in hosts:
        assert rc[host]['failed'] == 0, out
        # The runtime value changes; the drop-in too unless it already says so.
        assert rc[host]['changed'] in (1, 2), out
        check_changed[host] = rc[host]['changed']
    for value in set(start.values()):   # the runtime diff shown for every host (one run prints all hosts' diffs)
        hosts_of = sum(1 for host in hosts if start[host] is value)
        assert out.count("innodb_adaptive_hash_index: '%s'" % ('ON' if value else 'OFF')) >= hosts_of, out

    rc, rep, out = shared_runs['apply']
    for host in hosts:
        assert rc[host]['failed'] == 0 and rc[host]['changed'] == check_changed[host], out   # check mode was exact
        assert shared_runs['ahi_after_apply'][host] is start[host]
        text = shared_runs['dropins_after_apply'][host]
        assert 'Managed by the dbfleet.innodb.adaptive_hash role' in text
        assert '[mysqld]' in text
        assert 'innodb_adaptive_hash_index = %s' % ('ON' if start[host] else 'OFF') in text
        assert rep[host]['desired'] == {'innodb_adaptive_hash_index': start[host]}
        assert rep[host]['pending_restart'] is False

    rc, rep, out = shared_runs['check_again']
    assert all(rc[host]['changed'] == 0 for host in hosts), out            # check mode: nothing left to do
    rc, rep, out = shared_runs['second']
    assert all(rc[host]['changed'] == 0 for host in hosts), out            # idempotent (the same run again)

    rc, rep, out = shared_runs['flip']
    for host in hosts:
        assert rc[host]['changed'] == 2, out           # both the runtime value and the drop-in flip
        assert shared_runs['ahi_after_flip'][host] is (not start[host])
    for value in set(start.values()):
        hosts_of = sum(1 for host in hosts if start[host] is value)
        assert out.count("+innodb_adaptive_hash_index = %s" % ('OFF' if value else 'ON')) >= hosts_of, out
    assert shared_runs['after_files'] == shared_runs['before_files']       # put back


@pytest.mark.parametrize('host', sorted(HOSTS))
def test_parts_written_and_reported_pending_restart(shared_runs, host):
    running, wanted = shared_runs['running'][host], shared_runs['wanted'][host]
    rc, rep, out = shared_runs['flip']
    assert rc[host]['failed'] == 0, out
    assert rep[host]['pending_restart'] is True
    assert rep[host]['partition_variable'] == 'innodb_adaptive_hash_index_parts'
    assert rep[host]['issues'][0]['status'] == 'pending_restart'
    assert 'innodb_adaptive_hash_index_parts = %d' % wanted in shared_runs['dropins'][host]
    assert shared_runs['parts_after_runs'][host] == running   # no restart (never)

    rc, rep, out = shared_runs['second']
    assert rc[host]['changed'] == 0, out
    assert rep[host]['pending_restart'] is True       # still reported, nothing re-done

    proc, rc, out = shared_runs['rolling']
    assert proc.returncode == 0, out
    text = ' '.join(out.split())
    order = re.search(r'would restart one server at a time, in this order: ([^;]+);', text)
    assert order and host in order.group(1).split(' -> '), out
    assert '%s: primary in topology %s, for innodb_adaptive_hash_index_parts' % (host, host) in text, out
    assert shared_runs['parts_after_check'][host] == running


BAD_INPUT = [
    ({'adaptive_hash_parts': 0}, 'adaptive_hash_parts must be 1-512 on {server}; got 0'),
    ({'adaptive_hash_parts': 513}, 'adaptive_hash_parts must be 1-512 on {server}; got 513'),
    ({'adaptive_hash_parts': 'eight'}, "adaptive_hash_parts"),
    ({'adaptive_hash_enabled': 'maybe'}, 'adaptive_hash_enabled'),
    ({'adaptive_hash_restart': 'sometimes'}, 'adaptive_hash_restart'),
    ({'adaptive_hash_restart_timeout': -5}, 'adaptive_hash_restart_timeout must be 1 or more; got -5'),
]


@pytest.fixture(scope='module')
def bad_input_run(tmp_path_factory):
    """Every bad input of BAD_INPUT in one run on the first lab host: each case is that host under a name of its own
    (servers.alias_inventory: case0, case1...), with the case's variables (and AHI asked the other way round from
    what the server runs, so a run that went through would change something). The host's value and drop-in before
    and after the run, the run's recap and output."""
    host = sorted(HOSTS)[0]
    hv = HOSTS[host]
    before = (ahi_on(hv), read_file(dropin_path(hv)))
    cases = dict(('case%d' % i, dict({'adaptive_hash_enabled': not before[0]}, **extra))
                 for i, (extra, _needle) in enumerate(BAD_INPUT))
    inventory = alias_inventory(tmp_path_factory.mktemp('ahi-bad') / 'cases.yml', host, cases)
    rc, _rep, out = run_role([INVENTORY, inventory], ':'.join(cases), {})
    return dict(host=host, before=before, after=(ahi_on(hv), read_file(dropin_path(hv))), rc=rc, out=out)


@pytest.mark.parametrize('extra,needle', BAD_INPUT)
def test_bad_input_rejected_before_anything_changes(bad_input_run, extra, needle):
    host, rc, out = bad_input_run['host'], bad_input_run['rc'], bad_input_run['out']
    hv = HOSTS[host]
    case = 'case%d' % BAD_INPUT.index((extra, needle))
    assert rc[case]['failed'] == 1, out
    assert rc[case]['changed'] == 0, out
    series = re.match(r'(\d+\.\d+)', socket_global_value(hv, 'version')).group(1)
    server = ('MariaDB ' if 'mariadb' in host else 'MySQL ') + series
    assert needle.format(server=server) in host_failure(out, case), out
    assert bad_input_run['after'] == bad_input_run['before']


def test_misspelt_variable_is_named_in_a_warning(shared_runs):
    host = sorted(HOSTS)[0]
    rc, rep, out = shared_runs['check_again']
    assert rc[host]['failed'] == 0, out
    assert 'adaptive_hash_part is not a variable of the adaptive_hash role' in ' '.join(out.split()), out
    assert 'innodb_adaptive_hash_index_parts' not in rep[host]['desired']


# ---------------------------------------------------------------- private lab: restarts
@pytest.fixture(scope='module')
def private_lab():
    up = subprocess.run([PY, LAB] + PRIVATE_ARGS + ['up', 'mariadb1011', 'mysql57'], capture_output=True, text=True,
                        timeout=600, cwd=ROOT, check=False)
    assert up.returncode == 0, up.stdout + up.stderr
    hosts = inventory_hosts(PRIVATE_INV)
    try:
        yield hosts
    finally:
        subprocess.run([PY, LAB] + PRIVATE_ARGS + ['down', '--purge'], capture_output=True, text=True,
                       timeout=300, cwd=ROOT, check=False)
        shutil.rmtree(PRIVATE_DIR, ignore_errors=True)


def private_inventory(name, change):
    """The private lab's inventory changed by change(data), written to PRIVATE_DIR/name; its path."""
    with open(PRIVATE_INV, encoding='utf-8') as handle:
        data = yaml.safe_load(handle)
    change(data)
    path = os.path.join(PRIVATE_DIR, name)
    with open(path, 'w', encoding='utf-8') as handle:
        yaml.safe_dump(data, handle)
    return path


def parts_pending(inventory, parts):
    """The role sets adaptive_hash_parts on every host of inventory (restart not allowed): pending everywhere."""
    _rc, rep, out = run_role(inventory, 'all', {'adaptive_hash_parts': parts})
    assert all(r['pending_restart'] for r in rep.values()), out


@pytest.fixture(scope='module')
def four_parts_pending(private_lab):
    """parts_pending(PRIVATE_INV, 4), once for the tests that start from it: the refused rolling restart changes
    nothing, so the one after it finds the 4 partitions still pending."""
    parts_pending(PRIVATE_INV, 4)
    return private_lab


@pytest.mark.own_lab
def test_role_restarts_when_allowed(private_lab):
    hosts = private_lab
    rc, rep, out = run_role(PRIVATE_INV, 'all', {'adaptive_hash_enabled': True, 'adaptive_hash_parts': 16,
                                                 'adaptive_hash_restart': 'allowed'}, check=True)
    for host, hv in hosts.items():
        assert rc[host]['failed'] == 0, out
        assert rc[host]['changed'] >= 1, out            # the drop-in
        assert socket_global_value(hv, 'innodb_adaptive_hash_index_parts') == '8'
    # The restart path says which hosts would restart, one at a time, and why.
    text = ' '.join(out.split())
    assert 'would restart one server at a time, in this order:' in text, out
    for host in hosts:
        assert '%s: primary in topology %s, for innodb_adaptive_hash_index_parts=16' % (host, host) in text, out

    rc, rep, out = run_role(PRIVATE_INV, 'all', {'adaptive_hash_enabled': True, 'adaptive_hash_parts': 16,
                                                 'adaptive_hash_restart': 'allowed'})
    for host, hv in hosts.items():
        assert rc[host]['failed'] == 0, out
        assert socket_global_value(hv, 'innodb_adaptive_hash_index_parts') == '16'
        assert ahi_on(hv)
        assert rep[host]['pending_restart'] is False

    rc, rep, out = run_role(PRIVATE_INV, 'all', {'adaptive_hash_enabled': True, 'adaptive_hash_parts': 16,
                                                 'adaptive_hash_restart': 'allowed'})
    for host in hosts:
        assert rc[host]['changed'] == 0, out


@pytest.mark.own_lab
def test_rolling_restart_refuses_an_inventory_that_disagrees_with_the_servers(four_parts_pending):
    hosts = four_parts_pending
    # The inventory lists mysql57 as a replica; the server replicates from no one: refused before anything.
    inv = private_inventory('rolling.yml', lambda data: data['all']['children'].update(
        replicas={'hosts': {'mysql57': {}}}))
    proc, _rc, out = run_playbook(inv, 'rolling_restart.yml', {'adaptive_hash_parts': 4})
    assert proc.returncode != 0, out
    text = ' '.join(out.split())
    assert ('mysql57: the inventory says replica (group replicas), primary: the server replicates from no one'
            in text), out
    assert all(socket_global_value(hv, 'innodb_adaptive_hash_index_parts') == '16' for hv in hosts.values())


@pytest.mark.own_lab
def test_rolling_restart_order_and_verify(four_parts_pending):
    hosts = four_parts_pending

    proc, rc, out = run_playbook(PRIVATE_INV, 'rolling_restart.yml', {'adaptive_hash_parts': 4}, check=True)
    assert proc.returncode == 0, out
    assert 'would restart one server at a time' in ' '.join(out.split()), out
    assert all(socket_global_value(hv, 'innodb_adaptive_hash_index_parts') == '16' for hv in hosts.values())

    proc, rc, out = run_playbook(PRIVATE_INV, 'rolling_restart.yml', {'adaptive_hash_parts': 4})
    assert proc.returncode == 0, out
    # Two servers that do not replicate: two topologies, inventory order, one restart at a time.
    order = re.search(r'restarts one server at a time, in this order: (\S+) -> (\S+);', ' '.join(out.split()))
    assert order and sorted(order.groups()) == sorted(hosts), out
    assert all(socket_global_value(hv, 'innodb_adaptive_hash_index_parts') == '4' for hv in hosts.values())

    # Nothing pending any more: nothing restarts.
    proc, rc, out = run_playbook(PRIVATE_INV, 'rolling_restart.yml', {'adaptive_hash_parts': 4})
    assert proc.returncode == 0, out
    assert 'in this order: nothing' in ' '.join(out.split()), out
    assert all(r['changed'] == 0 for r in rc.values()), out


@pytest.mark.own_lab
def test_rolling_restart_stops_at_first_failure(private_lab):
    hosts = private_lab

    def failing(data):
        # Every restart command fails: the first host's failure stops the run; the second is untouched.
        for group in ('mysql', 'mariadb'):
            for hv in data['all']['children'][group]['hosts'].values():
                hv['dbfleet_restart_command'] = ['/bin/false']
    inv = private_inventory('failing.yml', failing)
    parts_pending(inv, 8)
    proc, _rc, out = run_playbook(inv, 'rolling_restart.yml', {'adaptive_hash_parts': 8})
    assert proc.returncode != 0, out
    text = ' '.join(out.split())
    stopped = re.search(r'The run stopped at (\S+); not restarted: (\S+)\.', text)
    assert stopped and sorted(stopped.groups()) == sorted(hosts), out
    # Neither server restarted: both still run the old partitions.
    assert socket_global_value(hosts['mariadb1011'], 'innodb_adaptive_hash_index_parts') == '4'
    assert socket_global_value(hosts['mysql57'], 'innodb_adaptive_hash_index_parts') == '4'
