"""Security-critical and secret-valued settings (module_utils/roles/security_settings.py) and the settings role's refusal
of them (settings.security_inputs()), before anything changes."""

from __future__ import annotations

import functools
import os

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.roles import security_settings as sec
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog

from test_desired import error_of
from test_settings import server, state

# The issue's four (issue 43), and the rest of its list, as the settings map would name them.
REFUSED = dict(skip_grant_tables='ON', init_file='/tmp/x.sql', plugin_dir='/tmp', secure_file_priv='',
               require_secure_transport='OFF', local_infile=True, default_authentication_plugin='mysql_native_password',
               authentication_policy='mysql_native_password,,', mysql_native_password='ON', init_connect='SELECT 1',
               init_replica='SELECT 1', init_slave='SELECT 1', plugin_load='x.so', plugin_load_add='x.so',
               early_plugin_load='keyring_file.so', general_log_file='/tmp/g', slow_query_log_file='/tmp/s',
               log_error='/tmp/e', tmpdir='/tmp', datadir='/tmp/d', basedir='/tmp', keyring_file_data='/tmp/k',
               ssl_key='/tmp/k.pem', tls_version='TLSv1', ssl='OFF')


@pytest.mark.parametrize('name', sorted(REFUSED))
def test_each_security_setting_is_refused_by_name(name):
    found = sec.refusals({name: REFUSED[name]})
    assert [(key, base) for key, base, _rule in found] == [(name, name)]


@pytest.mark.parametrize('written,value', [
    ('skip-grant-tables', 1), ('loose-skip-grant-tables', 'on'), ('LOOSE_INIT_FILE', '/tmp/x'),
    ('init-file', '/tmp/x'), ('maximum-init-file', 'x'), ('enable-local-infile', 1), ('enable_local_infile', 'yes'),
    ('skip-require-secure-transport', 1), ('disable_require_secure_transport', 'ON'), ('skip-ssl', 'ON'),
    ('loose-disable-ssl', None), ('loose_ssl_cert', '/tmp/c'), ('admin-tls-version', 'TLSv1'),
    ('caching_sha2_password_private_key_path', '/tmp/k'), ('Plugin-Load-Add', 'x.so'),
])
def test_option_file_spellings_do_not_get_around_it(written, value):
    found = sec.refusals({written: value})
    assert (len(found) == 1) is (value is not None), found    # null leaves the setting alone: nothing to refuse


@pytest.mark.parametrize('written,value', [
    ('skip_grant_tables', 'OFF'), ('require_secure_transport', 'ON'), ('local_infile', False),
    ('skip-local-infile', 'ON'), ('enable-require-secure-transport', 1), ('disable-skip-grant-tables', 1),
    ('default_authentication_plugin', 'caching_sha2_password'), ('authentication_policy', '*,,'),
    ('secure_auth', 'ON'), ('old_passwords', 0), ('mysql_native_password', 'OFF'),
    ('skip_networking', 'ON'), ('innodb_buffer_pool_size', '1G'), ('innodb_monitor_enable', 'all'),
])
def test_the_safe_value_and_unrelated_settings_pass(written, value):
    assert sec.refusals({written: value}) == []


def test_a_weak_plugin_anywhere_in_the_policy_is_refused():
    assert sec.refusals({'authentication_policy': '*,MYSQL_NATIVE_PASSWORD'})
    assert sec.refusals({'authentication_policy': ['x']})    # not text: not known to be safe


def test_the_acknowledgement_allows_by_name_or_pattern_and_names_nothing_else():
    assert sec.refusals(dict(init_file='/x', ssl_cert='/c'), ['init_file', 'ssl_*']) == []
    assert [f[1] for f in sec.refusals(dict(init_file='/x', ssl_cert='/c'), ['Init-File'])] == ['ssl_cert']
    assert sec.unknown_allowances(['init_file', 'ssl_*', 'innodb_io_capacity', 3]) == ['innodb_io_capacity', 3]


def test_every_rule_has_a_source_and_a_reason():
    for rule in sec.RULES:
        assert rule.source in sec.SOURCES and rule.why and rule.category, rule
        assert rule.safe in (None, 'ON', 'OFF', sec.STRONG_PLUGINS), rule


def test_every_exact_rule_is_a_name_of_some_lab_server_or_a_plugins():
    """A rule with a misspelt name protects nothing: each exact name is a variable or option of one of the four
    servers' catalogs, or of a plugin the catalogs (read without plugins) cannot have."""
    names = set()
    for facts in catalog.FACTS.values():
        names |= set(facts.names()) | set(n.replace('-', '_') for n in facts.options)
    plugin_only = {'mysql_native_password'}
    missing = [r.pattern for r in sec.RULES if '*' not in r.pattern and r.pattern not in names | plugin_only]
    assert missing == []


# ---------------------------------------------------------------- the settings role
def test_the_role_refuses_the_issues_four_in_one_message_naming_each_and_why():
    text = error_of(state, dict(skip_grant_tables='ON', init_file='/tmp/x.sql', plugin_dir='/tmp',
                                secure_file_priv='', innodb_lock_wait_timeout=77), server('mariadb', (10, 11, 19)))
    assert text.count('turns security off') == 1, text
    for name, why in (('skip_grant_tables', 'without its privilege tables'), ('init_file', 'SQL the server runs'),
                      ('plugin_dir', 'shared objects'), ('secure_file_priv', 'LOAD DATA')):
        assert name in text and why in text, (name, text)
    assert 'settings_allow_security_settings' in text and '/tmp/x.sql' not in text


def test_the_role_takes_an_acknowledged_setting_and_still_checks_it_against_the_catalog():
    mysql = server('mysql', (8, 0, 33), extra=dict(init_file=dict(value='')))
    out = state(dict(init_file='/etc/mysql/init.sql'), mysql, settings_allow_security_settings=['init_file'])
    assert out['settings'] == dict(init_file='/etc/mysql/init.sql')
    assert 'no such variable' in error_of(functools.partial(state, settings_allow_security_settings=['plugin_dir']),
                                          dict(plugin_dir='/x'), server())


@pytest.mark.parametrize('allowed,message', [
    ('init_file', 'settings_allow_security_settings must be a list'),
    (['innodb_io_capacity'], "settings_allow_security_settings names 'innodb_io_capacity': not a security setting"),
])
def test_a_bad_acknowledgement_is_an_error(allowed, message):
    assert message in error_of(functools.partial(state, settings_allow_security_settings=allowed),
                               dict(innodb_lock_wait_timeout=5))


@pytest.mark.parametrize('written', ['wsrep_sst_auth', 'loose-wsrep-sst-auth', 'report_password'])
def test_a_secret_valued_setting_is_refused_always_and_its_value_never_shown(written):
    secret = 'sst:Very-Secret-1'
    allowed = functools.partial(state, settings_allow_security_settings=['init_file'])
    text = error_of(allowed, {written: secret}, server('mariadb', (10, 11, 19)))
    assert 'holds a secret (%s)' % written in text and secret not in text and 'mode 0640' in text


def test_docs_security_lists_every_rule_and_source():
    """docs/security.md's table of the refused settings is the table of the code: every pattern and source key."""
    root = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..')
    with open(os.path.join(root, 'docs', 'security.md'), encoding='utf-8') as handle:
        text = handle.read()
    for rule in sec.RULES:
        assert '| `%s` | %s |' % (rule.pattern, rule.category) in text, rule.pattern
    for key, title in sec.SOURCES.items():
        assert '| %s | %s |' % (key, title) in text, key
