# -*- coding: utf-8 -*-
"""masking.py: secrets masked by what a variable is (the report's end-to-end masking: test_verify_report.py)."""

from __future__ import annotations

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import masking


# ---------------------------------------------------------------- a variable's name
@pytest.mark.parametrize('name,secret', [
    ('wsrep_sst_auth', True), ('report_password', True), ('loose-wsrep-sst-auth', True), ('group_replication_recovery_password', True),
    ('disconnect_on_expired_password', False), ('default_authentication_plugin', False), ('innodb_adaptive_hash_index', False),
    ('password_history', False), ('validate_password_length', False),
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
