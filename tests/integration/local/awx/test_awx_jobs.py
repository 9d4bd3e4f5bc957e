"""Every job template of awx/job_templates.yml, run the way AWX / Automation Controller runs a job.

ansible-runner runs each job in a private data directory built as the controller builds it (see
awx_runner.py): the project from a fresh clone of HEAD plus the collections its project sync installs,
an inventory without passwords, the survey answers and the database login credential's injected variables
as extra vars. Results are read from runner's job events. The lab (make lab-up) and, for the tests marked
fleet, the SSH fleet (make fleet-up) must be up: the lab/fleet fixtures bring them up when they are not.
"""
from __future__ import annotations

import concurrent.futures
import json
import os

import pytest

from dbfleet_testing import awx_runner
from dbfleet_testing.awx_runner import (AHI, AUDIT, CONVERGE, DROP, SCHEMA, SETTINGS, drop_window_now, has_table,
                                        make_table, report_findings, survey_defaults)

ROOT = awx_runner.ROOT
DRIFT_HOST = "mysql80"


def test_project_sync_installs_the_collection_from_the_projects_git_source(project):
    manifest_path = os.path.join(project.collections, "ansible_collections", "dbfleet", "innodb", "MANIFEST.json")
    with open(manifest_path, encoding="utf-8") as handle:
        manifest = json.load(handle)
    assert manifest["collection_info"]["name"] == "innodb"
    assert not manifest["collection_info"]["dependencies"]
    # Only the collection: project sync needs nothing else (Galaxy is never asked).
    assert sorted(os.listdir(os.path.join(project.collections, "ansible_collections"))) == ["dbfleet"]
    for shipped in ("plugins/modules/verify.py", "roles/restart/meta/argument_specs.yml", "playbooks/verify.yml"):
        assert os.path.isfile(os.path.join(project.collections, "ansible_collections", "dbfleet", "innodb", shipped))


def test_no_password_in_the_controllers_inventory(lab_inventory):
    inventory, login, _gv = lab_inventory
    assert login["dbfleet_login_password"] and login["dbfleet_login_password"] not in json.dumps(inventory)


def _lab_hosts(inventory):
    return awx_runner.all_hosts(inventory)


# ------------------------------------------------------------------ audit
def _audit(project, jobs, ident, inventory, login, group_vars, report_dir, **answers):
    job = awx_runner.run_job(project, jobs, ident, AUDIT, inventory, group_vars,
                             survey=survey_defaults(AUDIT, verify_report_dir=report_dir, **answers), credential=login)
    return job


@pytest.fixture(scope="module")
def audits(project, lab_inventory, lab, tmp_path_factory):
    """With a drift on DRIFT_HOST: one unsliced audit that fails on drift, and the two slices of the
    same audit (job_slice_count 2) that do not. Returns (jobs dir, whole job, [slice jobs])."""
    inventory, login, group_vars = lab_inventory
    jobs = str(tmp_path_factory.mktemp("audits"))
    before = lab.query(DRIFT_HOST, "SELECT @@GLOBAL.innodb_adaptive_hash_index AS v")[0]["v"]
    lab.query(DRIFT_HOST, "SET GLOBAL innodb_adaptive_hash_index = %s" % (0 if before else 1))
    try:
        whole = _audit(project, jobs, "audit", inventory, login, group_vars, os.path.join(jobs, "whole"),
                       verify_fail_on_drift="true")
        # The controller runs the slices of a sliced job at the same time.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            slices = list(pool.map(lambda number: _audit(
                project, jobs, "audit-slice%d" % number, awx_runner.slice_inventory(inventory, number, 2),
                login, group_vars, os.path.join(jobs, "slice%d" % number)), (1, 2)))
    finally:
        lab.query(DRIFT_HOST, "SET GLOBAL innodb_adaptive_hash_index = %s" % (1 if before else 0))
    return jobs, whole, slices


def test_audit_job_publishes_its_summary_writes_reports_where_asked_and_fails_on_drift(audits, lab_inventory):
    inventory, login, _gv = lab_inventory
    jobs, job, _slices = audits
    report_dir = os.path.join(jobs, "whole")
    assert job.status == "failed" and job.rc != 0, job
    assert job.count("failures", "localhost") == 1        # only the drift check fails
    hosts = _lab_hosts(inventory)
    for host in hosts:
        assert job.count("failures", host) == 0 and job.count("changed", host) == 0, (host, job.stats)
        assert job.count("ok", host) > 0, (host, job.stats)
    summary = job.artifact_data["verify_summary"]
    assert summary["hosts"] == len(hosts) and summary["report_dir"] == report_dir
    assert summary["hosts_ok"] + summary["hosts_drift"] + summary["hosts_error"] == len(hosts)
    assert summary["hosts_error"] == 0 and DRIFT_HOST in summary["drift_hosts"], summary
    findings = report_findings(report_dir)                      # written before the job failed
    assert set(findings) == set(hosts) and findings[DRIFT_HOST]["__status"] == "drift"
    # The password the credential injected never shows in the job's output or events.
    assert login["dbfleet_login_password"] not in job.stdout
    assert not any(login["dbfleet_login_password"] in json.dumps(e.get("event_data", {}).get("res", {}))
                   for e in job.events)


def test_audit_sliced_in_two_finds_what_one_unsliced_run_finds(audits, lab_inventory):
    inventory, _login, _gv = lab_inventory
    jobs, whole, slices = audits
    assert AUDIT["job_slice_count"] == 2
    combined, summaries = {}, []
    for number, job in enumerate(slices, 1):
        assert job.status == "successful" and job.rc == 0, job
        part = awx_runner.slice_inventory(inventory, number, 2)
        assert set(job.stats.get("ok", {})) - {"localhost"} == set(awx_runner.all_hosts(part))
        findings = report_findings(os.path.join(jobs, "slice%d" % number))
        assert not set(findings) & set(combined), "a host was audited by both slices"
        combined.update(findings)
        summaries.append(job.artifact_data["verify_summary"])
    assert combined == report_findings(os.path.join(jobs, "whole"))
    for key in ("hosts", "hosts_ok", "hosts_drift", "hosts_error"):
        assert sum(s[key] for s in summaries) == whole.artifact_data["verify_summary"][key], key


def test_audit_bad_survey_answer_is_named_and_nothing_is_written(project, lab_inventory, jobs):
    inventory, login, group_vars = lab_inventory
    report_dir = os.path.join(jobs, "bad")
    job = _audit(project, jobs, "audit-bad", inventory, login, group_vars, report_dir, verify_fail_on_drift="maybe")
    assert job.status == "failed" and job.rc != 0, job
    (msg,) = set(job.failed_messages().values())
    assert "verify_fail_on_drift" in msg
    assert not os.path.exists(report_dir)
    assert all(job.count("changed", h) == 0 for h in _lab_hosts(inventory) + ["localhost"])


def test_job_without_the_database_credential_fails_before_any_host(project, lab_inventory, jobs):
    inventory, _login, group_vars = lab_inventory
    job = awx_runner.run_job(project, jobs, "converge-nocred", CONVERGE, inventory, group_vars, credential=None)
    assert job.status == "failed" and job.rc != 0, job
    assert list(job.failed_messages()) == ["localhost"], job
    assert "dbfleet.innodb database login" in job.failed_messages()["localhost"]
    assert not set(job.stats.get("ok", {})) & set(_lab_hosts(inventory)), job.stats   # no host was touched


def test_job_against_an_inventory_without_hosts_fails_naming_it(project, lab_inventory, jobs):
    _inventory, login, _gv = lab_inventory
    job = awx_runner.run_job(project, jobs, "converge-empty", CONVERGE, {"all": {"hosts": {}}}, credential=login)
    assert job.status == "failed" and job.rc != 0, job
    assert "inventory has no hosts" in job.failed_messages()["localhost"]


# ------------------------------------------------------------------ converge
def test_converge_check_predicts_what_the_run_changes(project, lab_inventory, jobs, lab):
    inventory, login, group_vars = lab_inventory
    # Drift on two servers: flushing neighbours on (the storage class is ssd) and AHI off (wanted on).
    lab.query("mysql80", "SET GLOBAL innodb_flush_neighbors = 1")
    lab.query("mariadb1011", "SET GLOBAL innodb_adaptive_hash_index = OFF")
    limit = "mysql80:mariadb1011"      # a limit, as launched from the controller, keeps the job short
    check = awx_runner.run_job(project, jobs, "converge-check", CONVERGE, inventory, group_vars,
                               credential=login, job_type="check", limit=limit)
    assert check.status == "successful" and check.rc == 0, check
    predicted = check.changed_tasks()
    assert {"mysql80", "mariadb1011"} <= {host for host, _task in predicted}, predicted
    assert lab.query("mysql80", "SELECT @@GLOBAL.innodb_flush_neighbors AS v")[0]["v"] == 1   # nothing changed
    real = awx_runner.run_job(project, jobs, "converge-run", CONVERGE, inventory, group_vars, credential=login,
                              limit=limit)
    assert real.status == "successful" and real.rc == 0, real
    assert real.changed_tasks() == predicted
    for host in ("mysql80", "mariadb1011"):
        assert real.count("failures", host) == 0
        assert real.count("changed", host) == check.count("changed", host), host
    assert lab.query("mysql80", "SELECT @@GLOBAL.innodb_flush_neighbors AS v")[0]["v"] == 0
    assert lab.query("mariadb1011", "SELECT @@GLOBAL.innodb_adaptive_hash_index AS v")[0]["v"] == 1


# ------------------------------------------------------------------ server settings
def test_settings_job_applies_the_surveys_map_as_its_check_predicted(project, lab_inventory, jobs, lab):
    inventory, login, group_vars = lab_inventory
    limit = "mysql80:mariadb1011"
    text = "innodb_io_capacity: 900\ninnodb_lru_scan_depth: 3000\ninnodb_lock_wait_timeout: 77\n"
    hosts = ("mysql80", "mariadb1011")
    dropins = [os.path.join(lab.hosts[h]["dropin_dir"], "60-dbfleet-settings.cnf") for h in hosts]
    assert all(lab.query(h, "SELECT @@GLOBAL.innodb_lock_wait_timeout AS v")[0]["v"] != 77 for h in hosts)
    names = ("innodb_io_capacity", "innodb_lru_scan_depth", "innodb_lock_wait_timeout")     # all dynamic
    before = dict((h, lab.query(h, "SELECT " + ", ".join("@@GLOBAL.%s AS %s" % (n, n) for n in names))[0])
                  for h in hosts)
    try:
        survey = survey_defaults(SETTINGS, dbfleet_settings_text=text)
        check = awx_runner.run_job(project, jobs, "settings-check", SETTINGS, inventory, group_vars, survey=survey,
                                   credential=login, job_type="check", limit=limit)
        assert check.status == "successful" and check.rc == 0, check
        assert not any(os.path.exists(p) for p in dropins)
        real = awx_runner.run_job(project, jobs, "settings-run", SETTINGS, inventory, group_vars, survey=survey,
                                  credential=login, limit=limit)
        assert real.status == "successful" and real.rc == 0, real
        assert real.changed_tasks() == check.changed_tasks() and real.changed_tasks(), real.changed_tasks()
        for host, path in zip(hosts, dropins):
            assert lab.query(host, "SELECT @@GLOBAL.innodb_lock_wait_timeout AS v")[0]["v"] == 77, host
            assert os.path.exists(path), path
        # A misspelt name in the survey's map: test_settings_survey_cannot_turn_security_off's job names it.
    finally:
        # The servers as they were: without the drop-in, the three values set back at runtime (no restart: what the
        # job changed is dynamic, and the restart is not what this test is about).
        for host, path in zip(hosts, dropins):
            if os.path.exists(path):
                os.remove(path)
            for name in names:
                lab.query(host, "SET GLOBAL %s = %%s" % name, (before[host][name],))
        assert all(lab.query(h, "SELECT " + ", ".join("@@GLOBAL.%s AS %s" % (n, n) for n in names))[0] == before[h]
                   for h in hosts)


def test_settings_survey_cannot_turn_security_off(project, lab_inventory, jobs, lab):
    """The survey's map with skip_grant_tables, init_file, plugin_dir, secure_file_priv, a secret (issue 43) and a
    misspelt name (innodb_lock_wait_timeot): the job fails on every host before any change, naming each and why (the
    misspelt name with the server's closest one), and the secret is in no job event."""
    inventory, login, group_vars = lab_inventory
    secret = "sst:Survey-Not-Shown-5151"
    text = ("skip_grant_tables: 'ON'\ninit_file: /tmp/x.sql\nplugin_dir: /tmp\nsecure_file_priv: ''\n"
            "wsrep_sst_auth: '%s'\ninnodb_lock_wait_timeout: 66\ninnodb_lock_wait_timeot: 5\n" % secret)
    hosts = ("mysql80", "mariadb1011")
    dropins = [os.path.join(lab.hosts[h]["dropin_dir"], "60-dbfleet-settings.cnf") for h in hosts]
    job = awx_runner.run_job(project, jobs, "settings-security", SETTINGS, inventory, group_vars, credential=login,
                             survey=survey_defaults(SETTINGS, dbfleet_settings_text=text, settings_restart="allowed"),
                             limit=":".join(hosts))
    assert job.status == "failed", job
    messages = job.failed_messages()
    assert set(messages) == set(hosts), messages
    for host, message in messages.items():
        flat = " ".join(message.split())
        for name in ("skip_grant_tables", "init_file", "plugin_dir", "secure_file_priv"):
            assert name + " (" in flat, (host, name, flat)
        assert "turns security off, refused before anything changed" in flat and "holds a secret" in flat, flat
        assert "settings_values.innodb_lock_wait_timeot: " in flat, flat
        assert "(closest: innodb_lock_wait_timeout" in flat, flat
    assert not any(os.path.exists(p) for p in dropins)
    assert all(lab.query(h, "SELECT @@GLOBAL.innodb_lock_wait_timeout AS v")[0]["v"] != 66 for h in hosts)
    assert secret not in job.stdout and not any(secret in json.dumps(e) for e in job.events)


# ------------------------------------------------------------------ drop tables
def test_drop_tables_job_drops_inside_the_window(project, lab_inventory, jobs, lab):
    inventory, login, group_vars = lab_inventory
    host = "mysql80"
    make_table(lab, host, "old_a")
    make_table(lab, host, "old_b")
    survey = survey_defaults(DROP, drop_tables_text="%s.old_a\n  %s.old_b\n" % (SCHEMA, SCHEMA),
                             drop_tables_window=drop_window_now(), drop_tables_timezone="UTC", drop_confirm_answer="true")
    job = awx_runner.run_job(project, jobs, "drop", DROP, inventory, group_vars, survey=survey, credential=login,
                             limit=host)
    assert job.status == "successful" and job.rc == 0, job
    assert job.count("changed", host) >= 1 and job.count("failures", host) == 0, job.stats
    assert set(job.stats.get("ok", {})) == {host}
    assert not has_table(lab, host, "old_a") and not has_table(lab, host, "old_b")


@pytest.mark.parametrize("answers,named", [
    ({"drop_tables_window": "25:00-26:00"}, "25:00"),
    ({"drop_tables_timezone": "Mars/Olympus"}, "Mars/Olympus"),
    ({"drop_confirm_answer": "false"}, "drop_tables_confirm"),
], ids=["window", "timezone", "confirmation"])
def test_drop_tables_bad_answer_is_named_and_nothing_dropped(project, lab_inventory, jobs, lab, answers, named):
    inventory, login, group_vars = lab_inventory
    host = "mysql80"
    make_table(lab, host, "keep_me")
    survey = survey_defaults(DROP, drop_tables_text="%s.keep_me" % SCHEMA, drop_tables_window=drop_window_now(),
                             drop_tables_timezone="UTC", drop_confirm_answer="true")
    survey.update(answers)
    job = awx_runner.run_job(project, jobs, "drop-bad", DROP, inventory, group_vars, survey=survey,
                             credential=login, limit=host)
    assert job.status == "failed" and job.rc != 0, job
    assert any(named in msg for msg in job.failed_messages().values()), job.failed_messages()
    assert job.count("changed", host) == 0
    assert has_table(lab, host, "keep_me")


# ------------------------------------------------------------------ AHI advice
def test_ahi_advice_job(project, lab_inventory, jobs):
    inventory, login, group_vars = lab_inventory
    job = awx_runner.run_job(project, jobs, "ahi", AHI, inventory, group_vars,
                             survey=survey_defaults(AHI, ahi_advisor_sample_seconds=1), credential=login)
    assert job.status == "successful" and job.rc == 0, job
    advised = {e["event_data"]["host"]: e["event_data"]["res"]["advice"]["recommendation"] for e in job.events
               if e["event"] == "runner_on_ok" and e["event_data"]["task"] == "Sample the counters (all hosts at once)"}
    assert set(advised) == set(_lab_hosts(inventory)), advised
    assert all(job.count("failures", h) == 0 for h in advised)


def test_ahi_advice_out_of_range_answer_is_named(project, lab_inventory, jobs):
    inventory, login, group_vars = lab_inventory
    job = awx_runner.run_job(project, jobs, "ahi-bad", AHI, inventory, group_vars,
                             survey=survey_defaults(AHI, ahi_advisor_sample_seconds=7200), credential=login)
    assert job.status == "failed" and job.rc != 0, job
    # Refused by the playbook's input check on the controller (lookup dbfleet.innodb.playbook_inputs in the play's
    # hosts keyword, the module's range), before any task runs on any host.
    assert job.failed_messages() == {}, job.failed_messages()
    assert "ahi_advisor_sample_seconds=7200 is out of range 1-3600" in " ".join(job.stdout.split()), job.stdout
    assert all(job.count("ok", h) == 0 and job.count("changed", h) == 0 for h in _lab_hosts(inventory)), job
