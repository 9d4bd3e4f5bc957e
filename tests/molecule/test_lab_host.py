"""The scenario's host is the server the lab promised, reachable the way Ansible reaches it."""
from dbhelpers import global_value


def test_server_is_the_expected_flavor_and_version(db, hostvars):
    version = global_value(db, 'version')
    assert version.startswith(str(hostvars['dbfleet_lab_expected_version']))
    assert ('MariaDB' in version) == (hostvars['dbfleet_lab_expected_flavor'] == 'mariadb')


def test_dropin_directory_is_included(host, hostvars, dropin_dir):
    option_file = host.file(hostvars.get('dbfleet_option_file', '/etc/mysql/my.cnf'))
    assert option_file.exists
    assert '!includedir %s' % dropin_dir in option_file.content_string
