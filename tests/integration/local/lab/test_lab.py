"""The lab itself (lab/lab.py): real servers, inventories, safety of up/down, downloads."""
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import pytest
import yaml
from dbfleet_testing.lab import DEFAULT_HOSTS, REPO, lab_py
from dbfleet_lab import LabError
from dbfleet_lab.artifacts import Artifact, ensure_download, ensure_dist, sha256_of
from dbfleet_testing.runs import env


EXPECTED = {"mysql80": ("mysql", "8.0.33"), "mysql57": ("mysql", "5.7.22"),
            "mysql56": ("mysql", "5.6.14"), "mariadb1011": ("mariadb", "10.11."),
            "mysql97": ("mysql", "9.7."), "mariadb118": ("mariadb", "11.8.")}


@pytest.fixture
def scratch():
    """A separate lab directory (short path: sockets) and inventory, purged afterwards."""
    root = tempfile.mkdtemp(prefix="dbf-")
    yield root
    lab_py("--lab-dir", root, "--inventory", os.path.join(root, "hosts.yml"), "down", "--purge", check=False)
    shutil.rmtree(root, ignore_errors=True)


def free_port_base():
    """A port base whose mariadb1011 port (base+11) is free, away from the main lab's, and apart from another pytest
    session's: make test runs this file's own_lab tests (one of which keeps its base's port busy on purpose) beside
    the local stream's, so each session starts its search at a base of its own (from its pid) rather than both taking
    the first free one at the same moment."""
    start = 41000 + (os.getpid() % 190) * 100
    for base in list(range(start, 60000, 100)) + list(range(41000, start, 100)):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", base + 11))
                return base
            except OSError:
                continue
    raise AssertionError("no free port found")


def test_hosts_answer_with_expected_flavor_and_version(lab):
    assert set(DEFAULT_HOSTS) <= set(lab.up_hosts())
    for host in lab.up_hosts():
        flavor, version = EXPECTED[host]
        for via in ("tcp", "socket"):
            conn = lab.connect(host, via=via)
            with conn.cursor() as cur:
                cur.execute("SELECT @@version, @@port, @@log_bin")
                reported, port, log_bin = cur.fetchone()
            conn.close()
            assert reported.startswith(version), (host, reported)
            assert ("MariaDB" in reported) == (flavor == "mariadb"), (host, reported)
            assert port == lab.hosts[host]["port"] and log_bin == 1


def test_option_file_ends_with_the_dropin_dir(lab):
    for host in lab.up_hosts():
        with open(lab.hosts[host]["option_file"], encoding="utf-8") as handle:
            lines = [line for line in handle.read().splitlines() if line.strip()]
        assert lines[-1] == "!includedir " + lab.hosts[host]["dropin_dir"]
        assert os.path.isdir(lab.hosts[host]["dropin_dir"])


def test_up_twice_is_harmless(lab):
    lab.refresh()  # other tests may have restarted servers since the lab came up
    before = {h: lab.hosts[h]["pid"] for h in lab.up_hosts()}
    out = lab.run("up").stdout
    assert "already running" in out
    assert {h: row["pid"] for h, row in lab.refresh().items() if h in before} == before


def test_inventory_lists_the_hosts_and_ansible_reaches_them(lab):
    with open(lab.inventory, encoding="utf-8") as handle:
        inventory = yaml.safe_load(handle)
    hosts = {**inventory["all"]["children"]["mysql"]["hosts"], **inventory["all"]["children"]["mariadb"]["hosts"]}
    assert set(hosts) == set(lab.up_hosts())
    mysql80 = hosts["mysql80"]
    assert mysql80["dbfleet_login_port"] == lab.hosts["mysql80"]["port"]
    assert mysql80["dbfleet_login_password"] == lab.admin_password
    assert mysql80["dbfleet_restart_command"][-2:] == ["restart", "mysql80"]
    assert mysql80["memcached_port"] != 11211
    assert inventory["all"]["vars"]["ansible_python_interpreter"] == sys.executable
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "-i", lab.inventory, "all",
                           "-m", "ansible.builtin.ping"], cwd=REPO, env=env(), capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("SUCCESS") == len(hosts)


@pytest.mark.own_lab
def test_restart_returns_once_the_server_answers(scratch):
    """In a scratch lab: restarting the shared lab's servers would disturb other tests."""
    args = ["--lab-dir", scratch, "--port-base", free_port_base(), "--inventory", os.path.join(scratch, "hosts.yml")]
    lab_py(*args, "up", "mariadb1011")

    def pid_of():
        return {r["host"]: r["pid"] for r in json.loads(lab_py(*args, "status", "--json").stdout)["hosts"]}

    before = pid_of()["mariadb1011"]
    lab_py(*args, "restart", "mariadb1011")
    assert lab_py(*args, "sql", "mariadb1011", "SELECT 1 AS one").stdout.split() == ["one", "1"]
    assert pid_of()["mariadb1011"] not in (None, before)


@pytest.mark.own_lab
def test_up_brings_back_a_server_left_down(scratch):
    """A server killed (or crashed) since the last `up`, its pid file left behind: the next `up` starts it again, as
    the second `make test` on a machine does with what the first one left."""
    args = ["--lab-dir", scratch, "--port-base", free_port_base(), "--inventory", os.path.join(scratch, "hosts.yml")]
    lab_py(*args, "up", "mariadb1011")

    def status():
        return {r["host"]: r for r in json.loads(lab_py(*args, "status", "--json").stdout)["hosts"]}["mariadb1011"]

    before = status()["pid"]
    os.kill(before, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while os.path.exists("/proc/%d" % before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert status()["state"] != "up"
    out = lab_py(*args, "up", "mariadb1011").stdout
    assert "(1 started, 0 already running)" in out, out
    after = status()
    assert after["state"] == "up" and after["pid"] not in (None, before), after
    assert lab_py(*args, "sql", "mariadb1011", "SELECT 1 AS one").stdout.split() == ["one", "1"]


def test_sql_prints_rows(lab):
    out = lab.run("sql", "mysql80", "SELECT CURRENT_USER() AS who").stdout.splitlines()
    assert out[0] == "who" and out[1].startswith(lab.admin_user + "@")


@pytest.mark.own_lab
def test_busy_port_is_a_clear_error(scratch):
    base = free_port_base()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", base + 11))
        busy.listen()
        proc = lab_py("--lab-dir", scratch, "--port-base", base, "--inventory", os.path.join(scratch, "hosts.yml"),
                      "up", "mariadb1011", check=False)
    assert proc.returncode == 1
    assert "port %d" % (base + 11) in proc.stderr and "mariadb1011" in proc.stderr
    assert not os.path.exists(os.path.join(scratch, "mariadb1011", "mysqld.pid"))


def test_down_stops_only_the_labs_own_pids(lab, scratch):
    main_pids = {h: lab.hosts[h]["pid"] for h in lab.up_hosts()}
    args = ["--lab-dir", scratch, "--port-base", free_port_base(), "--inventory", os.path.join(scratch, "hosts.yml")]
    lab_py(*args, "up", "mariadb1011")
    status = json.loads(lab_py(*args, "status", "--json").stdout)
    scratch_pid = {r["host"]: r["pid"] for r in status["hosts"]}["mariadb1011"]
    assert scratch_pid
    # a process named like a server, whose pid also sits in a stale pid file of this lab
    decoy = subprocess.Popen(["bash", "-c", "exec -a mariadbd sleep 300"])
    try:
        os.makedirs(os.path.join(scratch, "mysql57"))
        with open(os.path.join(scratch, "mysql57", "mysqld.pid"), "w", encoding="utf-8") as handle:
            handle.write("%d\n" % decoy.pid)
        lab_py(*args, "down")
        assert decoy.poll() is None, "down killed a process that is not the lab's"
        deadline = time.monotonic() + 5
        while os.path.exists("/proc/%d" % scratch_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not os.path.exists("/proc/%d" % scratch_pid)
        assert {h: r["pid"] for h, r in lab.refresh().items() if h in main_pids} == main_pids
    finally:
        decoy.send_signal(signal.SIGKILL)
        decoy.wait()


@pytest.mark.own_lab
def test_corrupt_download_is_detected_and_removed(tmp_path):
    good = b"a small stand-in for a server distribution"
    artifact = Artifact("org.example:fake-dist:1.0:zip", hashlib.sha256(good).hexdigest())
    cached = tmp_path / "downloads" / artifact.filename
    cached.parent.mkdir()
    cached.write_bytes(b"truncated")

    def must_not_fetch(_artifact, _dest):
        raise AssertionError("a cached file must be checked, not fetched again")

    with pytest.raises(LabError, match="checksum mismatch"):
        ensure_dist("fake", artifact, lambda archive, dest: None, str(tmp_path), fetch=must_not_fetch)
    assert not cached.exists() and not (tmp_path / "dist" / "fake").exists()

    def fetch_bad(_artifact, dest):
        path = os.path.join(dest, artifact.filename)
        with open(path, "wb") as handle:
            handle.write(b"corrupted in transit")
        return path

    with pytest.raises(LabError, match="checksum mismatch"):
        ensure_download(artifact, str(tmp_path), fetch=fetch_bad)
    assert not cached.exists()

    def fetch_good(_artifact, dest):
        path = os.path.join(dest, artifact.filename)
        with open(path, "wb") as handle:
            handle.write(good)
        return path

    assert sha256_of(ensure_download(artifact, str(tmp_path), fetch=fetch_good)) == artifact.sha256
    assert os.listdir(tmp_path / "downloads") == [artifact.filename]


@pytest.mark.own_lab
def test_failed_chroot_build_names_the_step_and_starts_nothing(scratch, tmp_path):
    """A chroot that cannot be built stops `up` before any server starts (also the others asked for),
    names the step, keeps its log and leaves no half-built chroot in the cache."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake = fake_bin / "debootstrap"
    fake.write_text("#!/bin/sh\necho 'E: Failed getting release file (a stand-in for an unreachable mirror)'\nexit 1\n")
    fake.chmod(0o755)
    cache = tmp_path / "cache"
    env = dict(os.environ, PATH="%s:%s" % (fake_bin, os.environ["PATH"]), DBFLEET_LAB_CACHE=str(cache))
    proc = subprocess.run([sys.executable, os.path.join(REPO, "lab", "lab.py"), "--lab-dir", scratch,
                           "--port-base", str(free_port_base()), "--inventory", os.path.join(scratch, "hosts.yml"),
                           "up", "mariadb1011", "mysql97"], env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "building the mysql97-sid chroot failed at step 'debootstrap'" in proc.stderr
    assert "Failed getting release file" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not os.path.exists(os.path.join(scratch, "mariadb1011", "mysqld.pid"))
    assert not os.path.exists(os.path.join(scratch, "mysql97", "mysqld.pid"))
    chroots = cache / "chroots"
    # the build log, and the entry's build lock (dbfleet_lab.built_once; kept, it holds nothing once released)
    assert sorted(p.name for p in chroots.iterdir()) == ["mysql97-sid.lock", "mysql97-sid.log"]


def test_chroot_servers_see_their_instance_directory_at_its_own_path(lab):
    """The option file, drop-in directory and datadir of a chroot host are the same paths inside."""
    for host in ("mysql97", "mariadb118"):
        row = lab.hosts[host]
        assert row["server_command"][:2] == ["unshare", "--mount"]
        seen = lab.query(host, "SELECT @@datadir AS datadir, @@socket AS socket")[0]
        assert seen["datadir"].rstrip("/") == os.path.join(os.path.dirname(row["option_file"]), "data")
        assert seen["socket"] == row["socket"] and os.path.exists(row["socket"])
        # nothing is left mounted on the machine: the bind mount lives in the server's own namespace
        with open("/proc/self/mounts", encoding="utf-8") as handle:
            assert not [line for line in handle if "/chroots/" in line.split()[1]]
