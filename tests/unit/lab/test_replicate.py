"""lab.py up points a replica at its source once, and starts an existing replica again (STOP, then START): an IO
thread still connecting waits out its connect retry, which a switchover's repoint leaves at the server's 60 s."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import labs  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab import servers  # noqa: E402  pylint: disable=wrong-import-position
from fake_db import Conn  # noqa: E402  pylint: disable=wrong-import-position


class FakeKind(servers.MySQL80):
    """The replica's state (IO thread, SQL thread, last IO error) as read one after the other: the last one stays."""

    def __init__(self, states):
        self.states = list(states)

    def replica_state(self, conn):
        return self.states.pop(0) if len(self.states) > 1 else self.states[0]


class FakeInstance:
    def __init__(self, conn):
        self.conn = conn

    def connect_root(self):
        return self.conn


def replicate(states):
    conn = Conn()
    lab = object.__new__(labs.Lab)
    lab.instance = lambda name: FakeInstance(conn)
    host = labs.Host(name="db2", kind=FakeKind(states), server_id=2, source="db1")
    lab._replicate(host, "10.0.0.11", 3306, "repl", "pw")  # pylint: disable=protected-access
    return conn.statements


def test_a_replica_left_connecting_is_started_again_not_only_started():
    statements = replicate([("Connecting", "Yes", "Can't connect"), ("Yes", "Yes", "")])
    assert statements == ["STOP REPLICA", "START REPLICA"]


def test_a_new_replica_is_pointed_at_its_source_once_and_a_running_one_left_alone():
    statements = replicate([None, ("Yes", "Yes", "")])
    assert statements[0].startswith("CHANGE REPLICATION SOURCE TO") and statements[1] == "START REPLICA"
    assert replicate([("Yes", "Yes", ""), ("Yes", "Yes", "")]) == []
