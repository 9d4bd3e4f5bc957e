import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.versions import server_identity


@pytest.mark.parametrize('text, expected', [
    ('8.0.33', (8, 0, 33)),
    ('10.11.19-MariaDB-0+deb12u1', (10, 11, 19)),
    ('5.7.22-log', (5, 7, 22)),
    ('8.0.36-28', (8, 0, 36)),
])
def test_parse_version(text, expected):
    assert server_identity.parse_version(text) == expected


@pytest.mark.parametrize('text', ['', 'MariaDB', None, '8.0'])
def test_parse_version_rejects_garbage(text):
    with pytest.raises(ValueError):
        server_identity.parse_version(text)


@pytest.mark.parametrize('variables, flavor, reader', [
    ({'version': '8.0.33', 'version_comment': 'MySQL Community Server - GPL'}, 'mysql', None),
    ({'version': '10.11.19-MariaDB-0+deb12u1', 'version_comment': 'Debian 12'}, 'mariadb', None),
    ({'version': '8.0.36-28', 'version_comment': 'Percona Server (GPL), Release 28'}, 'percona', None),
    ({'version': '8.0.28', 'version_comment': 'Source distribution', 'aurora_version': '3.04.0',
      'innodb_read_only': 'ON'}, 'aurora-mysql', True),
    ({'version': '5.7.12', 'version_comment': 'MySQL Community Server (GPL)', 'aurora_version': '2.11.2',
      'innodb_read_only': 'OFF'}, 'aurora-mysql', False),
])
def test_identity(variables, flavor, reader):
    ident = server_identity.identity_from_variables(variables)
    assert ident.flavor == flavor
    assert ident.aurora_reader is reader
