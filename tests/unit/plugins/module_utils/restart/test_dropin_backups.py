# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dropin_backups: the backups beside a drop-in and what putting them back means."""

from __future__ import annotations

import os

from ansible_collections.dbfleet.innodb.plugins.module_utils.restart import dropin_backups


def test_backups_of_a_dropin_oldest_first():
    names = ['60-dbfleet-adaptive_hash.cnf', '60-dbfleet-adaptive_hash.cnf.222.2026-11-25@16:10:00~',
             '60-dbfleet-adaptive_hash.cnf.111.2026-11-24@09:00:00~', '60-dbfleet-memcached.cnf.1.2026-11-01@00:00:00~',
             '60-dbfleet-adaptive_hash.cnf.orig']
    assert dropin_backups.dropin_backups('/etc/mysql/conf.d/60-dbfleet-adaptive_hash.cnf', names) == [
        '60-dbfleet-adaptive_hash.cnf.111.2026-11-24@09:00:00~', '60-dbfleet-adaptive_hash.cnf.222.2026-11-25@16:10:00~']


def test_put_back_restores_the_oldest_backup_or_removes_a_new_dropin(tmp_path):
    old = tmp_path / '60-dbfleet-old.cnf'
    old.write_text('[mysqld]\n')
    changed = tmp_path / '60-dbfleet-adaptive_hash.cnf'
    changed.write_text('[mysqld]\ninnodb_adaptive_hash_index_parts=16\n')
    (tmp_path / '60-dbfleet-adaptive_hash.cnf.1.2026-11-24@09:00:00~').write_text('a')
    (tmp_path / '60-dbfleet-adaptive_hash.cnf.2.2026-11-25@09:00:00~').write_text('b')
    new = tmp_path / '60-dbfleet-memcached.cnf'
    new.write_text('[mysqld]\n')

    class Times(object):
        def __init__(self, path):
            self.st_mtime = self.st_ctime = 1000 if path == str(old) else 9000

    plan = dropin_backups.put_back_plan([str(old), str(changed), str(new)], last_start=5000, stat_fn=Times)
    assert [(os.path.basename(i['path']), i['action'], i['backup'] and os.path.basename(i['backup'])) for i in plan] == [
        ('60-dbfleet-adaptive_hash.cnf', 'restore', '60-dbfleet-adaptive_hash.cnf.1.2026-11-24@09:00:00~'),
        ('60-dbfleet-memcached.cnf', 'remove', None)]
    assert [os.path.basename(p) for p in plan[0]['discard']] == ['60-dbfleet-adaptive_hash.cnf.2.2026-11-25@09:00:00~']


def test_without_the_last_start_a_dropin_without_backup_is_left_alone(tmp_path):
    new = tmp_path / '60-dbfleet-memcached.cnf'
    new.write_text('[mysqld]\n')
    assert dropin_backups.put_back_plan([str(new)], last_start=None) == []
    assert [i['action'] for i in dropin_backups.put_back_plan([str(new)], last_start=0)] == ['remove']
