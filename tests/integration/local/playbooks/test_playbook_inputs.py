# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every playbook checks its inputs with the lookup dbfleet.innodb.playbook_inputs: verify.yml, rolling_restart.yml
and ahi_advisor.yml in their first play, on localhost: a bad value fails naming the variable and the value as
written, before any lab host is touched (the recap lists localhost only). site.yml, settings.yml and
prerequisites.yml in their play's hosts keyword: a bad value fails as Ansible works out the hosts, whatever --limit
is, before any task runs. drop_tables.yml and convert_tables.yml take their inputs from
the same lookup in their first task (drop_tables.yml's hosts keyword takes drop_tables_hosts alone from it): a bad
type, choice, range, table name or engine fails there, every problem in one message naming the variable and the value, and no task
runs on any host. The deprecated playbook names drop_table and advise_ahi run drop_tables.yml and ahi_advisor.yml, whose old variable
names (drop_<option>, advise_ahi_<option>) still work, deprecated.

The lookup names every bad type, choice, range and value check in one message, so the cases of one playbook and
--limit share a run where their variables differ (TOGETHER): each case still asserts its own words in that run's
output. A rule across inputs (drop_tables_lift_super_read_only) is checked only once every input is good: a run of its
own."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from dbfleet_testing.lab import require_lab_hosts
from dbfleet_testing.servers import INVENTORY, ROOT
from dbfleet_testing.runs import BIN, env, flat, playbook_proc, recap


@pytest.fixture(scope='module')
def shared_run():
    """ansible-playbook on the lab inventory once per playbook, extra vars and --limit of this module:
    shared_run(cases, together, case, limit) runs case (an item of cases: playbook, extra vars, ...) with the extra vars
    of every case of its group in together (tuples of indices into cases; each variable given by one case only)."""
    done = {}

    def run(cases, together, case, limit=None, base=None):
        group = next(g for g in together if cases.index(case) in g)
        extra = dict(base or {})
        for other in group:
            assert not set(cases[other][1]) & (set(extra) - set(base or {})), (cases[other], extra)
            extra.update(cases[other][1])
        key = (case[0], json.dumps(extra, sort_keys=True), limit)
        if key not in done:
            require_lab_hosts(INVENTORY)
            done[key] = playbook_proc(INVENTORY, case[0], extra, limit=limit, timeout=300)
        return done[key]
    return run


BEFORE_ANY_HOST = [
    ('rolling_restart.yml', {'rolling_restart_roles': ['adaptive_hash', 'myrock']},
     'rolling_restart_roles must be one or more of: %s. Got no match for: myrock' % ', '.join(desired.ROLES)),
    ('rolling_restart.yml', {'rolling_restart_all': 'perhaps'}, "argument 'rolling_restart_all' is of type str"),
    ('rolling_restart.yml', {'rolling_restart_timeout': 0}, 'rolling_restart_timeout=0 is out of range 1 or more'),
    ('rolling_restart.yml', {'rolling_restart_max_lag': -1, 'rolling_restart_timeout': '0'},
     'rolling_restart_max_lag=-1 is out of range 0 or more; rolling_restart_timeout=0 is out of range 1 or more'),
    ('verify.yml', {'verify_target_version': 'oracle-8.4', 'verify_timeout': 'soon'},
     "verify_target_version=oracle-8.4: value 'oracle-8.4' is not an upgrade target"),
]
# rolling_restart_timeout 0 and '0' are two runs.
BEFORE_ANY_HOST_TOGETHER = [(0, 1, 3), (2,), (4,)]


@pytest.mark.parametrize('playbook,extra,words', BEFORE_ANY_HOST)
def test_a_bad_input_fails_before_any_host_is_touched(playbook, extra, words, shared_run):
    proc = shared_run(BEFORE_ANY_HOST, BEFORE_ANY_HOST_TOGETHER, (playbook, extra, words))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert words in ' '.join(out.split()), out
    recap = out[out.index('PLAY RECAP'):]
    assert re.findall(r'^(\S+)\s+: ok=', recap, re.M) == ['localhost'], out


@pytest.mark.parametrize('playbook,extra,words', [
    ('rolling_restart.yml', {'rolling_restart_timeout': 0}, 'rolling_restart_timeout=0 is out of range 1 or more'),
])
def test_a_limit_that_leaves_localhost_out_still_checks_the_inputs(playbook, extra, words):
    """--limit mysql80 skips the first play (localhost): the play that reads the hosts takes the inputs itself, in its
    first task, on the controller; it fails with the same message and no later task runs."""
    require_lab_hosts(INVENTORY)
    proc = playbook_proc(INVENTORY, playbook, extra, limit='mysql80', timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert words in flat(out), out
    assert re.findall(r'^TASK \[(.+?)\]', out, re.M) == ['Take the inputs, checked, with their defaults'], out


HOSTS_KEYWORD = [
    ('site.yml', {'site_hosts': {'mysql80': 1}}, 'mysql80', "argument 'site_hosts' is of type dict"),
    ('settings.yml', {'dbfleet_settings_text': '- innodb_io_capacity'}, 'mysql80',
     'dbfleet_settings_text=- innodb_io_capacity: must be a YAML map of settings'),
    ('prerequisites.yml', {'prerequisites_method': 'apt'}, None,
     'value of prerequisites_method must be one of: auto, package, pip, got: apt'),
    # verify.yml's first play is localhost's: the audit play checks them again in its hosts keyword.
    ('verify.yml', {'verify_timeout': 'soon'}, 'mysql80', "argument 'verify_timeout' is of type str"),
    ('ahi_advisor.yml', {'ahi_advisor_sample_seconds': 'ten'}, None,
     "argument 'ahi_advisor_sample_seconds' is of type str and we were unable to convert to int: \"'ten'\""),
    ('ahi_advisor.yml', {'ahi_advisor_sample_seconds': 0}, 'mysql80', 'ahi_advisor_sample_seconds=0 is out of range 1-3600'),
    ('ahi_advisor.yml', {'ahi_advisor_sample_seconds': 3601, 'ahi_advisor_thresholds': {'max_write_share': 1.5}}, None,
     'ahi_advisor_sample_seconds=3601 is out of range 1-3600; ahi_advisor_thresholds={"max_write_share": 1.5}: '
     'max_write_share=1.5 is out of range 0-1'),
    ('ahi_advisor.yml', {'ahi_advisor_thresholds': {'min_hit_ratio': 'high'}}, None, 'min_hit_ratio'),
]
HOSTS_KEYWORD_TOGETHER = [(0,), (1,), (2,), (3,), (4, 7), (5,), (6,)]


@pytest.mark.parametrize('playbook,extra,limit,words', HOSTS_KEYWORD)
def test_a_bad_input_fails_as_the_hosts_are_worked_out_whatever_the_limit(playbook, extra, limit, words, shared_run):
    """The play's hosts keyword takes them from the lookup: with --limit mysql80 (localhost left out) too, the run
    fails naming the variable and the value before any task runs on any host."""
    proc = shared_run(HOSTS_KEYWORD, HOSTS_KEYWORD_TOGETHER, (playbook, extra, limit, words), limit=limit)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "playbooks/%s: bad input, nothing was run: " % playbook in flat(out), out
    assert words in flat(out), out
    assert re.findall(r'^TASK \[', out, re.M) == [] and 'PLAY RECAP' not in out, out


GOOD = {
    'drop_tables.yml': {'drop_tables_tables': ['dbfleet_test.never'], 'drop_tables_window': '02:00-05:00'},
    'convert_tables.yml': {'convert_tables_tables': ['dbfleet_test.never'], 'convert_tables_window': '02:00-05:00'},
}


GUARDED = [
    ('drop_tables.yml', {'drop_tables_lock_wait_timeout': 0, 'drop_tables_retries': '11', 'drop_tables_follow_timeout': 86401},
     ['drop_tables_lock_wait_timeout=0 is out of range 1-3600', 'drop_tables_retries=11 is out of range 0-10',
      'drop_tables_follow_timeout=86401 is out of range 1-86400']),
    ('drop_tables.yml', {'drop_tables_retry_delay': 301, 'drop_tables_replica_ready_timeout': 0, 'drop_tables_max_lag': -1,
                         'drop_tables_mode': 'sideways', 'drop_tables_tables': ['mysql.user']},
     ['drop_tables_retry_delay=301 is out of range 0-300', 'drop_tables_replica_ready_timeout=0 is out of range 1 or more',
      'drop_tables_max_lag=-1 is out of range 0 or more', 'value of drop_tables_mode must be one of: replicated, rolling, got: sideways',
      'drop_tables_tables=["mysql.user"]: table \'mysql.user\': schema \'mysql\' is a system schema']),
    ('drop_tables.yml', {'drop_tables_lift_super_read_only': True},
     ['drop_tables_lift_super_read_only is only for drop_tables_mode=rolling']),
    ('convert_tables.yml', {'convert_tables_lock_wait_timeout': 3601, 'convert_tables_retries': -1,
                            'convert_tables_retry_delay': -0.5},
     ['convert_tables_lock_wait_timeout=3601 is out of range 1-3600', 'convert_tables_retries=-1 is out of range 0-10',
      'convert_tables_retry_delay=-0.5 is out of range 0-300']),
    ('convert_tables.yml', {'convert_tables_max_lag': -1, 'convert_tables_replica_timeout': 0,
                            'convert_tables_engine': 'MEMORY', 'convert_tables_whole_topology': 'perhaps'},
     ['convert_tables_max_lag=-1 is out of range 0 or more', 'convert_tables_replica_timeout=0 is out of range 1 or more',
      "convert_tables_engine=MEMORY: engine 'MEMORY': tables are converted to InnoDB or ROCKSDB (MyRocks) only",
      "argument 'convert_tables_whole_topology' is of type str and we were unable to convert to bool"]),
]
# drop_tables_lift_super_read_only's rule is checked once every input is good: a run of its own.
GUARDED_TOGETHER = [(0, 1), (2,), (3, 4)]


@pytest.mark.parametrize('playbook,extra,words', GUARDED)
def test_a_bad_range_of_a_guarded_change_fails_before_any_host_is_touched(playbook, extra, words, shared_run):
    """The first task (the lookup, on the controller) fails with every problem in one message; no later task runs,
    so no host is connected to: the recap counts no task done on any host."""
    proc = shared_run(GUARDED, GUARDED_TOGETHER, (playbook, extra, words), base=GOOD[playbook])
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    text = flat(out)
    assert 'playbooks/%s: bad input, nothing was run: ' % playbook in text, out
    for one in words:
        assert one in text, out
    tasks = re.findall(r'^TASK \[(.+?)\]', out, re.M)
    assert tasks == ['Check the inputs and take them once, with their defaults'], out
    counts = recap(out)
    assert counts and all(c['ok'] == 0 and c['changed'] == 0 for c in counts.values()), out
    assert sum(c['failed'] for c in counts.values()) == 1, out


def test_the_deprecated_drop_table_name_and_variable_names_run_drop_tables():
    """dbfleet.innodb.drop_table (playbooks/drop_table.yml) is the old name of drop_tables.yml: it says it is
    deprecated, then the same playbook runs with the same inputs. The variables' old names (drop_<option>) are read as
    the new (drop_tables_<option>), each with a deprecation warning naming both: here the input check refuses the
    bad drop_mode by its new name."""
    require_lab_hosts(INVENTORY)
    extra = {'drop_tables': ['dbfleet_test.never'], 'drop_window': '02:00-05:00', 'drop_mode': 'sideways'}
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', INVENTORY, 'dbfleet.innodb.drop_table', '-e',
                           json.dumps(extra)], capture_output=True, text=True, env=env(), timeout=300, cwd=ROOT,
                          check=False)
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0, out
    assert 'dbfleet.innodb.drop_table (playbooks/drop_table.yml) is deprecated' in out, out
    assert 'call dbfleet.innodb.drop_tables (playbooks/drop_tables.yml)' in out, out
    for old, new in (('drop_tables', 'drop_tables_tables'), ('drop_window', 'drop_tables_window'),
                     ('drop_mode', 'drop_tables_mode')):
        assert ('%s is the old name of %s (playbooks/drop_tables.yml): use %s' % (old, new, new)) in out, out
    assert ('playbooks/drop_tables.yml: bad input, nothing was run: value of drop_tables_mode must be one of: '
            'replicated, rolling, got: sideways') in out, out


def test_the_deprecated_advise_ahi_name_and_variable_names_run_ahi_advisor():
    """dbfleet.innodb.advise_ahi is the old name of ahi_advisor.yml (the module's name): it says so, then ahi_advisor.yml
    reads advise_ahi_sample_seconds as ahi_advisor_sample_seconds, with a deprecation warning naming both, and
    refuses the value out of range by its new name before any host is sampled."""
    require_lab_hosts(INVENTORY)
    proc = playbook_proc(INVENTORY, 'advise_ahi.yml', {'advise_ahi_sample_seconds': 0}, timeout=300)
    out = flat(proc.stdout + proc.stderr)
    assert proc.returncode != 0, out
    assert 'dbfleet.innodb.advise_ahi (playbooks/advise_ahi.yml) is deprecated' in out, out
    assert ('advise_ahi_sample_seconds is the old name of ahi_advisor_sample_seconds (playbooks/ahi_advisor.yml): '
            'use ahi_advisor_sample_seconds') in out, out
    assert 'playbooks/ahi_advisor.yml: bad input, nothing was run: ahi_advisor_sample_seconds=0 is out of range' in out, out
