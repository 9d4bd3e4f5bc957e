"""SQL on an open connection: identifiers."""

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.sql import is_plain_identifier, quote_identifier


@pytest.mark.parametrize('name, ok', [
    ('orders', True), ('t_2024$', True), ('a' * 64, True), ('a' * 65, False), ('', False),
    ('x`; DROP', False), ('db.t', False), ('%', False), ('123', False), ('na me', False),
])
def test_identifiers(name, ok):
    assert is_plain_identifier(name) is ok
    if ok:
        assert quote_identifier(name) == '`%s`' % name
    else:
        with pytest.raises(ValueError):
            quote_identifier(name)
