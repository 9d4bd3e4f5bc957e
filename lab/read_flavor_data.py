"""Read the version facts of plugins/module_utils/versions/flavor_data/ from the lab's real servers, and write them.

For each server kind of the lab (MariaDB 10.11, MySQL 8.0.33, MySQL 9.7.x, MariaDB 11.8.x), a private server is
started on a fresh copy of the lab's pristine datadir, with an option file that holds only what an instance
must have (paths, port, user: INSTANCE_OPTIONS) and nothing else, and read:

- every global variable and its value at run time (SHOW GLOBAL VARIABLES): the default the server really
  runs with, start-up decisions included (MySQL 9.7 prints innodb_flush_method fsync in --verbose --help
  and runs O_DIRECT);
- its type, range and values where the server's tables give them: information_schema.SYSTEM_VARIABLES
  (MariaDB: type, READ_ONLY, ENUM_VALUE_LIST, NUMERIC_MIN/MAX_VALUE, GLOBAL_VALUE_ORIGIN),
  performance_schema.variables_metadata (MySQL 8.3+: DATA_TYPE, MIN/MAX_VALUE) or variables_info
  (MySQL 8.0: MIN/MAX_VALUE); on MySQL, whether SET GLOBAL accepts it (dynamic) and the values of an
  enumeration (SET to 0, 1, 2 ... read back, on this private server only);
- the options the binary accepts and its compiled defaults (``--no-defaults --verbose --help``).

A default is marked machine-dependent (not one number) when the server says it decided it at start-up
(MariaDB GLOBAL_VALUE_ORIGIN AUTO), when the running value differs from --verbose --help, or when it is in
MACHINE_DEPENDENT (sized from CPUs, memory, open-file limits or another setting: documented in the manuals).
Instance values (paths, port, ids, the host name, what INSTANCE_OPTIONS set) are kept with no default.

Rule of what is kept: every global system variable the fresh server lists (nothing filtered), and every option
name of the binary; that is what tells "the target refuses this line" from "the target ignores it".

Usage (as root, the lab's cache built: `make lab-up` once):
    .venv/bin/python lab/read_flavor_data.py [--only mysql97,...] [--out plugins/module_utils/versions/flavor_data]
"""
import argparse
import datetime
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dbfleet_lab import LabError, serverhelp  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.labs import MARIADB, REPO  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.servers import MARIADB118, MYSQL80, MYSQL97, ensure_template, terminate  # noqa: E402  pylint: disable=wrong-import-position

KINDS = {"mariadb1011": MARIADB, "mysql80": MYSQL80, "mysql97": MYSQL97, "mariadb118": MARIADB118}
OUT = os.path.join(REPO, "plugins", "module_utils", "versions", "flavor_data")
GENERATOR = "lab/read_flavor_data.py"

# Variables whose value belongs to the instance, not to the version: no default is kept.
INSTANCE_VARIABLES = frozenset((
    "basedir", "bind_address", "character_sets_dir", "datadir", "general_log_file", "hostname", "innodb_data_home_dir",
    "lc_messages_dir", "log_error", "pid_file", "plugin_dir", "port", "server_uuid", "slow_query_log_file",
    "socket", "tmpdir", "mysqlx_port", "mysqlx_socket", "secure_file_priv", "log_bin_basename", "log_bin_index",
    "relay_log", "relay_log_basename", "relay_log_index", "relay_log_info_file", "report_host", "version",
    "version_comment", "version_compile_machine", "version_compile_os", "version_compile_zlib", "version_malloc_library",
    "version_source_revision", "version_ssl_library", "license", "have_openssl", "have_ssl", "ssl_ca", "ssl_cert",
    "ssl_key", "innodb_version", "protocol_version", "system_time_zone", "timestamp", "gtid_executed", "gtid_purged",
    "gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos", "gtid_slave_pos", "server_id", "log_bin",
    "persisted_globals_load", "innodb_buffer_pool_filename", "disabled_storage_engines", "pseudo_thread_id",
    "rand_seed1", "rand_seed2", "warning_count", "error_count", "last_insert_id", "identity", "insert_id",
    "in_transaction", "external_user", "proxy_user", "rpl_semi_sync_source_enabled", "wsrep_node_name",
    "wsrep_node_address", "wsrep_node_incoming_address", "wsrep_sst_receive_address", "wsrep_data_home_dir",
    "large_page_size", "log_tc_size", "report_port", "mysqlx_bind_address", "build_id",
))

# Defaults the manuals say are sized from the machine or from another setting (name -> reason, or {flavor: reason}
# where only one flavor sizes it). The running value of the lab's server is kept as an example, never compared as
# the default.
MACHINE_DEPENDENT = {
    "innodb_buffer_pool_instances": "MySQL: 8 when innodb_buffer_pool_size >= 1 GiB, else 1 (and fewer when the pool is small)",
    "innodb_read_io_threads": "MySQL 8.4+: the number of logical CPUs / 2, at least 4",
    "innodb_purge_threads": "MySQL 8.4+: 1 with up to 16 logical CPUs, else 4",
    "innodb_page_cleaners": "MySQL 8.4+: innodb_buffer_pool_instances",
    "innodb_parallel_read_threads": "MySQL 8.4+: the number of logical CPUs / 8, at least 4",
    "innodb_log_writer_threads": "MySQL 8.4+: ON with 32 or more logical CPUs, else OFF",
    "innodb_flush_method": "MySQL 8.4+: O_DIRECT when the data directory's file system supports it, else fsync",
    "innodb_use_native_aio": "OFF when io_setup() fails (no AIO in the kernel or container)",
    "innodb_numa_interleave": "takes effect only on a NUMA machine (libnuma)",
    "innodb_doublewrite_files": "MySQL: 2 x innodb_buffer_pool_instances",
    "innodb_log_spin_cpu_abs_lwm": "MySQL: spinning of the log threads, by CPU usage",
    "innodb_open_files": "sized from table_open_cache and the open-file limit",
    "table_open_cache": "reduced to what the open-file limit allows",
    "table_open_cache_instances": "MySQL: reduced on small machines",
    "table_definition_cache": "400 + table_open_cache / 2 (MySQL), at most 2000",
    "thread_cache_size": "8 + max_connections / 100 (MySQL), at most 100",
    "host_cache_size": "128 + max_connections (MySQL), at most 2000",
    "max_connections": "reduced to what the open-file limit allows",
    "open_files_limit": "the process's open-file limit (ulimit -n, systemd LimitNOFILE)",
    "thread_pool_size": "MariaDB: the number of CPUs",
    "innodb_buffer_pool_size_max": "MariaDB 11.8: from innodb_buffer_pool_size and the address space",
    "innodb_buffer_pool_size_auto_min": "MariaDB 11.8: from innodb_buffer_pool_size_max",
    "innodb_log_file_buffering": "MariaDB: OFF when the redo log can be opened with O_DIRECT",
    "innodb_log_file_write_through": "MariaDB: from the redo log's device",
    "innodb_data_file_buffering": "MariaDB: from innodb_flush_method and the file system",
    "innodb_data_file_write_through": "MariaDB: from innodb_flush_method and the file system",
    "innodb_log_buffer_size": {"mariadb": "MariaDB 11.x: at least the redo log block size of the device"},
    "innodb_adaptive_hash_index_cells": "MariaDB 11.8: sized from innodb_buffer_pool_size",
    "ignore_db_dirs": "MariaDB 11.8: adds #binlog_cache_files when the binary log is on (log-bin)",
}
# performance_schema_* sizes: -1 in --verbose --help, autosized at start-up from max_connections and the caches.
MACHINE_PREFIXES = {"performance_schema_": "autosized at start-up (-1 in --verbose --help) from max_connections and the caches"}

KIND_WORDS = {
    # performance_schema.variables_metadata DATA_TYPE (MySQL 8.3+)
    "boolean": "bool", "integer": "int", "numeric": "int", "enumeration": "enum", "set": "set", "string": "str",
    "float": "float", "double": "float",
    # information_schema.SYSTEM_VARIABLES VARIABLE_TYPE (MariaDB)
    "int": "int", "int unsigned": "int", "bigint": "int", "bigint unsigned": "int", "double_": "float",
    "enum": "enum", "flagset": "set", "varchar": "str",
}
ER_INCORRECT_GLOBAL_LOCAL_VAR = 1238


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def instance_options(kind, basedir, directory, port):
    """The option file of the private server: only what an instance must have (INSTANCE_OPTIONS)."""
    lines = ["socket = %s/s.sock" % directory, "pid-file = %s/s.pid" % directory, "port = %d" % port,
             "bind-address = 127.0.0.1", "basedir = %s" % kind.server_basedir(basedir),
             "datadir = %s/data" % directory, "user = root", "log-error = %s/error.log" % directory]
    lines += [line for line in kind.option_lines(basedir) if not line.startswith("mysqlx")]
    if kind.flavor == "mysql":
        lines += ["mysqlx-port = %d" % free_port(), "mysqlx-socket = %s/x.sock" % directory]
    return lines


def start(kind, basedir, template, directory):
    port = free_port()
    lines = instance_options(kind, basedir, directory, port)
    shutil.copytree(template, os.path.join(directory, "data"), symlinks=True)
    for leftover in ("auto.cnf",):
        path = os.path.join(directory, "data", leftover)
        if os.path.exists(path):
            os.remove(path)
    cnf = os.path.join(directory, "my.cnf")
    with open(cnf, "w", encoding="utf-8") as handle:
        handle.write("[mysqld]\n" + "\n".join(lines) + "\n")
    argv = kind.command(basedir, ["--defaults-file=" + cnf], [directory])
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 90
    while True:
        if proc.poll() is not None:
            with open(os.path.join(directory, "error.log"), encoding="utf-8", errors="replace") as handle:
                raise LabError("%s exited while starting:\n%s" % (kind.name, handle.read()[-3000:]))
        try:
            return proc, pymysql.connect(unix_socket=os.path.join(directory, "s.sock"), user="root", password="",
                                         autocommit=True), lines
        except pymysql.err.MySQLError:
            if time.monotonic() > deadline:
                proc.kill()
                raise
            time.sleep(0.3)


def rows(cur, sql):
    cur.execute(sql)
    names = [d[0].lower() for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _number(value):
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number == int(number) else number


def guess_kind(value, low, high):
    text = str(value if value is not None else "").strip()
    if text.upper() in ("ON", "OFF"):
        return "bool"
    if (low is not None and high is not None and (low, high) != (0, 0)) or text.lstrip("-").isdigit():
        return "int"
    return "str"


def mysql_enum_choices(cur, name, scope):
    """The values of a dynamic enumeration, read by setting its index 0, 1, 2 ... (private server only)."""
    where = "SESSION" if scope in ("SESSION", "BOTH") else "GLOBAL"
    cur.execute("SELECT @@%s.%s" % (where, name))
    original = _text(cur.fetchone()[0])
    choices = []
    for index in range(64):
        try:
            cur.execute("SET @@%s.%s = %d" % (where, name, index))
        except pymysql.err.MySQLError:
            break
        cur.execute("SELECT @@%s.%s" % (where, name))
        choices.append(_text(cur.fetchone()[0]))
    try:
        cur.execute("SET @@%s.%s = %%s" % (where, name), (original,))
    except pymysql.err.MySQLError:
        pass
    return tuple(choices) or None


def dynamic_on_server(cur, name):
    try:
        cur.execute("SET GLOBAL %s = @@GLOBAL.%s" % (name, name))
    except pymysql.err.MySQLError as exc:
        return exc.args[0] != ER_INCORRECT_GLOBAL_LOCAL_VAR
    return True


def machine_reason(flavor, name, value, origin, compiled):
    reasons = []
    known = MACHINE_DEPENDENT.get(name)
    if isinstance(known, dict):
        known = known.get(flavor)
    if known:
        reasons.append(known)
    for prefix, reason in MACHINE_PREFIXES.items():
        if name.startswith(prefix) and str(compiled) == "-1":
            reasons.append(reason)
    if origin == "AUTO":
        reasons.append("the server sized it at start-up (GLOBAL_VALUE_ORIGIN AUTO)")
    if compiled not in (None, "") and value is not None and not _same_text(compiled, value):
        reasons.append("decided at start-up: --verbose --help says %s" % compiled)
    return "; ".join(r for r in reasons if r) or None


def _same_text(compiled, value):
    """--verbose --help's spelling of a value and the running one mean the same (TRUE is ON, 90 is 90.000000)."""
    pair = (str(compiled).upper(), str(value).upper())
    if pair[0] == pair[1] or pair in (("TRUE", "ON"), ("FALSE", "OFF")):
        return True
    try:
        return float(pair[0]) == float(pair[1])
    except ValueError:
        return False


def read_server(host, kind, cache, work):
    basedir = kind.basedir(cache)
    template = ensure_template(kind, basedir, cache)
    directory = tempfile.mkdtemp(prefix="fd-", dir=work)
    help_text = serverhelp.help_text(kind.command(basedir, []))
    compiled = serverhelp.defaults_from_text(help_text)
    options = serverhelp.options_from_text(help_text)
    proc, conn, lines = start(kind, basedir, template, directory)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@version, @@version_comment")
            version_string, comment = (_text(v) for v in cur.fetchone())
            cur.execute("SHOW GLOBAL VARIABLES")
            running = {_text(n).lower(): _text(v) for n, v in cur.fetchall()}
            table, how = {}, []
            if kind.flavor == "mariadb":
                for row in rows(cur, "SELECT LOWER(VARIABLE_NAME) AS name, VARIABLE_TYPE AS type, READ_ONLY AS ro, "
                                     "ENUM_VALUE_LIST AS choices, NUMERIC_MIN_VALUE AS low, NUMERIC_MAX_VALUE AS high, "
                                     "GLOBAL_VALUE_ORIGIN AS origin, VARIABLE_SCOPE AS scope "
                                     "FROM information_schema.SYSTEM_VARIABLES"):
                    table[_text(row["name"])] = row
                how.append("information_schema.SYSTEM_VARIABLES")
            else:
                for row in rows(cur, "SELECT LOWER(VARIABLE_NAME) AS name, VARIABLE_SOURCE AS origin, MIN_VALUE AS low, "
                                     "MAX_VALUE AS high FROM performance_schema.variables_info"):
                    table[_text(row["name"])] = row
                how.append("performance_schema.variables_info")
                cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'performance_schema' "
                            "AND TABLE_NAME = 'variables_metadata'")
                if cur.fetchone()[0]:
                    for row in rows(cur, "SELECT LOWER(VARIABLE_NAME) AS name, DATA_TYPE AS type, "
                                         "VARIABLE_SCOPE AS scope FROM performance_schema.variables_metadata"):
                        table.setdefault(_text(row["name"]), {}).update(type=row["type"], scope=row["scope"])
                    how.append("performance_schema.variables_metadata")
                how.append("SET GLOBAL v = @@GLOBAL.v (dynamic), SET v = 0, 1, 2... (enumeration values)")
            variables = {}
            for name in sorted(running):
                row = table.get(name, {})
                value = running[name]
                low, high = _number(_text(row.get("low"))), _number(_text(row.get("high")))
                type_word = str(_text(row.get("type")) or "").lower()
                kind_name = KIND_WORDS.get(type_word) or guess_kind(value, low, high)
                if kind_name == "int" and "." in str(value):
                    kind_name = "float"
                choices = None
                if kind.flavor == "mariadb":
                    dynamic = str(_text(row.get("ro")) or "").upper() == "NO"
                    if row.get("choices") and kind_name in ("enum", "bool", "set"):
                        choices = tuple(_text(row["choices"]).split(","))
                else:
                    dynamic = dynamic_on_server(cur, name)
                    if kind_name == "enum" and dynamic:
                        choices = mysql_enum_choices(cur, name, str(_text(row.get("scope")) or "").upper())
                if kind_name == "bool":
                    choices = None
                origin = str(_text(row.get("origin")) or "").upper()
                if name in INSTANCE_VARIABLES or directory in str(value) or name in ("server_uid", "server_uuid"):
                    default, machine = None, "instance"
                else:
                    default = value
                    machine = machine_reason(kind.flavor, name, value, origin, compiled.get(name))
                if low is not None and high is not None and (low, high) == (0, 0):
                    low = high = None
                if kind_name not in ("int", "float"):
                    low = high = None
                variables[name] = (kind_name, default, dynamic, low, high, choices, machine)
    finally:
        conn.close()
        terminate(proc.pid, "%s (private)" % kind.name)
        shutil.rmtree(directory, ignore_errors=True)
        if basedir != "/usr":       # a chroot server: the empty mount point it made inside the cached chroot
            for path in (basedir + directory, basedir + work):
                try:
                    os.rmdir(path)
                except OSError:
                    pass
    version = tuple(int(x) for x in version_string.split("-")[0].split(".")[:3])
    source = dict(
        host=host, flavor=kind.flavor, version=version, version_string=version_string, version_comment=comment,
        read=("a private server on a fresh copy of the lab's datadir template, started with only %s; "
              "SHOW GLOBAL VARIABLES; %s; --no-defaults --verbose --help (option names)")
        % (", ".join(line.split(" =")[0] for line in lines), "; ".join(how)),
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        machine="%d CPUs, %d MiB memory, datadir on %s" % (os.cpu_count(), _memory_mib(), _fs_type(work)),
        generator=GENERATOR)
    extra_options = tuple(sorted(options - set(variables)))
    return source, variables, extra_options


REFUSED_WORDS = ("unknown variable", "unknown option")


def probe_option(kind, basedir, name, value):
    """What the binary says of --name=value given alone: None when it refuses it (unknown variable / option), else
    the warning it prints about it ('' when none). MySQL: --validate-config; MariaDB (which has none): --verbose
    --help, which reads the options first."""
    check = ["--validate-config"] if kind.flavor == "mysql" else ["--verbose", "--help"]
    argv = kind.command(basedir, ["--no-defaults", "--user=root", "--%s=%s" % (name.replace("_", "-"), value)] + check)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    text = proc.stderr + (proc.stdout if kind.flavor == "mysql" else "")
    if any(word in text for word in REFUSED_WORDS):
        return None
    dashed = name.replace("_", "-")
    said = [line.split("] ", 1)[-1].strip() for line in text.splitlines() if dashed in line or name in line]
    return said[0] if said else ""


def removed_but_accepted(kind, basedir, variables, options, others):
    """{name: the binary's warning} for the names of other versions of the flavor (others: their VARIABLES and
    OPTIONS) that this version lists nowhere but still takes (MariaDB keeps removed InnoDB options as no-ops:
    "'innodb-change-buffering' was removed. It does nothing now ...")."""
    accepted = {}
    for name, sample in sorted(others.items()):
        if name in variables or name in options:
            continue
        said = probe_option(kind, basedir, name, sample if sample not in (None, "") else "1")
        if said is not None:
            accepted[name] = said or "accepted without a word"
    return accepted


def other_versions(out, flavor, mine):
    """{name: a sample value} of every variable and option of the other data modules of flavor in out."""
    names = {}
    for filename in sorted(os.listdir(out)):
        if not filename.startswith(flavor + "_") or filename == mine + ".py":
            continue
        namespace = {}
        with open(os.path.join(out, filename), encoding="utf-8") as handle:
            exec(compile(handle.read(), filename, "exec"), namespace)  # pylint: disable=exec-used  # noqa: S102
        for name, row in namespace["VARIABLES"].items():
            names.setdefault(name, row[1])
        for name in namespace["OPTIONS"]:
            names.setdefault(name, None)
    return names


def _memory_mib():
    with open("/proc/meminfo", encoding="ascii") as handle:
        return int(handle.readline().split()[1]) // 1024


def _fs_type(path):
    out = subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True, check=False).stdout.strip()
    return out or "?"


def module_name(source):
    return "%s_%d_%d" % (source["flavor"], source["version"][0], source["version"][1])


def _literal(value, indent):
    """repr of value; a long string as adjacent literals, one per line, at indent; a long tuple one element a line."""
    text = repr(value)
    if isinstance(value, tuple) and len(text) > 100:
        return "(" + (",\n" + " " * (indent + 1)).join(_literal(v, indent + 1) for v in value) + ("," if len(value) == 1 else "") + ")"
    if not isinstance(value, str) or len(text) <= 100:
        return text
    parts = [value[i:i + 80] for i in range(0, len(value), 80)]
    return ("\n" + " " * indent).join(repr(part) for part in parts)


def _entry(name, facts):
    """One line of VARIABLES (or one element per line when the line would be too long)."""
    line = "    %r: (%s),\n" % (name, ", ".join(repr(v) for v in facts))
    if len(line) <= 158:
        return line
    indent = len("    %r: (" % name)
    return "    %r: (%s),\n" % (name, (",\n" + " " * indent).join(_literal(v, indent) for v in facts))


def _packed(names, indent=4, width=150):
    lines, line = [], ""
    for name in names:
        item = "%r," % name
        if line and len(line) + 1 + len(item) + indent > width:
            lines.append(line)
            line = ""
        line = (line + " " + item) if line else item
    if line:
        lines.append(line)
    return "".join(" " * indent + line + "\n" for line in lines)


def render(source, variables, options, accepted):
    header = ('# -*- coding: utf-8 -*-\n'
              '# Copyright: dbfleet.innodb contributors\n'
              '# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or '
              'https://www.gnu.org/licenses/gpl-3.0.txt)\n'
              '"""%s %s as the lab\'s own server says: generated by %s, do not edit (run it again).\n\n'
              'VARIABLES: name -> (kind, default, dynamic, minimum, maximum, choices, machine); machine is None, '
              '"instance"\n(the value is the instance\'s, no default) or why the default depends on the machine '
              '(default: this lab\'s value).\nOPTIONS: option names the binary accepts that are not variables.\n'
              'REMOVED_ACCEPTED: names of other versions of the flavor it lists nowhere but takes (a no-op, with a warning).\n"""\n\n'
              'from __future__ import annotations\n\n'
              % ("MySQL" if source["flavor"] == "mysql" else "MariaDB", ".".join(map(str, source["version"])), GENERATOR))
    body = "SOURCE = dict(\n"
    for key in sorted(source):
        body += "    %s=%s,\n" % (key, _literal(source[key], 4 + len(key) + 1))
    body += ")\n\nVARIABLES = {\n"
    for name in sorted(variables):
        body += _entry(name, variables[name])
    body += "}\n\nOPTIONS = (\n%s)\n" % _packed(options)
    body += "\n# Names of other versions this one lists nowhere but still takes, with what it says of them.\nREMOVED_ACCEPTED = {\n"
    for name in sorted(accepted):
        body += "    %r: %s,\n" % (name, _literal(accepted[name], 6 + len(repr(name))))
    body += "}\n"
    return header + body


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--only", default="", help="comma-separated lab hosts (default: %s)" % ",".join(KINDS))
    parser.add_argument("--out", default=OUT)
    args = parser.parse_args()
    cache = os.path.abspath(os.environ.get("DBFLEET_LAB_CACHE") or os.path.expanduser("~/.cache/dbfleet-lab"))
    hosts = [h for h in args.only.split(",") if h] or list(KINDS)
    work = tempfile.mkdtemp(prefix="dbfleet-fd-")
    try:
        read = {}
        for host in hosts:
            read[host] = read_server(host, KINDS[host], cache, work)
            source, variables, options = read[host]
            with open(os.path.join(args.out, module_name(source) + ".py"), "w", encoding="utf-8") as handle:
                handle.write(render(source, variables, options, {}))
        for host in hosts:      # a second pass: the other versions' names are known now
            source, variables, options = read[host]
            kind = KINDS[host]
            accepted = removed_but_accepted(kind, kind.basedir(cache), variables, options,
                                            other_versions(args.out, source["flavor"], module_name(source)))
            path = os.path.join(args.out, module_name(source) + ".py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(render(source, variables, options, accepted))
            print("%s: %s %s, %d variables (%d machine-dependent), %d other options, %d removed but accepted -> %s"
                  % (host, source["flavor"], source["version_string"], len(variables),
                     sum(1 for v in variables.values() if v[6] and v[6] != "instance"), len(options), len(accepted),
                     os.path.relpath(path, REPO)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except LabError as exc:
        sys.exit("read_flavor_data: %s" % exc)
