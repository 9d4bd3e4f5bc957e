# -*- coding: utf-8 -*-
"""masking.py: secrets masked by what a variable is (the report's end-to-end masking: test_verify_report.py)."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import masking
from ansible_collections.dbfleet.innodb.plugins.module_utils.versions.flavor_data import catalog


# ---------------------------------------------------------------- a variable's name
@pytest.mark.parametrize('name,secret', [
    ('wsrep_sst_auth', True), ('report_password', True), ('loose-wsrep-sst-auth', True), ('group_replication_recovery_password', True),
    ('disconnect_on_expired_password', False), ('default_authentication_plugin', False), ('innodb_adaptive_hash_index', False),
    ('password_history', False), ('validate_password_length', False),
    # Plugin variables the catalogs (read without plugins) do not have.
    ('authentication_ldap_sasl_bind_root_pwd', True), ('authentication_ldap_simple_bind_root_pwd', True),
    ('keyring_hashicorp_secret_id', True), ('keyring_hashicorp_role_id', False), ('file_key_management_filekey', True),
    ('secure_auth', False),
])
def test_is_secret_variable(name, secret):
    assert masking.is_secret_variable(name) is secret


def test_credentials_inside_an_option_string_are_masked_by_key_not_by_value():
    text = 'gcache.size=1G; socket.ssl_key_password=hunter2; pc.weight=1; auth = "a b"'
    assert masking.mask_text(text) == 'gcache.size=1G; socket.ssl_key_password=********; pc.weight=1; auth = ********'
    assert masking.mask_text(None) is None


def test_an_item_of_a_secret_variable_is_masked_in_every_field():
    item = dict(runtime='s3', desired='s3', configured=dict(value='s3', text='wsrep_sst_auth=s3', file='/etc/x.cnf'),
                notes=['runs s3'], startup=dict(value='s3', source='/etc/x.cnf: s3'))
    masking.mask_item('wsrep_sst_auth', item)
    assert 's3' not in repr(dict(item, configured=dict(item['configured'], file=None)))
    assert item['configured']['file'] == '/etc/x.cnf' and item['masked'] is True


# ---------------------------------------------------------------- the server's command line
def test_mask_argv_masks_by_name_as_the_report_does():
    argv = ['/usr/sbin/mysqld', '--report-password=pw1', '--loose_wsrep_sst_auth=u:pw2', '--report-password', 'pw3',
            '--file-key-management-filekey=pw4', '--wsrep-provider-options=a=1;pc.password=pw5', '-ppw6',
            '--disconnect-on-expired-password=ON', '--ssl-key=/etc/mysql/key.pem', 'pw7-not-an-option']
    assert masking.mask_argv(argv) == [
        '/usr/sbin/mysqld', '--report-password=********', '--loose_wsrep_sst_auth=********', '--report-password',
        '********', '--file-key-management-filekey=********', '--wsrep-provider-options=a=1;pc.password=********',
        '-p********', '--disconnect-on-expired-password=ON', '--ssl-key=/etc/mysql/key.pem', 'pw7-not-an-option']
    assert masking.mask_argv(None) == [] and argv[1] == '--report-password=pw1'


def test_a_separate_value_is_masked_whatever_it_starts_with():
    # mysqld takes the argument after --wsrep-sst-auth as its value, a leading dash included.
    assert masking.mask_argv(['mysqld', '--wsrep-sst-auth', '-leading:pw', '--port=3306']) == [
        'mysqld', '--wsrep-sst-auth', masking.MASK, '--port=3306']
    assert masking.mask_argv(['mysqld', '--authentication-ldap-sasl-bind-root-pwd', 'pw']) == [
        'mysqld', '--authentication-ldap-sasl-bind-root-pwd', masking.MASK]


def test_secret_values_and_mask_by_name_take_a_roles_inputs():
    inputs = dict(settings_values=dict(wsrep_sst_auth='u:pw', innodb_io_capacity=200, report_password=''),
                  settings_restart='never')
    assert masking.secret_values(inputs) == {'u:pw'}
    assert masking.mask_by_name(dict(wsrep_sst_auth='u:pw', innodb_io_capacity='200', report_password='')) == dict(
        wsrep_sst_auth=masking.MASK, innodb_io_capacity='200', report_password='')


# ---------------------------------------------------------------- every name of the lab's four servers
# The names of the four catalogs (flavor_data: every variable and option of MySQL 8.0.33 / 9.7.4, MariaDB 10.11.19 /
# 11.8.9) whose value is a secret, and those that look like one but are settings about passwords: a new server
# version's name that looks like a secret lands in one list or the other, by a decision.
CATALOG_SECRETS = {'keyring_migration_password', 'report_password', 'wsrep_sst_auth'}
LOOKS_SECRET_BUT_IS_NOT = {
    'authentication_policy', 'default_authentication_plugin', 'default_password_lifetime',
    'disconnect_on_expired_password', 'generated_random_password_length', 'max_password_errors', 'old_passwords',
    'password_history', 'password_require_current', 'password_reuse_interval', 'secure_auth',
    'strict_password_validation', 'show_replica_auth_info', 'show_slave_auth_info', 'innodb_ft_max_token_size',
    'innodb_ft_min_token_size', 'ngram_token_size', 'mysql_native_password_proxy_users',
    'caching_sha2_password_auto_generate_rsa_keys', 'caching_sha2_password_digest_rounds',
    'caching_sha2_password_enforce_storage_format', 'caching_sha2_password_private_key_path',
    'caching_sha2_password_proxy_users', 'caching_sha2_password_public_key_path',
    'caching_sha2_password_storage_format', 'sha256_password_auto_generate_rsa_keys',
    'sha256_password_private_key_path', 'sha256_password_proxy_users', 'sha256_password_public_key_path',
    'des_key_file',   # the path of a key file, not a key
}


def _catalog_names():
    names = set()
    for facts in catalog.FACTS.values():
        names |= set(facts.names()) | set(n.replace('-', '_') for n in facts.options | set(facts.removed_accepted))
    return names


def test_every_variable_name_of_the_four_servers_is_secret_or_not_by_a_decision():
    names = _catalog_names()
    assert len(names) > 1000
    assert sorted(n for n in names if masking.is_secret_variable(n)) == sorted(CATALOG_SECRETS)
    looks = set(n for n in names if any(word in n for word in masking.SECRET_WORDS + ('pass', 'phrase', 'key_file')))
    undecided = sorted(looks - CATALOG_SECRETS - LOOKS_SECRET_BUT_IS_NOT)
    assert undecided == [], 'secret-looking names neither masked nor listed as not secret: %s' % undecided
    assert LOOKS_SECRET_BUT_IS_NOT <= names     # a stale entry decides nothing


def test_the_servers_access_denied_message_keeps_its_words_and_a_value_after_it_is_still_masked():
    text = "Access denied for user 'dbfleet'@'localhost' (using password: YES)"
    assert masking.mask_text(text) == text
    assert masking.mask_text("(using password: NO)") == "(using password: NO)"
    assert masking.mask_text("(using password: s3cret)") == "(using password: " + masking.MASK
    assert masking.mask_text("password: YES)") == "password: " + masking.MASK
