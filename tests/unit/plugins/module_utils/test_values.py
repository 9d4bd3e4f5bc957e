import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils import values as v


@pytest.mark.parametrize('value', [True, 'ON', 'on', 'true', 'Yes', 1, '1'])
def test_true_spellings(value):
    assert v.normalize(value, 'bool') == 'ON'


@pytest.mark.parametrize('value', [False, 'OFF', 'off', 'false', 'no', 0, '0'])
def test_false_spellings(value):
    assert v.normalize(value, 'bool') == 'OFF'


@pytest.mark.parametrize('value', ['maybe', 2, None, '', 'onn'])
def test_bad_booleans(value):
    with pytest.raises(v.ValueError_):
        v.normalize(value, 'bool')


@pytest.mark.parametrize('value, expected', [
    ('1G', 1 << 30), ('512M', 512 << 20), ('64k', 64 << 10), (134217728, 134217728), ('134217728', 134217728),
    ('1GiB', 1 << 30), ('2 G', 2 << 30),
])
def test_sizes(value, expected):
    assert v.parse_size(value) == expected


@pytest.mark.parametrize('value', ['1.5G', 'big', '-1', True, '1X'])
def test_bad_sizes(value):
    with pytest.raises(v.ValueError_):
        v.parse_size(value)


def test_enum_case_insensitive():
    choices = ('fsync', 'O_DIRECT')
    assert v.equal('o_direct', 'O_DIRECT', 'enum', choices)
    with pytest.raises(v.ValueError_):
        v.normalize('direct', 'enum', choices)


def test_equal_by_meaning():
    assert v.equal(True, 'ON', 'bool')
    assert not v.equal(True, 'OFF', 'bool')
    assert v.equal('1G', '1073741824', 'size')
    assert v.equal(0, '0', 'int')
    assert not v.equal(1, None, 'int')


def test_buffer_pool_rounding():
    chunk = 128 << 20
    assert v.buffer_pool_effective(200 << 20, chunk, 1) == 256 << 20
    assert v.buffer_pool_effective(1 << 30, chunk, 8) == 1 << 30
    assert v.buffer_pool_effective(1 << 30, 0, 1) == 1 << 30


def test_guess_kind():
    assert v.guess_kind('ON') == 'bool'
    assert v.guess_kind('42') == 'int'
    assert v.guess_kind('O_DIRECT') == 'str'
