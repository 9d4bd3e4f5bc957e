# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml, rolling_restart.yml and advise_ahi.yml check their inputs with validate_argument_spec first:
a bad value fails naming the variable and the value as written, before any lab host is touched (the
recap lists localhost only). The deprecated playbook name drop_table runs drop_tables.yml."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from dbfleet_testing.lab import require_lab_hosts
from dbfleet_testing.servers import INVENTORY, ROOT
from dbfleet_testing.runs import BIN, env, playbook_proc


@pytest.mark.parametrize('playbook,extra,words', [
    ('advise_ahi.yml', {'advise_ahi_sample_seconds': 'ten'},
     "argument 'advise_ahi_sample_seconds' is of type str and we were unable to convert to int: \"'ten'\""),
    ('advise_ahi.yml', {'advise_ahi_sample_seconds': 0}, 'advise_ahi_sample_seconds must be 1 or more; got 0'),
    ('advise_ahi.yml', {'advise_ahi_thresholds': {'min_hit_ratio': 'high'}}, 'min_hit_ratio'),
    ('rolling_restart.yml', {'rolling_restart_roles': ['adaptive_hash', 'myrock']},
     'rolling_restart_roles must be one or more of: adaptive_hash, flush_neighbors, memcached, myrocks, settings. '
     'Got no match for: myrock'),
    ('rolling_restart.yml', {'rolling_restart_all': 'perhaps'}, "argument 'rolling_restart_all' is of type str"),
    ('rolling_restart.yml', {'rolling_restart_timeout': 0}, 'rolling_restart_timeout must be 1 or more (got 0)'),
    ('site.yml', {'site_hosts': {'mysql80': 1}}, "argument 'site_hosts' is of type dict"),
    ('settings.yml', {'dbfleet_settings_text': '- innodb_io_capacity'},
     'dbfleet_settings_text must be a YAML map of settings'),
])
def test_a_bad_input_fails_before_any_host_is_touched(playbook, extra, words):
    require_lab_hosts(INVENTORY)
    proc = playbook_proc(INVENTORY, playbook, extra, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert words in ' '.join(out.split()), out
    recap = out[out.index('PLAY RECAP'):]
    assert re.findall(r'^(\S+)\s+: ok=', recap, re.M) == ['localhost'], out


def test_the_deprecated_drop_table_name_runs_drop_tables():
    """dbfleet.innodb.drop_table (playbooks/drop_table.yml) is the old name of drop_tables.yml: it says it is
    deprecated, then the same playbook runs with the same inputs (here its input check refuses a bad drop_mode)."""
    require_lab_hosts(INVENTORY)
    extra = {'drop_tables': ['dbfleet_test.never'], 'drop_window': '02:00-05:00', 'drop_mode': 'sideways'}
    proc = subprocess.run([os.path.join(BIN, 'ansible-playbook'), '-i', INVENTORY, 'dbfleet.innodb.drop_table', '-e',
                           json.dumps(extra)], capture_output=True, text=True, env=env(), timeout=300, cwd=ROOT,
                          check=False)
    out = ' '.join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0, out
    assert 'dbfleet.innodb.drop_table (playbooks/drop_table.yml) is deprecated' in out, out
    assert 'call dbfleet.innodb.drop_tables (playbooks/drop_tables.yml)' in out, out
    assert 'PLAY [Drop tables | check inputs, window, the topology and every host before anything changes]' in out, out
    assert 'drop_mode' in out and 'sideways' in out, out
