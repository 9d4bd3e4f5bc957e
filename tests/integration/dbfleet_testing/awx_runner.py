"""Run a job template the way AWX / Automation Controller runs a job, with ansible-runner.

- Project sync: a fresh clone of the repository's HEAD (served as the project's git source, the URL of
  collections/requirements.yml redirected to it), then
  ``ansible-galaxy collection install -r collections/requirements.yml -p <dir>`` as a project update does.
- Per job, a private data directory: ``project/`` (the synced project), ``inventory/`` (the controller's
  inventory: host variables without any password), ``env/extravars`` (the template's extra_vars, the survey
  answers, the credential type's injected variables and the awx_* job variables), ``env/cmdline``
  (job type check -> --check, diff mode -> --diff, limit), ``env/envvars`` (the synced collections path),
  ``env/settings``; then ``ansible-runner run`` and its job events.
- A sliced job: the inventory's hosts, sorted by name, slice N of M gets hosts[N-1::M] (AWX's slicing).
- Inside the execution environment (``image=``): ``ansible-runner run --process-isolation
  --process-isolation-executable podman --container-image IMAGE``, as AWX runs a job in its EE: the private
  data dir mounted at /runner, the synced collections at /runner/requirements_collections (AWX's path, before
  the image's own), the host network (the lab's servers listen on loopback), the paths the job must see on
  the machine mounted at their own path (AWX's "Paths to expose to isolated jobs"), the container running as
  the calling user (rootful podman; AWX's rootless podman maps its user the same way), podman configured by
  ee/containers.conf through CONTAINERS_CONF.
"""
from __future__ import annotations

import datetime
import fcntl
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
EE_IMAGE = os.environ.get("EE_IMAGE", "localhost/dbfleet-innodb-ee:1.0.0")
EE_CONTAINERS_CONF = os.path.join(ROOT, "ee", "containers.conf")
EE_PYTHON = "/usr/bin/python3"
LOGIN_SECRETS = ("dbfleet_login_user", "dbfleet_login_password")


def job_templates():
    with open(os.path.join(ROOT, "awx", "job_templates.yml"), encoding="utf-8") as handle:
        return {jt["playbook"]: jt for jt in yaml.safe_load(handle)["dbfleet_awx_job_templates"]}


def clean_env(**extra):
    """The environment of the controller's job: none of the repository's ANSIBLE_* settings leak in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTEST_"))}
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def run(cmd, cwd=None, env=None, timeout=300):
    proc = subprocess.run(cmd, cwd=cwd, env=env or clean_env(), capture_output=True, text=True,
                          timeout=timeout, check=False)
    if proc.returncode != 0:
        raise AssertionError("%s failed (exit %d)\n%s\n%s" % (" ".join(cmd), proc.returncode, proc.stdout, proc.stderr))
    return proc


class Project:
    """A synced project: the clone (project/) and the collections project sync installed (sync=False: one synced
    before in base)."""

    def __init__(self, base, sync=True):
        self.base = base
        source = os.path.join(base, "source.git")
        gitconfig = os.path.join(base, "gitconfig")
        self.env = clean_env(GIT_CONFIG_GLOBAL=gitconfig, GIT_CONFIG_NOSYSTEM="1")
        self.path = os.path.join(base, "project")
        self.collections = os.path.join(base, "requirements_collections")
        if sync:
            requirements_path = os.path.join(ROOT, "collections", "requirements.yml")
            with open(requirements_path, encoding="utf-8") as handle:
                (entry,) = yaml.safe_load(handle)["collections"]
            run(["git", "clone", "-q", "--bare", ROOT, source])
            head = run(["git", "-C", ROOT, "rev-parse", "HEAD"]).stdout.strip()
            run(["git", "-C", source, "update-ref", "refs/heads/" + entry["version"], head])
            with open(gitconfig, "w", encoding="utf-8") as handle:
                handle.write('[url "file://%s"]\n\tinsteadOf = %s\n' % (source, entry["name"]))
            run(["git", "clone", "-q", "--branch", entry["version"], entry["name"], self.path], env=self.env)
            cfg = os.path.join(base, "sync.cfg")
            with open(cfg, "w", encoding="utf-8") as handle:
                handle.write("[defaults]\n")
            run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "-r",
                 os.path.join(self.path, "collections", "requirements.yml"), "-p", self.collections],
                cwd=self.path, env=dict(self.env, ANSIBLE_CONFIG=cfg))
        self.head = run(["git", "-C", self.path, "rev-parse", "HEAD"], env=self.env).stdout.strip()


# The project synced once per commit for all of a checkout's test sessions: make test's local and fleet streams run
# their job tests at once, each its own pytest; the first syncs (under a lock), the other reads the same sync.
PROJECT_CACHE = os.path.join(ROOT, ".cache", "awx-project")
PROJECT_KEEP_SECONDS = 6 * 3600      # another commit's sync is removed once no session can still use it


def shared_project(cache=PROJECT_CACHE):
    """The Project of HEAD and collections/requirements.yml, synced into cache/<commit>-<requirements hash> by the
    first session that asks (the others wait for it under cache/.lock) and read from there by the next ones."""
    head = run(["git", "-C", ROOT, "rev-parse", "HEAD"]).stdout.strip()
    with open(os.path.join(ROOT, "collections", "requirements.yml"), "rb") as handle:
        key = "%s-%s" % (head[:16], hashlib.sha256(handle.read()).hexdigest()[:12])
    os.makedirs(cache, exist_ok=True)
    base = os.path.join(cache, key)
    complete = os.path.join(base, ".complete")
    with open(os.path.join(cache, ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(complete):
            shutil.rmtree(base, ignore_errors=True)
            os.makedirs(base)
            Project(base)
            with open(complete, "w", encoding="utf-8"):
                pass
        for other in os.listdir(cache):
            stamp = os.path.join(cache, other, ".complete")
            if other != key and not other.startswith(".") and (
                    not os.path.exists(stamp) or time.time() - os.path.getmtime(stamp) > PROJECT_KEEP_SECONDS):
                shutil.rmtree(os.path.join(cache, other), ignore_errors=True)
    return Project(base, sync=False)


def controller_inventory(inventory_file, group_vars_dir=None):
    """(inventory dict without any password, the login the credential holds) from a lab inventory file."""
    with open(inventory_file, encoding="utf-8") as handle:
        inventory = yaml.safe_load(handle)
    logins = set()

    def strip(node):
        for hostvars in (node.get("hosts") or {}).values():
            if hostvars:
                logins.add(tuple(hostvars.pop(name, None) for name in LOGIN_SECRETS))
        for name in LOGIN_SECRETS:
            (node.get("vars") or {}).pop(name, None)
        for child in (node.get("children") or {}).values():
            if child:
                strip(child)

    strip(inventory["all"])
    assert len(logins) == 1, "the lab hosts do not share one login: %s" % len(logins)
    (login,) = logins
    return inventory, dict(zip(LOGIN_SECRETS, login)), group_vars_dir


def fleet_login(login, fleet):
    """The job's credential for the SSH fleet: the inventory's login, or where the inventory has none (db1-db4 booted:
    a user's inventory names no login), the lab's admin account, as an operator attaches one to the job template."""
    if login.get("dbfleet_login_user"):
        return login
    return {"dbfleet_login_user": fleet.admin_user, "dbfleet_login_password": fleet.admin_password}


def all_hosts(inventory):
    hosts = set()

    def walk(node):
        hosts.update((node.get("hosts") or {}).keys())
        for child in (node.get("children") or {}).values():
            if child:
                walk(child)

    walk(inventory["all"])
    return sorted(hosts)


def _set_host_var(node, name, value, own=None):
    """Give every host below node the variable name = value, unless it has its own (in any group that lists it:
    a host listed again in another group, as the fleet's primaries and replicas, keeps its own value)."""
    if own is None:
        own = set()

        def collect(branch):
            own.update(h for h, hostvars in (branch.get("hosts") or {}).items() if name in (hostvars or {}))
            for child in (branch.get("children") or {}).values():
                if child:
                    collect(child)
        collect(node)
    for host, hostvars in list((node.get("hosts") or {}).items()):
        node["hosts"][host] = dict(hostvars or {})
        if host not in own:
            node["hosts"][host].setdefault(name, value)
    for child in (node.get("children") or {}).values():
        if child:
            _set_host_var(child, name, value, own)


def slice_inventory(inventory, number, count):
    """AWX's job slicing: slice `number` (1-based) of `count` keeps hosts[number-1::count], by name."""
    keep = set(all_hosts(inventory)[number - 1::count])
    sliced = json.loads(json.dumps(inventory))

    def walk(node):
        if node.get("hosts"):
            node["hosts"] = {h: v for h, v in node["hosts"].items() if h in keep}
        for child in (node.get("children") or {}).values():
            if child:
                walk(child)

    walk(sliced["all"])
    return sliced


class Job:
    """One finished ansible-runner job: status, rc, events and per-host stats."""

    def __init__(self, pdd, ident, proc):
        self.pdd, self.ident, self.proc = pdd, ident, proc
        art = os.path.join(pdd, "artifacts", ident)
        with open(os.path.join(art, "status"), encoding="utf-8") as handle:
            self.status = handle.read().strip()
        with open(os.path.join(art, "rc"), encoding="utf-8") as handle:
            self.rc = int(handle.read().strip())
        self.events = []
        for path in glob.glob(os.path.join(art, "job_events", "*.json")):
            with open(path, encoding="utf-8") as handle:
                self.events.append(json.load(handle))
        self.events.sort(key=lambda e: e.get("counter", 0))
        with open(os.path.join(art, "stdout"), encoding="utf-8") as handle:
            self.stdout = handle.read()
        with open(os.path.join(art, "command"), encoding="utf-8") as handle:
            self.command = json.load(handle)["command"]      # what runner ran: ansible-playbook, or podman run
        (stats,) = [e for e in self.events if e["event"] == "playbook_on_stats"] or [{"event_data": {}}]
        self.stats = stats["event_data"]
        self.artifact_data = self.stats.get("artifact_data") or {}

    def count(self, kind, host):
        return (self.stats.get(kind) or {}).get(host, 0)

    def changed_tasks(self):
        """{(host, task name)} of every task result reported changed."""
        return {(e["event_data"]["host"], e["event_data"]["task"]) for e in self.events
                if e["event"] == "runner_on_ok" and e["event_data"].get("res", {}).get("changed")}

    def failed_messages(self):
        return {e["event_data"]["host"]: e["event_data"]["res"].get("msg", "")
                for e in self.events if e["event"] == "runner_on_failed"}

    def __repr__(self):
        return "<job %s: %s rc=%s>\n%s" % (self.ident, self.status, self.rc, self.stdout[-6000:])


def run_job(project, base, ident, template, inventory, group_vars_dir=None, survey=None, credential=None,
            job_type=None, limit=None, timeout=600, image=None, expose=()):
    """Launch `template` (an entry of awx/job_templates.yml) as the controller would; returns a Job.
    With image: inside a container of that execution environment image, the paths in expose mounted."""
    pdd = os.path.join(base, ident)
    shutil.copytree(project.path, os.path.join(pdd, "project"), symlinks=True)
    os.makedirs(os.path.join(pdd, "inventory"))
    os.makedirs(os.path.join(pdd, "env"))
    collections = project.collections
    if image:
        # The job's Python is the image's; the synced collections travel in the private data dir, as in AWX.
        # (localhost and local-connection hosts); SSH hosts keep the interpreter they have on their side.
        inventory = json.loads(json.dumps(inventory))
        top = inventory["all"].setdefault("vars", {})
        if top.get("ansible_connection") == "ssh" and top.get("ansible_python_interpreter"):
            _set_host_var(inventory["all"], "ansible_python_interpreter", top["ansible_python_interpreter"])
        top["ansible_python_interpreter"] = EE_PYTHON
        shutil.copytree(project.collections, os.path.join(pdd, "requirements_collections"), symlinks=True)
        collections = "/runner/requirements_collections:/usr/share/ansible/collections"
    with open(os.path.join(pdd, "inventory", "hosts.yml"), "w", encoding="utf-8") as handle:
        yaml.safe_dump(inventory, handle)
    if group_vars_dir:
        shutil.copytree(group_vars_dir, os.path.join(pdd, "inventory", "group_vars"))
    extravars = dict(template.get("extra_vars") or {})
    extravars.update(survey or {})
    extravars.update(credential or {})
    extravars.update(awx_job_id=ident, awx_job_template_name=template["name"], awx_project_revision=project.head,
                     awx_job_launch_type="manual", awx_user_name="admin")
    with open(os.path.join(pdd, "env", "extravars"), "w", encoding="utf-8") as handle:
        json.dump(extravars, handle)
    cmdline = []
    if (job_type or template["job_type"]) == "check":
        cmdline.append("--check")
    if template.get("diff_mode"):
        cmdline.append("--diff")
    if limit:
        cmdline += ["--limit", limit]
    with open(os.path.join(pdd, "env", "cmdline"), "w", encoding="utf-8") as handle:
        handle.write(" ".join(cmdline))
    with open(os.path.join(pdd, "env", "envvars"), "w", encoding="utf-8") as handle:
        json.dump({"ANSIBLE_COLLECTIONS_PATH": collections, "ANSIBLE_FORCE_COLOR": "0",
                   "ANSIBLE_HOST_KEY_CHECKING": "False"}, handle)
    settings = {"job_timeout": timeout, "idle_timeout": timeout, "pexpect_timeout": 5, "suppress_ansible_output": True}
    argv = [os.path.join(BIN, "ansible-runner"), "run", pdd, "-p", template["playbook"], "--ident", ident]
    env = clean_env()
    if image:
        settings["container_volume_mounts"] = ["%s:%s" % (path, path) for path in expose]
        settings["container_options"] = ["--network=host", "--user=%d" % os.getuid()]
        argv += ["--process-isolation", "--process-isolation-executable", "podman", "--container-image", image]
        env["CONTAINERS_CONF"] = EE_CONTAINERS_CONF
    with open(os.path.join(pdd, "env", "settings"), "w", encoding="utf-8") as handle:
        json.dump(settings, handle)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout + 60, check=False)
    return Job(pdd, ident, proc)


def podman(*args, timeout=300):
    """podman with the repository's containers.conf; the CompletedProcess (text), not checked."""
    return subprocess.run(["podman"] + list(args), env=clean_env(CONTAINERS_CONF=EE_CONTAINERS_CONF),
                          capture_output=True, text=True, timeout=timeout, check=False)


# make test builds the image beside the tests (tests/run-all.sh): it names the file where ee/build.sh's result
# ("ok SECONDS" or "FAILED SECONDS") will be, and the tests that need the image wait for it (they run last).
EE_BUILD_RESULT = "DBFLEET_EE_BUILD_RESULT"


def wait_for_image_build(timeout=3600):
    """When the image is being built beside this run (DBFLEET_EE_BUILD_RESULT names the file of its result), wait for
    the build; fail naming its result when it failed."""
    path = os.environ.get(EE_BUILD_RESULT)
    if not path:
        return
    deadline = time.monotonic() + timeout
    while not (os.path.exists(path) and os.path.getsize(path)):
        if time.monotonic() > deadline:
            raise AssertionError("the execution environment image was not built after %d s (%s stays empty)"
                                 % (timeout, path))
        time.sleep(2)
    with open(path, encoding="utf-8") as handle:
        result = handle.read().split()
    if result[0] != "ok":
        raise AssertionError("the execution environment image's build failed (ee/build.sh; its output is in the ee "
                             "part of make test's output): %s" % " ".join(result))


def ee_image_or_fail(image=EE_IMAGE):
    """The image's id; fails saying how to build it when podman or the image is missing."""
    wait_for_image_build()
    if shutil.which("podman") is None:
        raise AssertionError("podman is missing: `make ee` installs it and builds the execution environment image")
    proc = podman("image", "inspect", "--format", "{{.Id}}", image)
    if proc.returncode != 0:
        raise AssertionError("no execution environment image %s: build it with `make ee` (%s)" % (image, proc.stderr.strip()))
    return proc.stdout.strip()


# ---------------------------------------------------------------- the job templates as the tests run them
TEMPLATES = job_templates()
AUDIT = TEMPLATES["awx/playbooks/verify.yml"]
CONVERGE = TEMPLATES["awx/playbooks/site.yml"]
DROP = TEMPLATES["awx/playbooks/drop_tables.yml"]
RESTART = TEMPLATES["awx/playbooks/rolling_restart.yml"]
AHI = TEMPLATES["awx/playbooks/ahi_advisor.yml"]
SETTINGS = TEMPLATES["awx/playbooks/settings.yml"]
SCHEMA = "dbfleet_it_awx"


def survey_defaults(template, **answers):
    """The survey answers AWX sends: each question's default, then the given answers (AWX types)."""
    out = {q["variable"]: q["default"] for q in (template["survey_spec"] or {}).get("spec", [])
           if q.get("default") not in (None, "")}
    out.update(answers)
    return out


def report_findings(report_dir):
    with open(os.path.join(report_dir, "verify.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    return {host: {name: (v.get("status"), v.get("running")) for name, v in (entry.get("variables") or {}).items()}
            | {"__status": entry.get("status")} for host, entry in report["hosts"].items()}


def drop_window_now():
    """A drop window (HH:MM-HH:MM, UTC) from an hour ago to an hour from now, as a survey answer."""
    now = datetime.datetime.now(datetime.timezone.utc)
    start, end = now - datetime.timedelta(hours=1), now + datetime.timedelta(hours=1)
    return "%s-%s" % (start.strftime("%H:%M"), end.strftime("%H:%M"))


def make_table(lab, host, table):
    lab.query(host, "CREATE DATABASE IF NOT EXISTS %s" % SCHEMA)
    lab.query(host, "CREATE TABLE IF NOT EXISTS %s.%s (id INT PRIMARY KEY) ENGINE=InnoDB" % (SCHEMA, table))


def has_table(lab, host, table):
    return bool(lab.query(host, "SELECT 1 FROM information_schema.tables WHERE table_schema=%s AND table_name=%s",
                          (SCHEMA, table)))


def assert_ran_inside_without_password(job, login):
    """The job ran in a container of the image, and the password is in none of its output or events."""
    assert job.command[:2] == ["podman", "run"] and EE_IMAGE in job.command, job.command
    password = login["dbfleet_login_password"]
    assert password not in job.stdout
    assert not any(password in json.dumps(event) for event in job.events), "the password is in a job event"


# ---------------------------------------------------------------- fixtures (imported by the conftest.py of local/awx and fleet/awx)
@pytest.fixture(scope="session")
def project():
    """The controller's project: a fresh clone of HEAD and the collections its sync installs, synced once per commit
    for every session's jobs (shared_project(); each job copies it into its private data directory, none writes into
    it)."""
    return shared_project()


@pytest.fixture(scope="module")
def lab_inventory(lab):
    """(inventory, login credential, group_vars) of the local lab as the controller holds them: no password inside."""
    return controller_inventory(os.path.join(ROOT, "inventories", "lab", "hosts.yml"),
                                os.path.join(ROOT, "inventories", "lab", "group_vars"))


@pytest.fixture()
def jobs(tmp_path):
    """The directory of the test's jobs."""
    return str(tmp_path)


@pytest.fixture(scope="module")
def image():
    """The execution environment image (EE_IMAGE), or fail saying how to build it."""
    ee_image_or_fail(EE_IMAGE)
    return EE_IMAGE


@pytest.fixture(scope="module")
def container_job(image, project, tmp_path_factory):
    """run_job inside the image, the given paths of the machine exposed to the job."""
    base = str(tmp_path_factory.mktemp("ee-jobs"))

    def launch(ident, template, inventory, group_vars=None, expose=(), **kwargs):
        return run_job(project, base, ident, template, inventory, group_vars, image=image, expose=tuple(expose),
                       **kwargs)
    return launch
