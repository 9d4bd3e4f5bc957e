# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""fleet_wire: the controller audit's reading of the wire gives what PyMySQL's own reader gives, from the same bytes."""

from __future__ import annotations

import io
import struct

import pytest

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection
from ansible_collections.dbfleet.innodb.plugins.module_utils.audit import fleet_wire


# ---------------------------------------------------------------- the row reader
def _packet(seq, payload):
    return struct.pack('<I', len(payload))[:3] + bytes([seq]) + payload


def _lenc(value):
    if value is None:
        return b'\xfb'
    n = len(value)
    if n < 0xfb:
        return bytes([n]) + value
    if n < 1 << 16:
        return b'\xfc' + struct.pack('<H', n) + value
    if n < 1 << 24:
        return b'\xfd' + struct.pack('<I', n)[:3] + value
    return b'\xfe' + struct.pack('<Q', n) + value


ROWS = [(b'innodb_io_capacity', b'200'), (b'version_comment', None), (b'long', b'x' * 300),
        (b'longer', b'y' * 70000), (b'', b''), ('caf\u00e9'.encode('utf-8'), b'1')]
EOF_PACKET = b'\xfe\x00\x00\x02\x00'


def _stream(rows, first_seq=5, tail=EOF_PACKET):
    out, seq = b'', first_seq
    for row in rows:
        out += _packet(seq, b''.join(_lenc(v) for v in row))
        seq = (seq + 1) & 0xff
    return out + _packet(seq, tail), (seq + 1) & 0xff


def _pymysql_rows(data, seq, converters):
    """The rows as PyMySQL's own MySQLResult reads them, from the same bytes."""
    import io
    import pymysql.connections

    class Conn(object):
        encoding = 'utf8'
        _next_seq_id = seq
        _read_timeout = _current_timeout = None
        _result = None

        def __init__(self):
            self._rfile = io.BufferedReader(io.BytesIO(data))
        _read_packet = pymysql.connections.Connection._read_packet
        _read_bytes = pymysql.connections.Connection._read_bytes

        def _force_close(self):
            pass
    conn = Conn()
    result = pymysql.connections.MySQLResult(conn)
    result.converters = converters
    result._read_rowdata_packet()
    return list(result.rows), conn._next_seq_id, result.warning_count


@pytest.mark.parametrize('converters', [
    [('utf8', None), ('utf8', None)],
    [(None, None), ('ascii', lambda v: v.upper())],
    [('utf8', None), ('utf8', None), ('utf8', None)],         # a column more than the rows have
])
def test_read_rows_gives_pymysqls_rows(converters):
    import io
    data, next_seq = _stream(ROWS)
    expected, expected_seq, warnings = _pymysql_rows(data, 5, converters)
    ends = []

    def on_end(payload):
        ends.append(payload)
        return True
    rows, (how, what, seq) = fleet_wire.read_rows(io.BufferedReader(io.BytesIO(data)).read, 5, converters, on_end)
    assert rows == expected
    assert (how, seq) == ('end', next_seq) and seq == expected_seq
    assert ends == [EOF_PACKET] and warnings == 0


def test_read_rows_stops_at_an_error_packet_and_a_wrong_sequence():
    import io
    error = b'\xff\x15\x04#28000Access denied'
    data, _seq = _stream(ROWS[:2], tail=error)
    rows, end = fleet_wire.read_rows(io.BytesIO(data).read, 5, [('utf8', None)] * 2, lambda payload: True)
    assert len(rows) == 2 and end == ('error', error, 8)
    data, _seq = _stream(ROWS[:2])
    rows, end = fleet_wire.read_rows(io.BytesIO(data).read, 4, [('utf8', None)] * 2, lambda payload: True)
    assert rows == [] and end == ('sequence', 5, 4)


def test_read_rows_raises_on_a_short_read():
    import io
    data, _seq = _stream(ROWS)
    for cut in (3, 10, len(data) - 2):
        with pytest.raises(EOFError):
            fleet_wire.read_rows(io.BytesIO(data[:cut]).read, 5, [('utf8', None)] * 2, lambda payload: True)


def test_read_rows_joins_a_row_of_16_mib_and_more():
    import io
    value = b'z' * (0xffffff + 10)
    payload = _lenc(b'big') + _lenc(value)
    data = _packet(1, payload[:0xffffff]) + _packet(2, payload[0xffffff:]) + _packet(3, EOF_PACKET)
    rows, end = fleet_wire.read_rows(io.BytesIO(data).read, 1, [(None, None)] * 2, lambda payload: True)
    assert rows == [(b'big', value)] and end == ('end', None, 4)


# ---------------------------------------------------------------- column definitions
def _coded(value):
    if len(value) < 251:
        return bytes([len(value)]) + value
    return b'\xfc' + struct.pack('<H', len(value)) + value


def _column(name, table=b'VARIABLES', type_code=253, charsetnr=33, length=1024, flags=1, scale=0):
    return (_coded(b'def') + _coded(b'performance_schema') + _coded(table) + _coded(b'org_' + table) + _coded(name)
            + _coded(b'org_' + name) + b'\x0c' + struct.pack('<HIBHB', charsetnr, length, type_code, flags, scale)
            + b'\x00\x00')


@pytest.mark.parametrize('packet', [
    _column(b'Variable_name'),
    _column(b'x' * 300, table='t\u00e9'.encode('utf8'), type_code=3, charsetnr=63, length=11, flags=0x1020, scale=0),
    _column(b'VARIABLE_VALUE', type_code=252, charsetnr=63, length=65535, flags=0x90, scale=31),
    _column(b'j', type_code=245, charsetnr=63),
])
def test_a_column_definition_reads_as_pymysqls(packet):
    pymysql = connection.pymysql
    theirs = pymysql.protocol.FieldDescriptorPacket(packet, 'utf8')
    ours = fleet_wire.Field(packet, 'utf8')
    for attribute in ('catalog', 'db', 'table_name', 'org_table', 'name', 'org_name', 'charsetnr', 'length',
                      'type_code', 'flags', 'scale'):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert ours.description() == theirs.description()
    assert not ours.is_error_packet() and not ours.is_eof_packet()


def test_a_column_definition_that_is_an_error_raises_as_pymysql():
    pymysql = connection.pymysql
    packet = b'\xff' + struct.pack('<H', 1146) + b'#42S02' + b"Table 'x.y' doesn't exist"
    field = fleet_wire.Field(packet, 'utf8')
    assert field.is_error_packet()
    with pytest.raises(pymysql.err.ProgrammingError, match='1146'):
        field.raise_for_error()


def test_the_column_definitions_of_a_result_give_pymysqls_fields_and_converters():
    pymysql = connection.pymysql
    packets = [_column(b'Variable_name'), _column(b'Value', type_code=3, charsetnr=63, length=11),
               _column(b'Blob', type_code=252, charsetnr=63), _column(b'Doc', type_code=245, charsetnr=63)]
    eof = b'\xfe\x00\x00\x02\x00'

    class Conn(object):
        use_unicode = True
        encoding = 'utf8'
        decoders = pymysql.converters.decoders

        def __init__(self):
            self.queue = list(packets) + [eof]

        def _read_packet(self, packet_type=pymysql.protocol.MysqlPacket):
            return packet_type(self.queue.pop(0), self.encoding)

    ours = fleet_wire.Result.__new__(fleet_wire.Result)
    theirs = pymysql.connections.MySQLResult.__new__(pymysql.connections.MySQLResult)
    for result in (ours, theirs):
        result.connection = Conn()
        result.field_count = len(packets)
        result.unbuffered_active = False
        result._get_descriptions()
    assert ours.converters == theirs.converters
    assert ours.description == theirs.description
    assert [f.name for f in ours.fields] == [f.name for f in theirs.fields]
    assert [f.table_name for f in ours.fields] == [f.table_name for f in theirs.fields]
