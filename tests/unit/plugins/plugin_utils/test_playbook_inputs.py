# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The playbooks' inputs (playbook_inputs.py): defaults and ranges from the engines' one definition, Ansible's own
validator messages, every problem named in one error with the variable and the value as given."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.plugin_utils import playbook_inputs as pi
from ansible_collections.dbfleet.innodb.plugins.module_utils.replication import topology
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.convert_tables import CONVERT_OPTIONS
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.drop_rules import DROP_OPTIONS
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.module import GUARDED_OPTIONS

DROP = {'drop_tables_tables': ['shop.orders_2019'], 'drop_tables_window': '02:00-05:00'}
CONVERT = {'convert_tables_tables': ['shop.orders_2019'], 'convert_tables_window': '02:00-05:00'}


def problems(name, given):
    with pytest.raises(pi.PlaybookInputError) as e:
        pi.check(name, given)
    text = str(e.value)
    assert text.startswith('playbooks/%s.yml: bad input, nothing was run: ' % name)
    return text


def test_the_defaults_are_the_engines():
    drop = pi.check('drop_tables', DROP)
    for option in ('lock_wait_timeout', 'retries', 'retry_delay', 'timezone', 'force_window'):
        assert drop[option] == GUARDED_OPTIONS[option]['default']
    for option in ('confirm', 'ahi_strategy', 'rename_first', 'holding_schema', 'lift_super_read_only',
                   'follow_timeout'):
        assert drop[option] == DROP_OPTIONS[option]['default']
    assert drop['max_lag'] == topology.DEFAULT_MAX_LAG
    assert drop == dict(tables=['shop.orders_2019'], window='02:00-05:00', timezone='UTC', confirm=False,
                        mode='replicated', force_window=False, rename_first=False, holding_schema='dbfleet_holding',
                        ahi_strategy='auto', lock_wait_timeout=2, retries=3, retry_delay=1.0,
                        lift_super_read_only=False, follow_timeout=600, replica_ready_timeout=30, max_lag=60,
                        hosts='all', file_removal='immediate', staging_dir=None, shrink_step_mb=256, shrink_pause=0.5,
                        shrink_step_seconds=0.05, shrink_max_seconds=3600, free_space_margin_mb=1024)
    convert = pi.check('convert_tables', CONVERT)
    assert convert['engine'] == CONVERT_OPTIONS['engine']['default'] == 'InnoDB'
    assert convert['whole_topology'] is False and convert['replica_timeout'] == 600 and convert['max_lag'] == 60


def test_the_ranges_are_the_engines():
    for name, option in (('drop_tables', 'lock_wait_timeout'), ('drop_tables', 'follow_timeout'),
                         ('convert_tables', 'retry_delay')):
        engine = dict(GUARDED_OPTIONS, **DROP_OPTIONS)[option]
        assert pi.PLAYBOOKS[name].options[option]['range'] == engine['range']


def test_the_staged_file_removal_inputs():
    drop = pi.check('drop_tables', dict(DROP, drop_tables_file_removal='staged', drop_tables_shrink_step_mb='64'))
    assert drop['file_removal'] == 'staged' and drop['shrink_step_mb'] == 64
    text = problems('drop_tables', dict(DROP, drop_tables_file_removal='later', drop_tables_shrink_step_mb=0,
                                        drop_tables_shrink_max_seconds=604801, drop_tables_shrink_step_seconds=0))
    assert "drop_tables_file_removal must be one of: immediate, staged, got: later" in text
    assert 'drop_tables_shrink_step_mb=0 is out of range 1-1048576' in text
    assert 'drop_tables_shrink_max_seconds=604801 is out of range 1-604800' in text
    assert 'drop_tables_shrink_step_seconds=0 is out of range 0.001-60' in text, text
    assert 'does not go with rename_first' in problems('drop_tables', dict(DROP, drop_tables_file_removal='staged',
                                                                           drop_tables_rename_first=True))
    assert pi.check('drop_tables_finish_staged', {})['shrink_pause'] == 0.5
    assert pi.check('drop_tables_finish_staged', {})['shrink_step_seconds'] == 0.05


def test_values_given_as_text_are_converted_as_validate_argument_spec_does():
    drop = pi.check('drop_tables', dict(DROP, drop_tables_retries='5', drop_tables_retry_delay='0.5', drop_tables_confirm='yes',
                                        drop_tables_tables='shop.a,shop.b'))
    assert drop['retries'] == 5 and drop['retry_delay'] == 0.5 and drop['confirm'] is True
    assert drop['tables'] == ['shop.a', 'shop.b']


def test_every_problem_in_one_error_naming_the_variable_and_the_value_as_given():
    text = problems('drop_tables', {'drop_tables_tables': [], 'drop_tables_window': '02:00-05:00', 'drop_tables_retries': '11',
                                    'drop_tables_lock_wait_timeout': 0, 'drop_tables_mode': 'sideways', 'drop_tables_max_lag': -1,
                                    'drop_tables_retry_delay': 'soon', 'drop_tables_replica_ready_timeout': 0,
                                    'drop_tables_follow_timeout': 86401})
    for words in ("argument 'drop_tables_retry_delay' is of type str and we were unable to convert to float",
                  '(got "soon")',
                  'value of drop_tables_mode must be one of: replicated, rolling, got: sideways',
                  'drop_tables_lock_wait_timeout=0 is out of range 1-3600',
                  'drop_tables_retries=11 is out of range 0-10',
                  'drop_tables_max_lag=-1 is out of range 0 or more',
                  'drop_tables_replica_ready_timeout=0 is out of range 1 or more',
                  'drop_tables_follow_timeout=86401 is out of range 1-86400',
                  'drop_tables_tables=[]: give at least one "db.table"'):
        assert words in text, text


def test_a_missing_required_input_and_bad_names_and_engines():
    text = problems('drop_tables', {'drop_tables_tables': ['mysql.user', 'orders']})
    assert 'missing required arguments: drop_tables_window' in text
    assert "drop_tables_tables=[\"mysql.user\", \"orders\"]: table 'mysql.user': schema 'mysql' is a system schema" in text
    assert "table 'orders': give exactly \"db.table\"" in text
    text = problems('convert_tables', dict(CONVERT, convert_tables_engine='MEMORY', convert_tables_retries=-1))
    assert "convert_tables_engine=MEMORY: engine 'MEMORY': tables are converted to InnoDB or ROCKSDB" in text
    assert 'convert_tables_retries=-1 is out of range 0-10' in text
    assert pi.check('convert_tables', dict(CONVERT, convert_tables_engine='myrocks'))['engine'] == 'myrocks'


def test_a_value_of_the_wrong_type_gets_no_range_or_check_message():
    text = problems('drop_tables', dict(DROP, drop_tables_retries='many', drop_tables_tables={'a': 1}))
    assert "argument 'drop_tables_retries' is of type str" in text and 'out of range' not in text
    assert "argument 'drop_tables_tables' is of type" in text and 'db.table' not in text


def test_rules_once_every_input_is_right():
    text = problems('drop_tables', dict(DROP, drop_tables_lift_super_read_only=True))
    assert 'drop_tables_lift_super_read_only is only for drop_tables_mode=rolling' in text
    assert pi.check('drop_tables', dict(DROP, drop_tables_lift_super_read_only=True, drop_tables_mode='rolling'))['mode'] == 'rolling'
    # a rule waits until the inputs it reads are right
    text = problems('drop_tables', dict(DROP, drop_tables_lift_super_read_only=True, drop_tables_retries=20))
    assert 'super_read_only' not in text


def test_argument_spec_is_ansibles_form_by_variable_name():
    spec = pi.argument_spec(pi.PLAYBOOKS['drop_tables'])
    assert spec['drop_tables_lock_wait_timeout'] == dict(type='int', default=2)
    assert spec['drop_tables_window'] == dict(type='str', required=True)
    assert all('range' not in s and 'check' not in s for s in spec.values())


def test_shown():
    assert pi.shown(['a.b']) == '["a.b"]' and pi.shown(3) == 3


def test_rolling_restart_takes_the_restart_roles_defaults_and_the_registrys_roles():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
    assert pi.role_option('restart', 'restart_timeout') == dict(type='int', default=300)
    inputs = pi.check('rolling_restart', {})
    assert inputs == dict(hosts=['all'], roles=desired.restart_roles(desired.site_roles()), all=False,
                          timeout=pi.role_option('restart', 'restart_timeout')['default'],
                          max_lag=pi.role_option('restart', 'restart_max_lag')['default'], serial=0,
                          primary='in_place', primary_candidate=None, primary_hand_back=False, primary_endpoint=None,
                          primary_endpoint_tasks='', primary_sessions='kill', primary_sessions_timeout=10,
                          primary_wait_timeout=30, primary_replication_user=None)
    switch = pi.check('rolling_restart', {'rolling_restart_primary': 'switchover', 'rolling_restart_primary_endpoint': 'tasks'})
    assert (switch['primary'], switch['primary_endpoint']) == ('switchover', 'tasks')
    text = problems('rolling_restart', {'rolling_restart_primary': 'failover', 'rolling_restart_primary_endpoint': 'vip',
                                        'rolling_restart_primary_wait_timeout': 0})
    assert 'rolling_restart_primary must be one of: in_place, switchover, got: failover' in text
    assert 'rolling_restart_primary_endpoint must be one of: haproxy, tasks, none, got: vip' in text
    assert 'rolling_restart_primary_wait_timeout=0 is out of range 1 or more' in text
    assert pi.check('rolling_restart', {'rolling_restart_hosts': 'db1:db2'})['hosts'] == ['db1:db2']
    text = problems('rolling_restart', {'rolling_restart_roles': ['adaptive_hash', 'myrock'],
                                        'rolling_restart_timeout': '0', 'rolling_restart_max_lag': -1})
    assert 'value of rolling_restart_roles must be one or more of: %s. Got no match for: myrock' \
        % ', '.join(desired.ROLES) in text
    assert 'rolling_restart_timeout=0 is out of range 1 or more' in text
    assert 'rolling_restart_max_lag=-1 is out of range 0 or more' in text


def test_ahi_advisor_takes_the_advisors_options():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.ahi_advisor import ADVISOR_OPTIONS, DEFAULT_THRESHOLDS
    inputs = pi.check('ahi_advisor', {'ahi_advisor_thresholds': {'min_hit_ratio': '0.7'}})
    assert inputs['sample_seconds'] == ADVISOR_OPTIONS['sample_seconds']['default']
    assert inputs['thresholds'] == dict(DEFAULT_THRESHOLDS, min_hit_ratio=0.7)
    text = problems('ahi_advisor', {'ahi_advisor_sample_seconds': 3601,
                                    'ahi_advisor_thresholds': {'min_hit_ratio': 2, 'min_lookups': 'x'}})
    assert 'ahi_advisor_sample_seconds=3601 is out of range 1-3600' in text
    assert "argument 'min_lookups' is of type str found in 'ahi_advisor_thresholds'" in text
    assert 'ahi_advisor_thresholds={"min_hit_ratio": 2, "min_lookups": "x"}: min_hit_ratio=2.0 is out of range 0-1' in text
    assert 'ahi_advisor_thresholds.nope' in problems('ahi_advisor', {'ahi_advisor_thresholds': {'nope': 1}})


def _shown_default(spec):
    if spec.get('required'):
        return 'required'
    value = spec.get('default')
    return {True: 'true', False: 'false'}.get(value, str(value)) if isinstance(value, bool) else str(value)


@pytest.mark.parametrize('doc,name', [('drop_tables.md', 'drop_tables'), ('convert_tables.md', 'convert_tables')])
def test_the_docs_tables_give_the_specs_defaults(doc, name):
    """docs/<playbook>.md's table of variables (| variable | ... | default | ...) says each default as the spec has it."""
    import os
    import re
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    playbook = pi.PLAYBOOKS[name]
    seen, column = {}, None
    with open(os.path.join(root, 'docs', doc), encoding='utf-8') as handle:
        for line in handle:
            cells = [c.strip() for c in line.strip().strip('|').split('|')] if line.startswith('|') else []
            if cells[:1] == ['variable']:
                column = cells.index('default')
                continue
            names = re.findall(r'`(%s_\w+)`' % playbook.prefix, cells[0]) if cells and column else []
            if not names or not all(n in playbook.variables for n in names):
                continue
            cell = cells[column]
            defaults = ['required'] * len(names) if 'required' in cell else re.findall(r'`([^`]*)`', cell)
            assert len(defaults) == len(names), line
            seen.update(zip(names, defaults))
    assert seen == dict((v, _shown_default(playbook.options[o])) for v, o in playbook.variables.items())


def test_verify_states_each_default_once_controller_modes_are_the_verify_fleet_actions():
    from ansible_collections.dbfleet.innodb.plugins.action.verify_fleet import ARGUMENT_SPEC
    inputs = pi.check('verify', {})
    for option in ('timeout', 'deadline', 'pool', 'startup_cache', 'startup_cache_max_age', 'report_mode'):
        assert inputs[option] == ARGUMENT_SPEC[option]['default'], option
    assert inputs['hosts'] == ['all'] and inputs['mode'] == 'host' and inputs['fail_on_error'] is True
    assert pi.check('verify', {'verify_hosts': 'mysql80'})['hosts'] == ['mysql80']
    assert pi.check('verify', {'verify_target_version': 'mariadb-11.8'})['target_version'] == 'mariadb-11.8'


def test_verify_checks_the_upgrade_target_as_the_modules_read_it():
    text = problems('verify', {'verify_target_version': 'oracle-8.4', 'verify_mode': 'fleet'})
    assert "verify_target_version=oracle-8.4: value 'oracle-8.4' is not an upgrade target" in text
    assert 'mysql, percona, mariadb, aurora-mysql' in text
    assert 'value of verify_mode must be one of: host, controller, got: fleet' in text


def test_site_settings_and_prerequisites_inputs():
    from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import desired
    assert pi.check('site', {}) == dict(hosts=['all'], roles=None, memcached_hosts=None)
    assert "value of site_roles must be one or more of: %s" % ', '.join(desired.ROLES) in problems(
        'site', {'site_roles': ['myrock']})
    assert pi.check('settings', {'dbfleet_settings_text': 'innodb_io_capacity: 2000'})['text'] == \
        'innodb_io_capacity: 2000'
    assert pi.check('settings', {'dbfleet_settings_text': '  '})['text'] == '  '
    assert 'dbfleet_settings_text=- innodb_io_capacity: must be a YAML map of settings' in problems(
        'settings', {'dbfleet_settings_text': '- innodb_io_capacity'})
    assert 'dbfleet_settings_text=a: [: not YAML' in problems('settings', {'dbfleet_settings_text': 'a: ['})
    assert pi.check('prerequisites', {'prerequisites_cryptography': 'no'}) == dict(
        hosts=['all'], method='auto', cryptography=False, pip_find_links=None)
    assert 'value of prerequisites_method must be one of: auto, package, pip, got: apt' in problems(
        'prerequisites', {'prerequisites_method': 'apt'})


def test_every_playbooks_variables_take_its_name_but_settings_and_the_drops_second_half():
    for name, playbook in pi.PLAYBOOKS.items():
        expected = dict(settings='dbfleet_settings', drop_tables_finish_staged='drop_tables').get(name, name)
        assert playbook.prefix == expected, name


def test_the_old_drop_names_are_read_as_the_new_with_a_message_naming_both():
    given, messages = pi.renamed('drop_tables', {'drop_tables': ['shop.a'], 'drop_window': '02:00-05:00',
                                                 'drop_tables_retries': 1, 'drop_retries': 5})
    assert given == {'drop_tables_tables': ['shop.a'], 'drop_tables_window': '02:00-05:00', 'drop_tables_retries': 1}
    assert sorted(messages) == sorted([
        'drop_tables is the old name of drop_tables_tables (playbooks/drop_tables.yml): use drop_tables_tables',
        'drop_window is the old name of drop_tables_window (playbooks/drop_tables.yml): use drop_tables_window',
        'drop_retries is the old name of drop_tables_retries, which is given too and used: remove drop_retries '
        '(playbooks/drop_tables.yml)'])
    assert pi.check('drop_tables', given)['tables'] == ['shop.a']
    given, messages = pi.renamed('drop_tables_finish_staged', {'drop_staging_dir': '/srv/s'})
    assert given == {'drop_tables_staging_dir': '/srv/s'} and len(messages) == 1
    assert pi.renamed('convert_tables', {'convert_tables_engine': 'InnoDB'}) == ({'convert_tables_engine': 'InnoDB'}, [])


def test_one_option_alone_needs_no_other_input():
    assert pi.check('drop_tables', {}, 'hosts') == 'all'
    assert pi.check('drop_tables', {'drop_tables_hosts': 'db1:db2', 'drop_tables_retries': 'x'}, 'hosts') == 'db1:db2'
    with pytest.raises(pi.PlaybookInputError, match="argument 'ahi_advisor_hosts' is of type dict"):
        pi.check('ahi_advisor', {'ahi_advisor_hosts': {'db1': 1}, 'ahi_advisor_sample_seconds': 0}, 'hosts')


def test_a_secret_input_is_checked_but_never_returned_nor_shown():
    """rolling_restart_primary_replication_password (no_log in the restart role's specs): the lookup's result goes into
    a fact, which -v prints; a wrong value is named without being shown."""
    assert pi.role_option('restart', 'restart_primary_replication_password')['no_log'] is True
    inputs = pi.check('rolling_restart', {'rolling_restart_primary_replication_password': 'Hunter2-secret'})
    assert 'primary_replication_password' not in inputs and 'Hunter2-secret' not in repr(inputs)
    text = problems('rolling_restart', {'rolling_restart_primary_replication_password': 'Hunter2-secret',
                                        'rolling_restart_primary': 'failover'})
    assert 'rolling_restart_primary must be one of' in text and 'Hunter2-secret' not in text, text
