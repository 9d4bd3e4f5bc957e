"""Helpers for the testinfra checks (imported by name; kept out of conftest.py)."""


def global_value(conn, name):
    """The GLOBAL value of a server variable, or None when the server has no such variable."""
    with conn.cursor() as cur:
        cur.execute('SHOW GLOBAL VARIABLES LIKE %s', (name,))
        row = cur.fetchone()
    return row['Value'] if row else None
