# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A generated fleet of verify results, shaped like the lab's real ones, for the report at 10,000 hosts.

Every host has the fields a real verify result has (server, option files, per-variable items with notes,
configured lines, origins), a replication role, and hosts in Galera clusters or Group Replication groups of
three; the statuses are spread as on a large fleet (mostly ok, some runtime-only values, a little drift, a
few hosts down). Values vary per flavor and per host group, so items repeat as they do on real fleets but
not all alike. Deterministic (seeded).
"""

from __future__ import annotations

import random

FLAVORS = (('mysql', '8.0.33', '/etc/mysql/conf.d'), ('mysql', '8.4.3', '/etc/mysql/conf.d'),
           ('mariadb', '10.11.9', '/etc/mysql/mariadb.conf.d'), ('mariadb', '11.8.2', '/etc/my.cnf.d'))
VARIABLES = {
    'innodb_adaptive_hash_index': ('bool', ('ON', 'OFF')),
    'innodb_adaptive_hash_index_parts': ('int', ('8', '16')),
    'innodb_buffer_pool_size': ('size', ('8589934592', '17179869184', '34359738368')),
    'innodb_flush_log_at_trx_commit': ('int', ('1', '2')),
    'innodb_flush_method': ('enum', ('O_DIRECT', 'fsync')),
    'innodb_flush_neighbors': ('int', ('0', '1')),
    'innodb_io_capacity': ('int', ('200', '2000', '4000')),
    'innodb_io_capacity_max': ('int', ('2000', '4000', '8000')),
    'innodb_log_file_size': ('size', ('1073741824', '2147483648')),
    'innodb_lru_scan_depth': ('int', ('256', '1024')),
    'wsrep_sst_auth': ('str', ('sst:Secret-1',)),
}
# (status, weight) as on a large fleet after a site.yml run, audited from the controller.
STATUS_WEIGHTS = (('ok', 800), ('startup_unknown', 120), ('drift_runtime', 25), ('drift_config', 20),
                  ('pending_restart', 15), ('unsupported', 15), ('not_settable', 2), ('error', 3))


def _item(rng, name, flavor, dropins, status):
    kind, choices = VARIABLES[name]
    desired = choices[0]
    runtime = desired if status in ('ok', 'startup_unknown', 'drift_config') else choices[-1]
    configured = None
    notes = []
    origin = 'CONFIG' if flavor == 'mariadb' else 'EXPLICIT'
    if status == 'ok':
        line = 3 + sorted(VARIABLES).index(name)
        configured = dict(value=desired, file='%s/60-dbfleet-site.cnf' % dropins, line=line, group='mysqld',
                          text='%s = %s' % (name, desired))
    elif status == 'startup_unknown':
        origin = 'SQL' if flavor == 'mariadb' else 'DYNAMIC'
        notes = ['set at runtime (%s); option files not read (audited from the controller): whether a restart keeps '
                 'it is not known' % origin]
    elif status == 'drift_runtime':
        notes = ['the server runs %s' % runtime, 'no option file sets it (default %s)' % choices[-1]]
        origin = 'COMPILED' if flavor == 'mysql' else 'COMPILE-TIME'
    elif status == 'drift_config':
        notes = ['set at runtime (SQL) and not configured: lost at the next restart']
        origin = 'SQL' if flavor == 'mariadb' else 'DYNAMIC'
    elif status == 'pending_restart':
        notes = ['read-only variable: configured %s in %s/60-dbfleet-site.cnf:4 [mysqld]; a restart applies it'
                 % (desired, dropins)]
    elif status == 'unsupported':
        notes = ['%s: no such variable on %s' % (name, flavor)]
        runtime = None
    elif status == 'not_settable':
        notes = ['Aurora reader instances run without the adaptive hash index']
    else:
        notes = ["desired value: '%sQ' is not a size" % rng.choice(('12', '64'))]
    return dict(desired=desired, desired_normalized=desired, resolved_name=name, runtime=runtime, kind=kind,
                dynamic=name not in ('innodb_log_file_size', 'innodb_flush_method', 'innodb_adaptive_hash_index_parts'),
                origin=origin, origin_path=configured['file'] if configured else None, default=choices[-1],
                persisted=None, configured=configured, command_line=None, status=status, notes=notes,
                startup=dict(value=desired if configured else None, source=None,
                             state='known' if configured else 'unavailable'))


def fleet_outcomes(hosts=10000, seed=22):
    """{host: verify result} for a generated fleet of `hosts` hosts."""
    rng = random.Random(seed)
    statuses = [s for s, w in STATUS_WEIGHTS for _i in range(w)]
    out = {}
    for number in range(hosts):
        name = 'db%05d.%s.example.net' % (number, ('fra', 'ams', 'iad', 'sin')[number % 4])
        if rng.random() < 0.005:
            out[name] = dict(failed=True, msg="cannot connect to dbfleet@10.%d.%d.%d:3306: (2003) Can't connect to "
                                              "MySQL server (timed out)" % (number // 65536, number // 256 % 256, number % 256))
            continue
        flavor, version, dropins = FLAVORS[(number // 3) % len(FLAVORS)]
        group = number // 3
        cluster = None
        if group % 5 == 0:
            cluster = dict(kind='galera', label='galera-%04d' % group, state='Synced' if rng.random() > 0.01 else 'Donor/Desynced',
                           role='member')
        elif group % 5 == 1 and flavor == 'mysql':
            cluster = dict(kind='group_replication', label='gr-%04d' % group, state='ONLINE',
                           role='PRIMARY' if number % 3 == 0 else 'SECONDARY')
        role = None if cluster else ('primary' if number % 3 == 0 else 'replica')
        variables = {}
        for var in sorted(VARIABLES):
            if var == 'wsrep_sst_auth' and not (cluster and cluster['kind'] == 'galera'):
                continue
            variables[var] = _item(rng, var, flavor, dropins, rng.choice(statuses))
        summary = {}
        for item in variables.values():
            summary[item['status']] = summary.get(item['status'], 0) + 1
        out[name] = dict(changed=False, failed=False, variables=variables, summary=summary, skipped_variables=[], errors=[],
                         option_files=dict(source='unavailable', files=[], files_read=[], errors=[], warnings=[]),
                         server=dict(flavor=flavor, version_text=version, hostname=name, port=3306,
                                     datadir='/var/lib/mysql/', local=False,
                                     replication=dict(role=role or 'member', cluster=cluster)),
                         blockers=[], engine_notes=[], target=None)
    return out
