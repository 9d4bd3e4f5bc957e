"""The one option-file writer (option_writer.option_file / option_file_text): no role variable can add a
line, a group or a directive to a drop-in. The variables are enumerated from each role's
meta/argument_specs.yml, so a new variable cannot be left out; the files are read back with the
collection's reader of option files (host/optionfiles.py, the server's rules)."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import engine_facts
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import flavors
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import option_writer
from ansible_collections.dbfleet.innodb.plugins.module_utils.host import optionfiles
from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import states as role_states

from test_desired import CONTAINER, ROOT, facts
from test_settings import server as settings_server

INJECTIONS = (
    'compression=kLZ4Compression\ninit_file=/tmp/p.sql',
    '1\ninit_file=/tmp/p.sql',
    '2\r\n[client]\npassword=x',
    '16\rinit_file=/tmp/p.sql',
    '[client]',
    '  [mysqld_safe]',
    '!include /tmp/p.cnf',
    '!includedir /tmp',
    'a\x00b',
    'x\x1b[2Jy',
    'ok # \\\ninit_file=/tmp/p.sql',
)
# Every group a server or client might read: the file must hold [mysqld] only.
GROUPS = ('mysqld', 'server', 'mariadb', 'mariadbd', 'client', 'mysql', 'client-server', 'mysqld_safe',
          'mysqldump', 'embedded')


def spec_options(role):
    with open(os.path.join(ROOT, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        return yaml.safe_load(handle)['argument_specs']['main']['options']


def storage(_datadir, _probe):
    return dict(storage_class='ssd', confidence='high', reasons=['test'])


# What makes each role write every line it can, on a server that has all of it.
BASE = {
    'adaptive_hash': (dict(adaptive_hash_enabled=True, adaptive_hash_parts=16), dict()),
    'flush_neighbors': (dict(flush_neighbors_io_profile=True), dict()),
    'memcached': (dict(memcached_containers=[CONTAINER], memcached_r_batch_size=1, memcached_w_batch_size=1,
                       memcached_api_enable_binlog=True, memcached_api_enable_mdl=True, memcached_api_trx_level=0,
                       memcached_daemon_extra_options='-c 1024 -t 4'), dict()),
    'myrocks': (dict(myrocks_enabled=True, myrocks_block_cache_size=1 << 30, myrocks_flush_log_at_trx_commit=2,
                     myrocks_max_background_jobs=4, myrocks_default_cf_options='compression=kLZ4Compression'),
                dict(flavor='mariadb', version=(11, 8, 3))),
    'settings': (dict(settings_values=dict(innodb_buffer_pool_size='25%', innodb_flush_method='O_DIRECT',
                                           innodb_print_all_deadlocks=True, innodb_monitor_enable='module_buffer',
                                           innodb_io_capacity=1000)), dict()),
}


def base(role):
    """(variables, server) that make the role write every line it can: BASE's, else each setting the role's record
    owns given through its pinning input (a value in the version table's range), on MySQL 8.0.33 with each of them
    there, settable."""
    if role in BASE:
        return BASE[role]
    variables = {}
    for name, _inputs in desired.RECORDS[role].owns:
        spans = flavors.VARIABLES[name]
        value = spans[-1].value
        sample = {'bool': True, 'int': value['minimum'], 'size': value['minimum']}.get(value['kind'], 'x')
        variables[desired.RECORDS[role].pinning_input(name)] = sample
    variables.pop(None, None)
    return variables, dict()


def server_facts(role):
    args = base(role)[1]
    if role == 'settings':
        return settings_server(args.get('flavor', 'mysql'), args.get('version', (8, 0, 33)))
    out = facts(args.get('flavor', 'mysql'), args.get('version', (8, 0, 33)))
    out['engines'] = dict(ROCKSDB=dict(loaded=False, tables=0))
    return out


def desired_state(role, variables):
    return desired.for_role(role, dict(base(role)[0], **variables), server_facts(role), storage)


def read_back(tmp_path, text):
    path = tmp_path / 'drop-in.cnf'
    path.write_text(text)
    read = optionfiles.read_option_files([str(path)], GROUPS)
    assert read.files_read == [str(path)] and not read.errors and not read.warnings, read.to_dict()
    return read.entries


def injected(kind, text):
    """The injection in the shape the option's type takes (maps and lists carry it in their values)."""
    if kind == 'dict':
        return dict(ssd=text, hdd=text, mixed=text)
    if kind == 'list':
        return [text]
    return text


CASES = [(role, name) for role in desired.ROLES for name in sorted(spec_options(role))]


@pytest.mark.parametrize('role,name', CASES)
def test_no_role_variable_adds_a_line_a_group_or_a_directive(role, name, tmp_path):
    expected = desired_state(role, {})
    names = [e.name for e in read_back(tmp_path, expected['option_file_text'])]
    assert names, 'the base variables of %s write no line: the test would prove nothing' % role
    kind = spec_options(role)[name].get('type', 'str')
    for text in INJECTIONS:
        try:
            state = desired_state(role, {name: injected(kind, text)})
        except desired.InputError as e:
            assert name in str(e), (name, str(e))      # refused, naming the variable
            continue
        entries = read_back(tmp_path, state['option_file_text'])
        assert [e.group for e in entries] == ['mysqld'] * len(entries), (name, text, state['option_file_text'])
        assert [e.name for e in entries] == names, (name, text, state['option_file_text'])
        assert 'init_file' not in state['option_file_text'] or '#' in state['option_file_text'].split('init_file')[0]


def test_the_myrocks_injection_of_the_issue_is_refused_naming_the_variable():
    with pytest.raises(desired.InputError) as info:
        desired_state('myrocks', dict(myrocks_default_cf_options='compression=kLZ4Compression\ninit_file=/tmp/p.sql'))
    assert "myrocks_default_cf_options must be on one line, without control characters" in str(info.value)


@pytest.mark.parametrize('role', desired.ROLES)
def test_the_file_text_is_what_the_lines_say(role, tmp_path):
    state = desired_state(role, {})
    entries = read_back(tmp_path, state['option_file_text'])
    assert [(e.name, e.value) for e in entries] == [
        (optionfiles.normalize_name(line['name']), optionfiles.unquote_value(line['value'])) for line in state['option_file']]


@pytest.mark.parametrize('value,kind,text', [
    (True, None, 'ON'), (False, 'bool', 'OFF'), (16, None, '16'), (-1, 'int', '-1'),
    ('ha_rocksdb', 'word', 'ha_rocksdb'), ('compression=kLZ4Compression;bottommost_compression=kZSTD', None,
                                           'compression=kLZ4Compression;bottommost_compression=kZSTD'),
    ('-p11211 -l 127.0.0.1', 'text', '"-p11211 -l 127.0.0.1"'), ('a#b', 'text', '"a#b"'), ("it's", None, '"it\'s"'),
    ('', 'text', '""'),
])
def test_values_are_written_by_their_kind(value, kind, text):
    assert option_writer.option_value('x', value, kind) == (text, None)


@pytest.mark.parametrize('value,kind,message', [
    ('a\nb', None, 'x must be on one line, without control characters'),
    ('[client]', 'text', 'must not start with ['),
    ('!include /etc/x', 'word', 'must not start with !'),
    ('a"b', 'text', 'must not hold " or a backslash'),
    ('a\\b', 'text', 'must not hold " or a backslash'),
    ('a b', 'word', 'may hold only letters'),
    ('ON', 'bool', 'must be true or false'),
    ('16', 'int', 'must be a whole number'),
    (True, 'int', 'must be a whole number'),
    (3, 'text', 'must be a string'),
])
def test_values_that_cannot_be_written_are_refused(value, kind, message):
    text, problem = option_writer.option_value('x', value, kind)
    assert text is None and message in problem


def test_option_names_are_checked_too():
    with pytest.raises(desired.InputError, match='is not an option name'):
        option_writer.option_file([('init_file=/tmp/p.sql\nx', 1)])
    with pytest.raises(desired.InputError, match='is not an option name'):
        option_writer.option_file([('[client]', 1)])


def test_comment_lines_stay_comments(tmp_path):
    text = option_writer.option_file_text(['datadir /x\ninit_file=/tmp/p.sql'], option_writer.option_file([('a', 1)]))
    assert [(e.name, e.value) for e in read_back(tmp_path, text)] == [('a', '1')]


def test_dropin_file_per_os_family_and_inventory():
    assert desired.dropin_file('myrocks', family='redhat') == ('/etc/my.cnf.d/60-dbfleet-myrocks.cnf', None)
    assert desired.dropin_file('memcached', family='debian') == ('/etc/mysql/conf.d/60-dbfleet-memcached.cnf', None)
    assert desired.dropin_file('adaptive_hash', '/srv/db1/conf.d/', 'redhat')[0] == '/srv/db1/conf.d/60-dbfleet-adaptive_hash.cnf'
    path, why = desired.dropin_file('myrocks', family='alpine')
    assert path is None and 'set dbfleet_option_dropin_dir' in why and 'OS family alpine' in why
    assert '(known: Debian, RedHat)' in why


def test_myrocks_versions_come_from_the_version_table():
    refused = role_states.myrocks(dict(myrocks_enabled=True), dict(facts(), engines={}))
    assert refused['refusals'] == ['unsupported'] and refused['option_file'] == []
    assert refused['reason'] == engine_facts.engine_status('ROCKSDB', 'mysql', (8, 0, 33))[1]
