"""The execution environment image (`make ee`), checked, and the job templates run inside it as AWX runs them.

The image is built by `make ee` (ee/build.sh; `make test` builds it before the integration tests). These tests
fail, saying so, when it is missing. Each job is the controller's private data dir of awx_runner.py, run by
``ansible-runner run --process-isolation --process-isolation-executable podman --container-image IMAGE``
against the lab's real servers (the lab fixture brings the lab up). Wall times of the same audit inside and
outside the image are printed (``-s``) and recorded in docs/awx.md.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time

import pytest

from dbfleet_testing import awx_runner
from dbfleet_testing.awx_runner import (AHI, AUDIT, CONVERGE, DROP, SCHEMA, assert_ran_inside_without_password,
                                        drop_window_now, has_table, make_table, report_findings, survey_defaults)

ROOT = awx_runner.ROOT
sys.path.insert(0, os.path.join(ROOT, "tests"))
from venv_pins import venv_pins  # noqa: E402  pylint: disable=wrong-import-position
IMAGE = awx_runner.EE_IMAGE
DRIFT_HOST = "mariadb1011"


def _inside(image, script, timeout=300):
    proc = awx_runner.podman("run", "--rm", "--network=none", image, "bash", "-c", script, timeout=timeout)
    assert proc.returncode == 0, "podman run %s failed (exit %d)\n%s\n%s" % (image, proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def _blobs(commit, names):
    """{name: the file's bytes at commit} for each name, read by one git cat-file --batch."""
    proc = subprocess.run(["git", "-C", ROOT, "cat-file", "--batch"], capture_output=True, check=True,
                          input="".join("%s:%s\n" % (commit, name) for name in names).encode())
    out, at, blobs = proc.stdout, 0, {}
    for name in names:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        assert header[1:2] == [b"blob"], (name, header)      # "<object> missing" for a file the commit lacks
        size = int(header[2])
        blobs[name] = out[header_end + 1:header_end + 1 + size]
        at = header_end + 1 + size + 1
    return blobs


# ------------------------------------------------------------------ the image, checked
def test_image_holds_the_tested_ansible_core_runner_and_pymysql(image):
    pins = venv_pins()
    out = json.loads(_inside(image, "python3 -c 'import json, importlib.metadata as m; print(json.dumps("
                                    "{p: m.version(p) for p in (\"ansible-core\", \"ansible-runner\", \"PyMySQL\", \"cryptography\")}))'"))
    assert out["ansible-core"] == pins["ansible-core"], out
    assert out["ansible-runner"] == pins["ansible-runner"], out
    assert out["PyMySQL"] == pins["pymysql"], out
    assert out["cryptography"], out


def test_image_holds_the_collection_of_this_commit(image):
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    label = awx_runner.podman("image", "inspect", "--format", '{{index .Labels "io.dbfleet.innodb.commit"}}', image).stdout.strip()
    assert label == head, "the image holds the collection of %s, the checkout is at %s: rebuild it with `make ee`" % (label, head)
    base = "/usr/share/ansible/collections/ansible_collections/dbfleet/innodb"
    manifest = json.loads(_inside(image, "cat %s/MANIFEST.json" % base))
    files = json.loads(_inside(image, "cat %s/FILES.json" % base))
    with open(os.path.join(ROOT, "galaxy.yml"), encoding="utf-8") as handle:
        version = re.search(r"^version:\s*(\S+)", handle.read(), re.M).group(1)
    assert manifest["collection_info"]["version"] == version
    # Every file of the installed collection is the file of that commit, byte for byte.
    entries = [entry for entry in files["files"] if entry["ftype"] == "file"]
    blobs = _blobs(head, [entry["name"] for entry in entries])
    checked = 0
    for entry in entries:
        assert hashlib.sha256(blobs[entry["name"]]).hexdigest() == entry["chksum_sha256"], entry["name"]
        checked += 1
    assert checked > 100, checked
    names = {e["name"] for e in files["files"]}
    assert "plugins/modules/verify.py" in names and not any(n.startswith(("lab/", "tests/integration/", "ee/")) for n in names)


def test_ansible_doc_of_every_module_works_inside_the_image(image):
    modules = sorted("dbfleet.innodb." + name[:-3] for name in os.listdir(os.path.join(ROOT, "plugins", "modules"))
                     if name.endswith(".py") and not name.startswith("_"))
    docs = json.loads(_inside(image, "ansible-doc --json -t module " + " ".join(modules)))
    assert sorted(docs) == modules
    for name, doc in docs.items():
        assert doc["doc"]["short_description"] and doc["doc"]["options"] is not None, name
        assert doc["examples"] and doc["return"], name


@pytest.fixture(scope="module")
def ee_job(container_job, lab):
    """A job on the local lab inside the image: the lab's directory (option files, drop-ins, sockets) exposed."""
    def launch(ident, template, inventory, group_vars=None, **kwargs):
        return container_job(ident, template, inventory, group_vars, expose=(lab.lab_dir,), **kwargs)
    return launch


def test_audit_inside_the_image_finds_what_it_finds_outside_and_its_reports_come_back(
        ee_job, project, lab_inventory, lab, tmp_path):
    inventory, login, group_vars = lab_inventory
    before = lab.query(DRIFT_HOST, "SELECT @@GLOBAL.innodb_adaptive_hash_index AS v")[0]["v"]
    lab.query(DRIFT_HOST, "SET GLOBAL innodb_adaptive_hash_index = %s" % (0 if before else 1))
    try:
        started = time.monotonic()
        inside = ee_job("audit-ee", AUDIT, inventory, group_vars,
                        survey=survey_defaults(AUDIT, verify_report_dir="/runner/artifacts/audit-ee/reports",
                                               verify_fail_on_drift="true"), credential=login)
        inside_s = time.monotonic() - started
        started = time.monotonic()
        outside = awx_runner.run_job(project, str(tmp_path), "audit-host", AUDIT, inventory, group_vars,
                                     survey=survey_defaults(AUDIT, verify_report_dir=str(tmp_path / "reports"),
                                                            verify_fail_on_drift="true"), credential=login)
        outside_s = time.monotonic() - started
    finally:
        lab.query(DRIFT_HOST, "SET GLOBAL innodb_adaptive_hash_index = %s" % (1 if before else 0))
    print("\naudit job wall time: inside the image %.1f s, outside %.1f s" % (inside_s, outside_s))
    assert inside.status == "failed" and inside.rc != 0, inside          # fails on the drift, after the reports
    hosts = awx_runner.all_hosts(inventory)
    for host in hosts:
        assert inside.count("failures", host) == 0 and inside.count("ok", host) > 0, (host, inside.stats)
    summary = inside.artifact_data["verify_summary"]
    assert summary["report_dir"] == "/runner/artifacts/audit-ee/reports"
    assert summary["hosts"] == len(hosts) and DRIFT_HOST in summary["drift_hosts"] and summary["hosts_error"] == 0, summary
    # The reports written inside the container are in the job's artifacts on the machine.
    reports = os.path.join(inside.pdd, "artifacts", "audit-ee", "reports")
    # The three public names (each a link into the current set under .verify-report/), readable as files.
    assert sorted(n for n in os.listdir(reports) if not n.startswith(".")) == ["verify-junit.xml", "verify.html", "verify.json"]
    assert all(os.path.isfile(os.path.join(reports, n)) for n in ("verify-junit.xml", "verify.html", "verify.json"))
    assert report_findings(reports) == report_findings(str(tmp_path / "reports"))
    outside_summary = dict(outside.artifact_data["verify_summary"], report_dir=summary["report_dir"])
    assert summary == outside_summary
    assert_ran_inside_without_password(inside, login)


def test_audit_bad_survey_answer_inside_the_image_is_named(ee_job, lab_inventory):
    inventory, login, group_vars = lab_inventory
    job = ee_job("audit-ee-bad", AUDIT, inventory, group_vars, credential=login,
                 survey=survey_defaults(AUDIT, verify_report_dir="/runner/artifacts/audit-ee-bad/reports",
                                        verify_fail_on_drift="maybe"))
    assert job.status == "failed" and job.rc != 0, job
    (msg,) = set(job.failed_messages().values())
    assert "verify_fail_on_drift" in msg and "maybe" in msg, msg
    assert not os.path.exists(os.path.join(job.pdd, "artifacts", "audit-ee-bad", "reports"))
    assert_ran_inside_without_password(job, login)


def test_converge_check_inside_the_image_predicts_the_run(ee_job, lab_inventory, lab):
    inventory, login, group_vars = lab_inventory
    lab.query("mysql80", "SET GLOBAL innodb_flush_neighbors = 1")
    lab.query("mariadb1011", "SET GLOBAL innodb_adaptive_hash_index = OFF")
    limit = "mysql80:mariadb1011"
    check = ee_job("converge-ee-check", CONVERGE, inventory, group_vars, credential=login, job_type="check", limit=limit)
    assert check.status == "successful" and check.rc == 0, check
    predicted = check.changed_tasks()
    assert {"mysql80", "mariadb1011"} <= {host for host, _task in predicted}, predicted
    assert lab.query("mysql80", "SELECT @@GLOBAL.innodb_flush_neighbors AS v")[0]["v"] == 1   # nothing changed
    real = ee_job("converge-ee-run", CONVERGE, inventory, group_vars, credential=login, limit=limit)
    assert real.status == "successful" and real.rc == 0, real
    assert real.changed_tasks() == predicted
    assert lab.query("mysql80", "SELECT @@GLOBAL.innodb_flush_neighbors AS v")[0]["v"] == 0
    assert lab.query("mariadb1011", "SELECT @@GLOBAL.innodb_adaptive_hash_index AS v")[0]["v"] == 1
    for job in (check, real):
        assert_ran_inside_without_password(job, login)


def test_drop_tables_inside_the_image(ee_job, lab_inventory, lab):
    inventory, login, group_vars = lab_inventory
    host = "mysql80"
    make_table(lab, host, "ee_old")
    make_table(lab, host, "ee_keep")
    # Only the listed table goes.
    job = ee_job("drop-ee", DROP, inventory, group_vars, credential=login, limit=host,
                 survey=survey_defaults(DROP, drop_tables_text="%s.ee_old" % SCHEMA, drop_tables_window=drop_window_now(),
                                        drop_tables_timezone="UTC", drop_confirm_answer="true"))
    assert job.status == "successful" and job.rc == 0, job
    assert not has_table(lab, host, "ee_old") and has_table(lab, host, "ee_keep")
    assert_ran_inside_without_password(job, login)


def test_ahi_advice_inside_the_image(ee_job, lab_inventory):
    inventory, login, group_vars = lab_inventory
    job = ee_job("ahi-ee", AHI, inventory, group_vars, credential=login,
                 survey=survey_defaults(AHI, ahi_advisor_sample_seconds=1))
    assert job.status == "successful" and job.rc == 0, job
    advised = {e["event_data"]["host"] for e in job.events if e["event"] == "runner_on_ok"
               and e["event_data"]["task"] == "Sample the counters (all hosts at once)"}
    assert advised == set(awx_runner.all_hosts(inventory))
    assert_ran_inside_without_password(job, login)
