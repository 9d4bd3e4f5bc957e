"""lab.reserve_ports: the lab's listening ports kept out of the kernel's automatic local ports."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import reserve_ports  # noqa: E402  pylint: disable=wrong-import-position


def test_ports_are_added_to_what_is_reserved_and_only_once(tmp_path):
    path = tmp_path / "ip_local_reserved_ports"
    path.write_text("8080,33000-33010\n")
    assert reserve_ports([33011, 33005, 33303, 33011], path=str(path))
    assert path.read_text() == "8080,33000-33010,33011,33303"
    assert reserve_ports([33303, 33000], path=str(path))          # nothing missing: left as it is
    assert path.read_text() == "8080,33000-33010,33011,33303"


def test_an_empty_list_gets_the_ports_alone(tmp_path):
    path = tmp_path / "ip_local_reserved_ports"
    path.write_text("\n")
    assert reserve_ports([33080], path=str(path))
    assert path.read_text() == "33080"


def test_without_the_file_nothing_is_reserved(tmp_path):
    assert reserve_ports([33080], path=str(tmp_path / "absent")) is False
