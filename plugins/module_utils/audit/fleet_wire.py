# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller audit's own reading of the MySQL wire (verify_fleet.py's connections): result rows and column
definitions read in one pass over each packet (read_rows(), Field, Result), and a PyMySQL connection class that
reads results that way, shares one TLS context per set of TLS options and fails every read after its exchange's
deadline (FleetConnection; the deadline is fleet_deadline.Deadline). What PyMySQL does, at a fraction of its CPU per row:
bench/verify_fleet/README.md ("Where a host's ~6 ms of controller CPU goes")."""

from __future__ import annotations

import struct
import threading

from ansible_collections.dbfleet.innodb.plugins.module_utils.login import connection


_MAX_PACKET = 0xffffff


def _read_packet(read, seq):
    """(payload, next seq id, None) of one packet of the wire, a payload of 16 MiB or more joined with the packets
    that continue it; (None, seq, the seq id received) when a packet does not carry the expected seq id.
    A short read raises EOFError."""
    data = b''
    while True:
        header = read(4)
        if len(header) < 4:
            raise EOFError()
        length = header[0] | header[1] << 8 | header[2] << 16
        if header[3] != seq:
            return None, seq, header[3]
        seq = (seq + 1) & 0xff
        part = read(length)
        if len(part) < length:
            raise EOFError()
        data = data + part if data else part
        if length != _MAX_PACKET:
            return data, seq, None


def read_rows(read, seq, converters, on_end):
    """The rows of a text-protocol result set read with read(n) (a buffered reader's read), and the next seq id.

    What PyMySQL's MySQLResult._read_rowdata_packet does, without a packet object, two method calls and
    a length-coded read per value: at ~650 rows of SHOW GLOBAL VARIABLES per host that was a third of the
    controller's CPU per host. Values are decoded and converted as PyMySQL does (converters: its
    (encoding, converter) per column). on_end(payload) is called with a packet that starts with 0xfe and
    returns True when it ends the result (PyMySQL's EOF check); an error packet (0xff) or a packet of another
    sequence number is returned as ('error', payload, seq) / ('sequence', number, seq) for the caller to raise
    as PyMySQL would. A short read raises EOFError."""
    rows = []
    append = rows.append
    while True:
        data, seq, got = _read_packet(read, seq)
        if data is None:
            return rows, ('sequence', got, seq)
        first = data[0] if data else 0
        if first == 0xff:
            return rows, ('error', data, seq)
        if first == 0xfe and on_end(data):
            return rows, ('end', None, seq)
        row = []
        pos, size = 0, len(data)
        for encoding, converter in converters:
            if pos >= size:                 # no more columns in this row (as PyMySQL)
                break
            c = data[pos]
            if c < 0xfb:
                pos += 1
                n = c
            elif c == 0xfb:
                row.append(None)
                pos += 1
                continue
            elif c == 0xfc:
                n = data[pos + 1] | data[pos + 2] << 8
                pos += 3
            elif c == 0xfd:
                n = data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16
                pos += 4
            else:
                n = int.from_bytes(data[pos + 1:pos + 9], 'little')
                pos += 9
            value = data[pos:pos + n]
            pos += n
            if encoding is not None:
                value = value.decode(encoding)
            if converter is not None:
                value = converter(value)
            row.append(value)
        append(tuple(row))


if connection.pymysql is not None:
    _protocol = connection.pymysql.protocol
    _CR = connection.pymysql.constants.CR
    _FIELD_TYPE = connection.pymysql.constants.FIELD_TYPE
    _TEXT_TYPES = connection.pymysql.connections.TEXT_TYPES
    _THROUGH = connection.pymysql.converters.through
    _FIELD_TAIL = struct.Struct('<xHIBHBxx')

    class Field(object):
        """A column definition packet, parsed as PyMySQL's FieldDescriptorPacket parses it (the same attributes
        and description()), in one pass over the bytes: a result of SHOW REPLICA STATUS has 50-70 columns, and
        PyMySQL's packet object with a method call per field was a tenth of the controller's CPU per host."""
        __slots__ = ('_data', '_encoding', 'catalog', 'db', 'table_name', 'org_table', 'name', 'org_name', 'charsetnr',
                     'length', 'type_code', 'flags', 'scale')

        def __init__(self, data, encoding):
            self._data = data
            self._encoding = encoding
            if data and data[0] == 0xff:
                return
            pos, out = 0, []
            for _field in range(6):
                c = data[pos]
                if c < 0xfb:
                    n, pos = c, pos + 1
                elif c == 0xfb:
                    out.append(None)
                    pos += 1
                    continue
                elif c == 0xfc:
                    n, pos = data[pos + 1] | data[pos + 2] << 8, pos + 3
                elif c == 0xfd:
                    n, pos = data[pos + 1] | data[pos + 2] << 8 | data[pos + 3] << 16, pos + 4
                else:
                    n, pos = int.from_bytes(data[pos + 1:pos + 9], 'little'), pos + 9
                out.append(data[pos:pos + n])
                pos += n
            self.catalog, self.db = out[0], out[1]
            self.table_name, self.org_table, self.name, self.org_name = (v.decode(encoding) for v in out[2:])
            (self.charsetnr, self.length, self.type_code, self.flags,
             self.scale) = _FIELD_TAIL.unpack_from(data, pos)

        def is_error_packet(self):
            return bool(self._data) and self._data[0] == 0xff

        def is_eof_packet(self):
            return bool(self._data) and self._data[0] == 0xfe and len(self._data) < 9

        def raise_for_error(self):
            _protocol.MysqlPacket(self._data, self._encoding).raise_for_error()

        def get_column_length(self):
            if self.type_code == _FIELD_TYPE.VAR_STRING:
                return self.length // _protocol.MBLENGTH.get(self.charsetnr, 1)
            return self.length

        def description(self):
            length = self.get_column_length()
            return (self.name, self.type_code, None, length, length, self.scale, self.flags % 2 == 0)

    class Result(connection.pymysql.connections.MySQLResult):
        """PyMySQL's result, whose rows are read by read_rows() (same rows, a fraction of the CPU)."""

        def _get_descriptions(self):
            """PyMySQL's MySQLResult._get_descriptions with the column definitions read as Field."""
            conn = self.connection
            self.fields = []
            self.converters = []
            description = []
            use_unicode, encoding_of_text, decoders = conn.use_unicode, conn.encoding, conn.decoders
            for _column in range(self.field_count):
                field = conn._read_packet(Field)
                self.fields.append(field)
                description.append(field.description())
                field_type = field.type_code
                if not use_unicode:
                    encoding = None
                elif field_type == _FIELD_TYPE.JSON:
                    encoding = encoding_of_text
                elif field_type in _TEXT_TYPES:
                    encoding = None if field.charsetnr == 63 else encoding_of_text
                else:
                    encoding = 'ascii'
                converter = decoders.get(field_type)
                if converter is _THROUGH:
                    converter = None
                self.converters.append((encoding, converter))
            eof_packet = conn._read_packet()
            if not eof_packet.is_eof_packet():
                raise connection.pymysql.err.InternalError('Protocol error, expecting EOF after the column definitions')
            self.description = tuple(description)

        def _read_rowdata_packet(self):
            conn = self.connection
            conn.dbfleet_check_deadline()

            def on_end(payload):
                return self._check_packet_is_eof(_protocol.MysqlPacket(payload, conn.encoding))
            try:
                rows, (how, what, seq) = read_rows(conn._rfile.read, conn._next_seq_id, self.converters, on_end)
            except EOFError:
                conn._force_close()
                raise connection.pymysql.err.OperationalError(_CR.CR_SERVER_LOST,
                                                              'Lost connection to MySQL server during query')
            except OSError as e:
                conn._force_close()
                raise connection.pymysql.err.OperationalError(
                    _CR.CR_SERVER_LOST, 'Lost connection to MySQL server during query (%s)' % e)
            conn._next_seq_id = seq
            if how == 'sequence':
                conn._force_close()
                if what == 0:
                    raise connection.pymysql.err.OperationalError(_CR.CR_SERVER_LOST,
                                                                  'Lost connection to MySQL server during query')
                raise connection.pymysql.err.InternalError('Packet sequence number wrong - got %d expected %d'
                                                           % (what, (seq - 1) & 0xff))
            if how == 'error':
                _protocol.MysqlPacket(what, conn.encoding).raise_for_error()
            self.connection = None
            self.affected_rows = len(rows)
            self.rows = tuple(rows)

    class FleetConnection(connection.Connection):
        """A PyMySQL connection whose TLS context is shared by every connection with the same TLS options.

        Building a context loads the system's CA store (tens of milliseconds of CPU); a fleet audit opens
        one connection per host, so it builds each distinct context once. Result rows are read by Result."""
        _contexts = {}
        _lock = threading.Lock()

        def _create_ssl_ctx(self, sslp):
            if not isinstance(sslp, dict):
                return super()._create_ssl_ctx(sslp)
            key = repr(sorted(sslp.items()))
            with self._lock:
                if key not in self._contexts:
                    self._contexts[key] = super()._create_ssl_ctx(sslp)
                return self._contexts[key]

        _dbfleet_deadline = None

        def dbfleet_check_deadline(self):
            # After the deadline every read fails at once (the socket may not have existed when it passed).
            if self._dbfleet_deadline is not None and self._dbfleet_deadline.expired:
                raise connection.pymysql.err.OperationalError(2013, self._dbfleet_deadline.message())

        def _read_packet(self, packet_type=connection.pymysql.protocol.MysqlPacket):
            self.dbfleet_check_deadline()
            return super()._read_packet(packet_type)

        def _read_query_result(self, unbuffered=False):
            if unbuffered:
                return super()._read_query_result(unbuffered)
            self._result = None
            result = Result(self)
            result.read()
            self._result = result
            if result.server_status is not None:
                self.server_status = result.server_status
            return result.affected_rows
else:  # pragma: no cover - reported when connecting
    FleetConnection = None
