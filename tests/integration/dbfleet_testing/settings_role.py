"""The settings role (dbfleet.innodb.settings) as its tests run it, on the local lab and on the SSH fleet: one map of
InnoDB settings, a play with the role, and what the run changed (tests/integration/callback_plugins/task_results.py)."""
import json
import os
import re
import tempfile

from dbfleet_testing.runs import CALLBACKS, ansible
from dbfleet_testing.servers import LAB_HOSTS

DROPIN = '60-dbfleet-settings.cnf'
# Every value differs from each lab server's default (asserted before the run): 2% of this machine's 24 GB is
# about 480 MiB (the default buffer pool is 128 MiB); 192M of redo log (default 100 MiB / 96 MiB).
MAP = dict(
    innodb_buffer_pool_size='2%',               # dynamic, memory-relative, rounded (MySQL: chunk; MariaDB: 1 MiB)
    innodb_io_capacity=1500,                    # dynamic (default 200; 10000 on 9.7)
    innodb_io_capacity_max=3000,                # dynamic (default 2000; 20000 on 9.7)
    innodb_redo_log_capacity='192M',            # renamed: innodb_log_file_size on MariaDB
    innodb_sort_buffer_size='2M',               # read-only everywhere
    innodb_read_io_threads=6,                   # read-only on MySQL, dynamic on MariaDB 10.11+
    innodb_log_buffer_size='32M',               # dynamic on MySQL 8.0+, read-only on MariaDB (ignored on 11.8)
    innodb_lru_scan_depth=2048,                 # dynamic (default 1024; 1536 on MariaDB)
    innodb_flush_log_at_trx_commit=2,           # dynamic
    innodb_lock_wait_timeout=120,               # dynamic
    innodb_print_all_deadlocks=True,            # dynamic boolean
    innodb_stats_persistent_sample_pages=40,    # dynamic
    innodb_flush_method=None,                   # null: left alone
)
PLAY = """
- name: Server settings from one map
  hosts: "{{ target }}"
  gather_facts: false
  roles:
    - role: dbfleet.innodb.settings
"""


def play(tmp_path, extra, *flags, hosts=LAB_HOSTS, inventory='inventories/lab', playbook=None):
    """ansible-playbook with the role on every lab host; (rc, output, [task results]) - the results from the
    test's callback (tests/integration/callback_plugins/task_results.py). With playbook (a path), that playbook on
    the hosts of inventory instead (playbooks/settings.yml: hosts through dbfleet_settings_hosts)."""
    if playbook is None:
        playbook = tmp_path / 'settings.yml'
        playbook.write_text(PLAY)
        extra = dict(extra, target=':'.join(hosts))
    else:
        extra = dict(extra, dbfleet_settings_hosts=list(hosts))
    with tempfile.NamedTemporaryFile(suffix='.jsonl', delete=False) as results:
        name = results.name
    os.environ.update(ANSIBLE_CALLBACK_PLUGINS=CALLBACKS,
                      ANSIBLE_CALLBACKS_ENABLED='task_results', DBFLEET_TASK_RESULTS_FILE=name)
    try:
        rc, out = ansible('ansible-playbook', '-i', str(inventory), str(playbook), '-e', json.dumps(extra), *flags,
                          timeout=900)
        with open(name, encoding='utf-8') as handle:
            results = [json.loads(line) for line in handle if line.strip()]
    finally:
        for key in ('ANSIBLE_CALLBACK_PLUGINS', 'ANSIBLE_CALLBACKS_ENABLED', 'DBFLEET_TASK_RESULTS_FILE'):
            os.environ.pop(key, None)
        os.unlink(name)
    return rc, out, results


def changed_by_task(results):
    """{(task, host, item): changed} of the role's own tasks (the restart role's are compared by what it says)."""
    out = {}
    for r in results:
        if r['status'] == 'skipped' or r['task'].startswith('Validating arguments'):
            continue
        item = json.dumps(r['item'], sort_keys=True) if r['item'] is not None else None
        out[(r['task'], r['host'], item)] = bool(r['result'].get('changed'))
    return out


def changed_by_host(out, hosts=LAB_HOSTS):
    """{host: changed count} from the play recap."""
    found = dict((m.group(1), int(m.group(2))) for m in re.finditer(r'^(\w+)\s+: ok=\d+\s+changed=(\d+)', out, re.M))
    assert set(found) == set(hosts), out
    return found
