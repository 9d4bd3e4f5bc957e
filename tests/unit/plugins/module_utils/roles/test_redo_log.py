# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The redo log's size in the names and unit each server takes (roles/redo_log.py): one capacity, a size per file,
one file; written once, either name."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles.redo_log import translate_redo

MIB = 1 << 20
CAPACITY = dict(innodb_redo_log_capacity=dict(value=str(100 * MIB)), innodb_log_file_size=dict(value=str(48 * MIB)),
                innodb_log_files_in_group=dict(value='2'))
PER_FILE = dict(innodb_log_file_size=dict(value=str(48 * MIB)), innodb_log_files_in_group=dict(value='2'))
ONE_FILE = dict(innodb_log_file_size=dict(value=str(96 * MIB)))


def test_a_capacity_server_takes_the_size_per_file_times_the_files():
    wanted, translated, errors = translate_redo(dict(innodb_log_file_size='96M', innodb_log_files_in_group=3,
                                                     innodb_io_capacity=200), CAPACITY, 'MySQL 8.0.36')
    assert wanted == dict(innodb_redo_log_capacity=288 * MIB, innodb_io_capacity=200) and errors == []
    assert 'innodb_log_file_size 96M x 3 file(s) = innodb_redo_log_capacity' in translated[0]['reason']
    wanted, translated, errors = translate_redo(dict(innodb_redo_log_capacity='1G'), CAPACITY, 'MySQL 8.0.36')
    assert wanted == dict(innodb_redo_log_capacity='1G') and translated == [] and errors == []


def test_an_older_mysql_takes_the_capacity_per_file():
    wanted, translated, errors = translate_redo(dict(innodb_redo_log_capacity='2G'), PER_FILE, 'MySQL 8.0.28')
    assert wanted == dict(innodb_log_file_size=1024 * MIB) and errors == []
    assert translated[0]['name'] == 'innodb_log_file_size' and '2 file(s) of innodb_log_file_size' in translated[0]['reason']


def test_mariadb_keeps_the_redo_log_in_one_file():
    wanted, translated, errors = translate_redo(dict(innodb_redo_log_capacity='192M'), ONE_FILE, 'MariaDB 10.11.19')
    assert wanted == dict(innodb_log_file_size=192 * MIB) and errors == []
    assert 'keeps the redo log in one file, innodb_log_file_size' in translated[0]['reason']


def test_the_size_is_written_once_and_the_files_as_a_number():
    assert 'write the redo log size once' in translate_redo(
        dict(innodb_redo_log_capacity='1G', innodb_log_file_size='96M'), CAPACITY, 'MySQL 8.0.36')[2][0]
    assert 'must be a whole number' in translate_redo(
        dict(innodb_log_file_size='96M', innodb_log_files_in_group='many'), CAPACITY, 'MySQL 8.0.36')[2][0]
    assert 'must be a size' in translate_redo(dict(innodb_log_file_size='big'), CAPACITY, 'MySQL 8.0.36')[2][0]
    assert translate_redo(dict(innodb_io_capacity=200), CAPACITY, 'MySQL 8.0.36') == (dict(innodb_io_capacity=200), [], [])
