# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Arm P of bench/verify_fleet: Percona Toolkit's pt-config-diff, once per host, from a shell-style
worker pool (what `xargs -P <forks> pt-config-diff` over an inventory does), no Ansible at all.

Each host's desired settings (verify_extra_settings of the bench inventory) are written as a
[mysqld] option file, and `pt-config-diff <file> h=...,P=...` compares it with the running server
(exit 1 = differences). This is the tool a DBA reaches for without this collection when the
question is "does the running server match this file"; it reads no persisted values and writes no
report.

Usage (standalone): .venv/bin/python bench/verify_fleet/pt_config_diff.py INVENTORY [--forks 10]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import yaml


def _option_file(directory, host, settings):
    path = os.path.join(directory, '%s.cnf' % host)
    with open(path, 'w') as handle:
        handle.write('[mysqld]\n')
        for name, value in sorted(settings.items()):
            handle.write('%s = %s\n' % (name, value))
    return path


def _one(pt, path, hv):
    dsn = 'h=%s,P=%s,u=%s,p=%s' % (hv['dbfleet_login_host'], hv['dbfleet_login_port'],
                                   hv['dbfleet_login_user'], hv['dbfleet_login_password'])
    proc = subprocess.run([pt, '--report-width', '300', path, dsn], capture_output=True, text=True,
                          check=False, timeout=120)
    if proc.returncode not in (0, 1):
        raise RuntimeError('pt-config-diff failed for %s: %s' % (path, proc.stderr.strip()))
    return proc.returncode == 1


def flat_hosts(inventory):
    """{host: its variables} of a bench inventory (group variables, then the host's own)."""
    out = {}
    for group in (inventory['all'].get('children') or {}).values():
        for name, own in (group.get('hosts') or {}).items():
            out[name] = dict(inventory['all'].get('vars') or {}, **dict(group.get('vars') or {}, **(own or {})))
    for name, own in (inventory['all'].get('hosts') or {}).items():
        out[name] = dict(inventory['all'].get('vars') or {}, **(own or {}))
    return out


def run(hosts, forks=10):
    """(wall seconds, CPU seconds of the pt-config-diff processes, hosts with drift) for hosts
    ({name: variables with dbfleet_login_* and verify_extra_settings})."""
    pt = shutil.which('pt-config-diff')
    if pt is None:
        raise SystemExit('pt-config-diff (Debian package percona-toolkit) is not installed: make deps')
    work = tempfile.mkdtemp(prefix='bench-pt-config-diff-')
    files = dict((h, _option_file(work, h, hv['verify_extra_settings'])) for h, hv in hosts.items())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=forks) as pool:
        drift = list(pool.map(lambda h: _one(pt, files[h], hosts[h]), sorted(hosts)))
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shutil.rmtree(work, ignore_errors=True)
    return wall, cpu, sum(1 for d in drift if d)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('inventory')
    parser.add_argument('--forks', type=int, default=10)
    args = parser.parse_args()
    with open(args.inventory) as handle:
        hosts = flat_hosts(yaml.safe_load(handle))
    wall, cpu, drift = run(hosts, args.forks)
    print('P pt-config-diff: wall %.1f s, CPU %.1f s, %d hosts with drift' % (wall, cpu, drift))


if __name__ == '__main__':
    main()
