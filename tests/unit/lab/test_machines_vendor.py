"""The booted host pkg5: MySQL 8.0.33's tarball under a unit written as Oracle's Debian package writes it."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab"))

from dbfleet_lab import machines  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.labs import Fleet, booted  # noqa: E402  pylint: disable=wrong-import-position
from dbfleet_lab.servers import MYSQL80  # noqa: E402  pylint: disable=wrong-import-position


def unit_settings():
    values = dict(version=MYSQL80.version, basedir=machines.TARBALL_BASEDIR)
    return dict(line.split("=", 1) for line in (machines.VENDOR_UNIT % values).splitlines()
                if "=" in line and not line.startswith("#"))


def test_the_unit_is_the_vendors_forking_one_running_the_tarball():
    unit = unit_settings()
    assert unit["Type"] == "forking"
    assert unit["ExecStart"].split() == ["/usr/local/mysql/bin/mysqld", "--daemonize", "--pid-file=" + unit["PIDFile"]]
    assert unit["ExecStartPre"] == "/usr/share/mysql-8.0/mysql-systemd-start pre"
    assert (unit["User"], unit["RuntimeDirectory"], unit["Restart"]) == ("mysql", "mysqld", "on-failure")


def test_the_option_layout_is_the_vendors_with_the_socket_for_clients():
    files = machines.VENDOR_OPTION_FILES
    includes = [line.split()[1] for line in files["etc/mysql/mysql.cnf"].splitlines() if line.startswith("!includedir")]
    assert includes == ["/etc/mysql/conf.d/", "/etc/mysql/mysql.conf.d/"]
    assert includes[-1].rstrip("/") == machines.BOOKWORM_MYSQL80.server_dir
    server = files["etc/mysql/mysql.conf.d/mysqld.cnf"]
    assert "socket\t\t= %s" % machines.VENDOR_SOCKET in server and "log-error\t= /var/log/mysql/error.log" in server
    assert "socket = %s" % machines.VENDOR_SOCKET in files["etc/mysql/conf.d/client.cnf"]
    # The server's own unit, paths and binary are what the collection must find: never a password in these files.
    assert not any("password" in text for text in files.values())


def test_pkg5_is_an_optional_booted_host_sharing_the_bookworm_stage():
    host = {h.name: h for h in Fleet.HOSTS}["pkg5"]
    assert booted(host) and host.optional and not host.source
    assert host.kind.dist is machines.BOOKWORM_MYSQL80 and host.kind.flavor == "mysql"
    assert machines.BOOKWORM_MYSQL80.stage == machines.BOOKWORM_MARIADB.key      # one debootstrap of bookworm
    assert machines.BOOKWORM_MARIADB.stage == machines.BOOKWORM_MARIADB.key      # the others keep their own
    assert host.kind.version == "?" or host.kind.version == MYSQL80.version


def test_a_booted_mysql_replica_connects_with_tls_and_a_mariadb_one_as_before():
    # caching_sha2_password (the booted MySQL hosts' accounts) needs TLS at a replica's first login.
    first, args = machines.MACHINE_MYSQL80.replica_sql("10.0.0.1", 3306, "repl", "secret")[0]
    assert "SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1" in first and args == ("10.0.0.1", 3306, "repl", "secret")
    assert machines.MACHINE_MARIADB1011.replica_sql("10.0.0.1", 3306, "repl", "secret") == \
        machines.MACHINE_MARIADB1011.sql_kind.replica_sql("10.0.0.1", 3306, "repl", "secret")
