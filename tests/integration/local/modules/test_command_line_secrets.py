# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets on mysqld's command line never reach server_facts or verify results.

The lab's mysql80 answers over SQL; its process is read from a /proc tree that gives the same pid a command
line holding secrets (what `ps` shows for a server started with --report-password=... or a key's passphrase).
"""
from __future__ import annotations

import json
import os

from ansible_collections.dbfleet.innodb.plugins.module_utils import server_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import global_variables
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import verify

SECRETS = ('S3cret-report-pw', 'S3cret-sst', 'S3cret-filekey', 'S3cret-provider', 'S3cret-apart', 'S3cret-short')
ARGV = ['/usr/sbin/mysqld', '--report-password=S3cret-report-pw', '--loose-wsrep-sst-auth=sst:S3cret-sst',
        '--file-key-management-filekey=S3cret-filekey', '--wsrep-provider-options=gcache.size=1G;pc.password=S3cret-provider',
        '--report_password', 'S3cret-apart', '-pS3cret-short', '--port=3306', '--innodb-buffer-pool-size=128M']


def fake_proc(tmp_path, pid):
    base = tmp_path / 'proc' / str(pid)
    base.mkdir(parents=True)
    (base / 'cmdline').write_bytes(('\0'.join(ARGV) + '\0').encode())
    (base / 'status').write_text('Name:\tmysqld\nUid:\t0\t0\t0\t0\n')
    (base / 'environ').write_bytes(b'HOME=/root\0')
    os.symlink(str(tmp_path), str(base / 'cwd'))
    return str(tmp_path / 'proc')


def test_the_command_line_is_masked_in_server_facts_and_verify(lab, tmp_path):
    row = lab.refresh()['mysql80']
    params = dict(login_unix_socket=row['socket'], login_user=lab.admin_user, login_password=lab.admin_password,
                  config_file='')
    conn = connection.open_connection(params)
    try:
        pid_file = global_variables(conn, ['pid_file', 'datadir'])
        path = os.path.join(pid_file['datadir'], pid_file['pid_file'])     # an absolute pid_file stays as it is
        with open(path, encoding='utf-8') as handle:
            proc = fake_proc(tmp_path, int(handle.read().split()[0]))
        facts = server_facts.gather(conn, login_params=params, proc_root=proc)
        facts.pop('_plan', None)
        facts.pop('_identity', None)
        argv = facts['process']['argv']
        result = verify.audit(conn, {'report_password': 'x', 'innodb_buffer_pool_size': '128M'}, login_params=params,
                              proc_root=proc)
    finally:
        conn.close()
    assert argv == ['/usr/sbin/mysqld', '--report-password=********', '--loose-wsrep-sst-auth=********',
                    '--file-key-management-filekey=********',
                    '--wsrep-provider-options=gcache.size=1G;pc.password=********', '--report_password', '********',
                    '-p********', '--port=3306', '--innodb-buffer-pool-size=128M']
    text = json.dumps(facts, default=str) + json.dumps(result, default=str)
    assert not [s for s in SECRETS if s in text], [s for s in SECRETS if s in text]
    item = result['variables']['report_password']
    # The secret variable's command-line value was read (and masked), the other one is shown as it is.
    assert item['command_line'] == dict(value='********', text='********') and item['masked'] is True, item
    assert result['variables']['innodb_buffer_pool_size']['command_line']['text'] == '--innodb-buffer-pool-size=128M'
