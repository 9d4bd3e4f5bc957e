"""What the table conversion tests share (local/playbooks/test_convert_tables.py, fleet/playbooks/
test_convert_tables_fleet.py): playbooks/convert_tables.yml as they run it, and a table's engine and content read from
its server."""
from ansible_collections.dbfleet.innodb.plugins.module_utils.guarded.content_checksum import checksum_from_row, content_checksum_sql
from dbfleet_testing.runs import YAML_RESULTS, flat, playbook_proc
from dbfleet_testing.windows import window_around_now

SCHEMA = 'dbfleet_test_convert'


def playbook(inventory, check=False, **extra):
    """(rc, output on one line: YAML folds long messages) of convert_tables.yml with extra, its window around now unless
    given."""
    extra.setdefault('convert_tables_window', window_around_now(True))
    proc = playbook_proc(inventory, 'convert_tables.yml', extra, check=check, timeout=300, env_extra=YAML_RESULTS)
    return proc.returncode, flat(proc.stdout + proc.stderr)


def engine(lab, host, table):
    rows = lab.query(host, 'SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                     (SCHEMA, table), tries=20)
    return rows[0]['ENGINE'] if rows else None


def content(lab, host, table, columns):
    return checksum_from_row(lab.query(host, content_checksum_sql(SCHEMA, table, columns), tries=20)[0])
