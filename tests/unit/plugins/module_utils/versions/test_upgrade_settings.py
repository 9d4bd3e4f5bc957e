# -*- coding: utf-8 -*-
"""Unit tests for module_utils/versions/upgrade_settings.py: a host's settings from every place a value comes from."""

from __future__ import annotations

from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.upgrade_settings import (
    option_settings, origin_settings, persisted_settings)


def test_option_file_lines_and_command_line_words_say_where_and_whether_loose():
    line = optionfiles.Entry('innodb_log_files_in_group', '2', '/etc/my.cnf', 7, 'mysqld', 'loose-innodb-log-files-in-group = 2')
    word = optionfiles.Entry('innodb_io_capacity', '300', None, None, None, '--innodb-io-capacity=300')
    from_file, = option_settings([line])
    assert (from_file.origin, from_file.where, from_file.loose, from_file.value) == (
        'option_file', '/etc/my.cnf:7 [mysqld]', True, '2')
    from_command, = option_settings([word], 'command_line')
    assert (from_command.origin, from_command.where, from_command.loose) == (
        'command_line', 'the command line (--innodb-io-capacity=300)', False)


def test_persisted_values_and_what_the_server_records():
    assert [(s.name, s.origin, s.where) for s in persisted_settings({'b': '1', 'a': '2'})] == [
        ('a', 'persisted', 'mysqld-auto.cnf (SET PERSIST)'), ('b', 'persisted', 'mysqld-auto.cnf (SET PERSIST)')]
    table = {'innodb_io_capacity': dict(origin='COMPILED'), 'innodb_log_file_size': dict(origin='EXPLICIT', value='1G'),
             'port': dict(origin='COMMAND_LINE', value='3307'), 'expire_logs_days': dict(origin='PERSISTED', value='7'),
             'innodb_flush_neighbors': dict(origin='DYNAMIC', value='0')}
    found = dict((s.name, (s.origin, s.where, s.loose)) for s in origin_settings(table))
    assert found == {
        'innodb_log_file_size': ('server', 'an option file (the server records it; the line is not known here)', None),
        'port': ('server', 'the command line', None),
        'expire_logs_days': ('persisted', 'mysqld-auto.cnf (SET PERSIST)', False)}
