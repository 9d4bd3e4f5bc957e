# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet audit cost: playbooks/verify.yml (one verify run per host) versus the fair baseline a
competent user writes (B: one community.mysql.mysql_info, filter settings, per host and a Jinja
comparison), in the same run; C (reading the 10 variables with one mysql_variables task each) is an
extra, labelled arm, kept for comparison with earlier figures.

Usage: .venv/bin/python bench/verify_fleet/run.py [--hosts 100] [--rounds 1] [--forks 10] [--arms A,B,P,C,ctl]

An inventory of --hosts names is generated; they point, in turn, at the lab servers (mysql80,
mysql97, mariadb1011, mariadb118). Each round runs A (verify.yml), B (mysql_info), P (pt-config-diff once
per host from a worker pool: pt_config_diff.py), C (mysql_variables) and ctl (verify.yml -e
verify_mode=controller: one dbfleet.innodb.verify_fleet run on the controller audits every host over SQL,
no module run per host); --arms picks some of them.
Reported per run: wall seconds, CPU seconds of ansible and its workers (children rusage), CPU
seconds of the database servers (/proc/PID/stat utime+stime), tasks run per host (PLAY RECAP ok=),
and the B/A and C/A ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'lab'))

from dbfleet_lab.inventory import hosts_in  # noqa: E402

import pt_config_diff  # noqa: E402  (beside this file)
from fleet_inventory import TLS, delayed_login, desired, fleet_inventory, running_values  # noqa: E402  (beside this file)
import latency  # noqa: E402  (beside this file)

LAB_INVENTORY = os.path.join(ROOT, 'inventories', 'lab', 'hosts.yml')
SETTINGS = {
    'innodb_adaptive_hash_index': None, 'innodb_adaptive_hash_index_parts': None,
    'innodb_flush_neighbors': None, 'innodb_io_capacity': None, 'innodb_io_capacity_max': None,
    'innodb_lru_scan_depth': None, 'innodb_buffer_pool_size': None, 'innodb_flush_log_at_trx_commit': None,
    'innodb_log_file_size': None, 'innodb_read_only': None,
}


def lab_hosts():
    with open(LAB_INVENTORY) as handle:
        data = yaml.safe_load(handle)
    return hosts_in(data), data['all'].get('vars') or {}


def server_cpu(hosts):
    """Sum of utime+stime seconds of the lab server processes (from their pid files)."""
    total = 0.0
    tick = os.sysconf('SC_CLK_TCK')
    for hv in hosts.values():
        pid_file = os.path.join(os.path.dirname(hv['dbfleet_option_file']), 'mysqld.pid')
        try:
            pid = int(open(pid_file).read().split()[0])
            fields = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / float(tick)
        except (OSError, ValueError, IndexError):
            pass
    return total


def tasks_per_host(out):
    """Mean of PLAY RECAP ok= over the inventory hosts (the controller's localhost play excluded)."""
    counts = [int(m.group(2)) for m in re.finditer(r'^(h\d{3}-\S+)\s+: ok=(\d+)', out, re.M)]
    return sum(counts) / len(counts) if counts else 0.0


def module_runs_per_host(out):
    """Mean module runs per inventory host, from tests/integration/callback_plugins/module_runs.py
    (enabled with DBFLEET_BENCH_MODULE_RUNS=1); None when it did not run."""
    counts = [int(m.group(1)) for m in re.finditer(r'^MODULE RUNS host=h\d{3}-\S+ runs=(\d+)', out, re.M)]
    return sum(counts) / len(counts) if counts else None


def run(cmd, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit('command failed: %s' % ' '.join(cmd[:3]))
    return wall, cpu, proc.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--hosts', type=int, default=100)
    parser.add_argument('--rounds', type=int, default=1)
    parser.add_argument('--forks', type=int, default=10)
    parser.add_argument('--arms', default='A,B,P,C,ctl', help='comma-separated arms to run (A, B, P, C, ctl)')
    parser.add_argument('--rtt', help='latency table: comma-separated round-trip times in ms (e.g. 1,20,100); '
                        'every host is reached through the delayed path (latency.py), arms ctl and B only')
    parser.add_argument('--pool', help='controller mode: verify_pool (default: the playbook\'s)')
    parser.add_argument('--workers', help='controller mode and engine: worker processes (default: one per usable CPU)')
    parser.add_argument('--engine', help=argparse.SUPPRESS)     # the arm "engine" of the latency table
    args = parser.parse_args()
    if args.engine:
        return engine_only(args.engine, args.pool, args.workers)
    if args.rtt:
        return latency_table(args)
    if not os.path.exists(LAB_INVENTORY):
        raise SystemExit('the lab is not up: make lab-up')
    lab, top = lab_hosts()
    names = sorted(lab)
    current = running_values(lab, SETTINGS)
    tmp = tempfile.mkdtemp(prefix='bench-verify-fleet-')
    # As a fleet is usually described (fleet_inventory.py): the login and the desired settings in group variables
    # (one group per lab server: its running values), and one host in ten with its own desired settings (drift).
    groups = dict((target, dict(lab[target], verify_extra_settings=desired(current[target]))) for target in names)
    inventory, _wants = fleet_inventory(top, groups, args.hosts, 'h%03d-%s')
    inv_path = os.path.join(tmp, 'hosts.yml')
    with open(inv_path, 'w') as handle:
        yaml.safe_dump(inventory, handle)
    env = dict(os.environ, PATH='%s/.venv/bin:%s' % (ROOT, os.environ.get('PATH', '')),
               ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.collections'), ANSIBLE_FORKS=str(args.forks))
    if os.environ.get('DBFLEET_BENCH_MODULE_RUNS') == '1':
        env.update(ANSIBLE_CALLBACK_PLUGINS=os.path.join(ROOT, 'tests', 'integration', 'callback_plugins'),
                   ANSIBLE_CALLBACKS_ENABLED='module_runs')
    playbook = os.path.join(ROOT, '.venv', 'bin', 'ansible-playbook')
    cmd_a = [playbook, '-i', inv_path, os.path.join(ROOT, 'playbooks', 'verify.yml'),
             '-e', json.dumps({'verify_desired_from': [], 'verify_report_dir': os.path.join(tmp, 'reports')})]
    cmd_b = [playbook, '-i', inv_path, os.path.join(HERE, 'mysql_info.yml')]
    cmd_c = [playbook, '-i', inv_path, os.path.join(HERE, 'mysql_variables.yml')]
    cmd_ctl = [playbook, '-i', inv_path, os.path.join(ROOT, 'playbooks', 'verify.yml'),
               '-e', json.dumps({'verify_desired_from': [], 'verify_mode': 'controller',
                                 'verify_report_dir': os.path.join(tmp, 'reports-ctl')})]
    arms = [a.strip() for a in args.arms.split(',') if a.strip()]
    print('hosts=%d (on %d lab servers) settings=10 forks=%d rounds=%d cores=%d'
          % (args.hosts, len(names), args.forks, args.rounds, os.cpu_count()))
    rows = []
    for r in range(args.rounds):
        for label, cmd in (('A verify.yml', cmd_a), ('B mysql_info (fair)', cmd_b),
                           ('P pt-config-diff', None), ('C mysql_variables x10', cmd_c),
                           ('ctl verify.yml controller', cmd_ctl)):
            if label.split()[0] not in arms:
                continue
            srv0 = server_cpu(lab)
            if cmd is None:
                wall, cpu, drift_hosts = pt_config_diff.run(pt_config_diff.flat_hosts(inventory), args.forks)
                out = 'baseline: %d hosts with drift' % drift_hosts
            else:
                wall, cpu, out = run(cmd, env)
            srv = server_cpu(lab) - srv0
            tasks = tasks_per_host(out)
            rows.append((r, label, wall, cpu, srv, tasks))
            print('round %d  %-22s wall %7.1f s  ansible CPU %7.1f s  server CPU %6.2f s  tasks/host %.1f'
                  % (r + 1, label, wall, cpu, srv, tasks), flush=True)
            if module_runs_per_host(out) is not None:
                print('          module runs/host %.2f' % module_runs_per_host(out))
            drift = re.search(r'baseline: (\d+) hosts with drift', out)
            if drift:
                print('          %s found %s hosts with drift' % (label.split()[0], drift.group(1)))
    by_arm = dict((key, [x for x in rows if x[1].split()[0] == key]) for key in arms)

    def mean(items, idx):
        return sum(x[idx] for x in items) / len(items)
    for key, directory in (('A', 'reports'), ('ctl', 'reports-ctl')):
        if key not in arms:
            continue
        with open(os.path.join(tmp, directory, 'verify.json')) as handle:
            report = json.load(handle)
        print('audit report (%s): %d hosts, %d ok, %d with drift, %d in error'
              % (key, report['summary']['hosts'], report['summary']['hosts_ok'], report['summary']['hosts_drift'],
                 report['summary']['hosts_error']))
    for what, idx, unit in (('wall', 2, 's'), ('ansible CPU', 3, 's'), ('server CPU', 4, 's'),
                            ('tasks per host', 5, '')):
        print('mean %s: %s' % (what, ', '.join('%s %.2f%s' % (k, mean(v, idx), unit) for k, v in by_arm.items())))
        if 'A' in arms and len(arms) > 1 and mean(by_arm['A'], idx) > 0:
            ratios = ['%s/A = %.2fx' % (k, mean(v, idx) / mean(by_arm['A'], idx))
                      for k, v in by_arm.items() if k != 'A']
            print('   ratios to A: %s' % ', '.join(ratios))
    per_host = ['%s %.4f s' % (k, mean(v, 3) / args.hosts) for k, v in by_arm.items()]
    print('ansible CPU per host: %s' % ', '.join(per_host))
    if 'B' in arms and 'ctl' in arms:
        print('controller mode vs the fair baseline B: wall B/ctl = %.1fx, ansible CPU B/ctl = %.1fx'
              % (mean(by_arm['B'], 2) / mean(by_arm['ctl'], 2), mean(by_arm['B'], 3) / mean(by_arm['ctl'], 3)))
    if 'P' in arms and 'ctl' in arms:
        print('controller mode vs pt-config-diff per host: wall P/ctl = %.1fx, CPU P/ctl = %.1fx'
              % (mean(by_arm['P'], 2) / mean(by_arm['ctl'], 2), mean(by_arm['P'], 3) / mean(by_arm['ctl'], 3)))
    print('files: %s' % tmp)


# ---------------------------------------------------------------- the latency table
class TreeSampler(object):
    """Peak resident memory (sum over the process and its descendants), sampled every 0.1 s."""

    def __init__(self, pid):
        import threading
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _tree(self):
        children, rss = {}, {}
        page = os.sysconf('SC_PAGE_SIZE')
        for entry in os.listdir('/proc'):
            if not entry.isdigit():
                continue
            try:
                with open('/proc/%s/stat' % entry) as handle:
                    fields = handle.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * page
        total, todo = 0, [self.pid]
        while todo:
            pid = todo.pop()
            total += rss.get(pid, 0)
            todo.extend(children.get(pid, ()))
        return total

    def _loop(self):
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, self._tree())

    def stop(self):
        self._stop.set()
        self._thread.join()
        return self.peak


def run_sampled(cmd, env):
    """(wall s, CPU s of the process tree, peak tree RSS bytes, stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = TreeSampler(proc.pid)
    out, err = proc.communicate()
    peak = sampler.stop()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(out[-4000:] + err[-4000:])
        raise SystemExit('command failed: %s' % ' '.join(cmd[:3]))
    return wall, cpu, peak, out


def delayed_inventory(path, lab, top, current, hosts, ca):
    """The bench inventory with every host at its own address of the delayed path (group per lab server)."""
    groups = dict((target, dict(delayed_login(path, target, lab[target]), verify_extra_settings=desired(current[target])))
                  for target in lab)
    return fleet_inventory(dict(top, bench_ca_cert=ca), groups, hosts, 'h%05d-%s', path.address)[0]


def report_counts(directory):
    with open(os.path.join(directory, 'verify.json')) as handle:
        summary = json.load(handle)['summary']
    return '%d ok, %d startup_unknown, %d drift, %d error' % (
        summary['hosts_ok'], summary['hosts_startup_unknown'], summary['hosts_drift'], summary['hosts_error'])


def latency_table(args):
    """One run per row: for each RTT, the delayed path up, then the arms (ctl; B at --hosts too if asked)."""
    if not os.path.exists(LAB_INVENTORY):
        raise SystemExit('the lab is not up: make lab-up')
    lab, top = lab_hosts()
    lab = dict((k, v) for k, v in lab.items() if k in TLS)
    if sorted(lab) != sorted(TLS):
        raise SystemExit('the latency table needs the lab servers %s up (make lab-up)' % ', '.join(sorted(TLS)))
    ca = next(hv['dbfleet_lab_tls_ca'] for hv in lab.values() if hv.get('dbfleet_lab_tls_ca'))
    current = running_values(lab, SETTINGS)
    tmp = tempfile.mkdtemp(prefix='bench-verify-fleet-rtt-')
    env = dict(os.environ, PATH='%s/.venv/bin:%s' % (ROOT, os.environ.get('PATH', '')),
               ANSIBLE_CONFIG=os.path.join(ROOT, 'ansible.cfg'),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, '.collections'), ANSIBLE_FORKS=str(args.forks))
    playbook = os.path.join(ROOT, '.venv', 'bin', 'ansible-playbook')
    arms = [a.strip() for a in args.arms.split(',') if a.strip() in ('engine', 'ctl', 'B')] or ['engine', 'ctl']
    servers = [(name, '127.0.0.1', int(lab[name]['dbfleet_login_port'])) for name in sorted(lab)]
    print('hosts=%d (on %d lab servers, each host its own address through the delayed path) settings=10 '
          'forks=%d cores=%d arms=%s' % (args.hosts, len(lab), args.forks, os.cpu_count(), ','.join(arms)))
    print('| RTT | probe: greeting / request | hosts | arm | wall | controller CPU | controller peak RSS | '
          'server CPU | relay CPU | load | verdicts |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    rows = []
    # Thousands of inventory names share four servers here (in a fleet each has its own): the servers take
    # as many connections as the controller opens for the run, and get their own value back at the end.
    limits = set_max_connections(lab, BENCH_MAX_CONNECTIONS)
    try:
        latency_rows(args, lab, top, current, ca, tmp, env, playbook, arms, servers, rows)
    finally:
        set_max_connections(lab, limits)
    for rtt in sorted(set(r[0] for r in rows)):
        by = dict((r[1], r) for r in rows if r[0] == rtt)
        for arm in ('engine', 'ctl'):
            if 'B' in by and arm in by:
                print('%g ms: B/%s wall %.1fx, controller CPU %.1fx, peak RSS %.1fx'
                      % (rtt, arm, by['B'][2] / by[arm][2], by['B'][3] / by[arm][3], by['B'][4] / float(by[arm][4])))
    print('files: %s' % tmp)


BENCH_MAX_CONNECTIONS = 2000


def engine_only(inv_path, pool, workers=None):
    """The arm "engine": the controller audit's engine alone (fleet_pool.run_pool over audit_host, as the
    action runs it, the login of each host as the bench inventory gives it), no Ansible and no report."""
    sys.path.insert(0, os.path.join(ROOT, '.collections'))
    from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_capacity, fleet_pool, verify_fleet
    with open(inv_path) as handle:
        inventory = yaml.safe_load(handle)
    ca = inventory['all']['vars']['bench_ca_cert']
    jobs = {}
    for group in inventory['all']['children'].values():
        gv = group['vars']
        for name, hv in group['hosts'].items():
            params = dict(login_user=gv['dbfleet_login_user'], login_password=gv['dbfleet_login_password'],
                          login_host=hv['dbfleet_login_host'], login_port=gv['dbfleet_login_port'],
                          login_ssl_mode=gv['dbfleet_login_ssl_mode'], ca_cert=ca, config_file=None)
            jobs[name] = (params, hv.get('verify_extra_settings') or gv['verify_extra_settings'])
    size, error = fleet_capacity.pool_size(int(pool) if pool else None, len(jobs))
    if error:
        raise SystemExit(error)
    count, error = fleet_capacity.worker_count(int(workers) if workers else None, len(jobs))
    if error:
        raise SystemExit(error)
    results = fleet_pool.run_workers(jobs, lambda job: verify_fleet.audit_host(job[0], job[1]), size, count)
    summary = verify_fleet.summarize(results)
    print('engine: %d ok, %d startup_unknown, %d drift, %d error, pool %d, workers %d'
          % (summary['hosts_ok'], summary['hosts_startup_unknown'], summary['hosts_drift'], summary['hosts_error'],
             size, count))


def set_max_connections(lab, values):
    """SET GLOBAL max_connections on each lab server (values: one number, or {server: number}); the old values."""
    sys.path.insert(0, os.path.join(ROOT, '.collections'))
    import pymysql
    old = {}
    for name, hv in lab.items():
        conn = pymysql.connect(host=hv['dbfleet_login_host'], port=int(hv['dbfleet_login_port']),
                               user=hv['dbfleet_login_user'], password=hv['dbfleet_login_password'])
        with conn.cursor() as cur:
            cur.execute('SELECT @@GLOBAL.max_connections')
            old[name] = int(cur.fetchone()[0])
            cur.execute('SET GLOBAL max_connections = %d' % int(values[name] if isinstance(values, dict) else values))
        conn.close()
    return old


def latency_rows(args, lab, top, current, ca, tmp, env, playbook, arms, servers, rows):
    for rtt in [float(x) for x in args.rtt.split(',')]:
        # DBFLEET_BENCH_DELAY_INSTANCE=1: the second path (latency.py), for a row beside a run on the first
        with latency.DelayedPath(rtt, servers, tmp, int(os.environ.get('DBFLEET_BENCH_DELAY_INSTANCE', '0'))) as path:
            probe = latency.probe(path.address(0), path.ports[servers[0][0]], 10)
            inventory = delayed_inventory(path, lab, top, current, args.hosts, ca)
            inv_path = os.path.join(tmp, 'hosts-%g.yml' % rtt)
            with open(inv_path, 'w') as handle:
                yaml.safe_dump(inventory, handle)
            for arm in arms:
                reports = os.path.join(tmp, 'reports-%s-%g' % (arm, rtt))
                if arm == 'ctl':
                    extra = {'verify_desired_from': [], 'verify_mode': 'controller', 'verify_report_dir': reports,
                             'verify_controller_ca_cert': ca}
                    if args.pool:
                        extra['verify_pool'] = int(args.pool)
                    if args.workers:
                        extra['verify_workers'] = int(args.workers)
                    cmd = [playbook, '-i', inv_path, os.path.join(ROOT, 'playbooks', 'verify.yml'), '-e', json.dumps(extra)]
                elif arm == 'engine':
                    cmd = [sys.executable, os.path.abspath(__file__), '--engine', inv_path] + (
                        ['--pool', str(args.pool)] if args.pool else []) + (
                        ['--workers', str(args.workers)] if args.workers else [])
                else:
                    cmd = [playbook, '-i', inv_path, os.path.join(HERE, 'mysql_info.yml'), '-e',
                           json.dumps({'bench_ca_cert': ca})]
                relay0, server0 = path.relay_cpu(), server_cpu(lab)
                wall, cpu, peak, out = run_sampled(cmd, env)
                relay, server = path.relay_cpu() - relay0, server_cpu(lab) - server0
                with open('/proc/loadavg') as handle:
                    load = handle.read().split()[0]
                if arm == 'ctl':
                    verdicts = report_counts(reports)
                elif arm == 'engine':
                    found = re.search(r'engine: (.*)', out)
                    verdicts = found.group(1) if found else '?'
                else:
                    found = re.search(r'baseline: (\d+) hosts with drift', out)
                    verdicts = '%s drift' % (found.group(1) if found else '?')
                rows.append((rtt, arm, wall, cpu, peak))
                print('| %g ms | %.1f / %.1f ms | %d | %s | %.1f s | %.1f s | %d MiB | %.1f s | %.2f s | %s | %s |'
                      % (rtt, probe['greeting_ms'], probe['request_ms'], args.hosts, arm, wall, cpu,
                         peak // (1024 * 1024), server, relay, load, verdicts), flush=True)


if __name__ == '__main__':
    main()
