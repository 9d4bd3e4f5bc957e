"""The AWX job templates on the SSH fleet: the rolling restart job run the way AWX runs it, outside and inside the
execution environment image (the local lab's jobs are local/awx/)."""
import os

from dbfleet_testing import awx_runner
from dbfleet_testing.awx_runner import RESTART, survey_defaults

ROOT = awx_runner.ROOT


# ------------------------------------------------------------------ rolling restart, on the SSH fleet
def test_rolling_restart_job_on_the_ssh_fleet(project, fleet, jobs):
    inventory, login, _gv = awx_runner.controller_inventory(os.path.join(ROOT, "inventories", "fleet", "hosts.yml"))
    login = awx_runner.fleet_login(login, fleet)
    hosts = awx_runner.all_hosts(inventory)
    assert RESTART["job_slice_count"] == 1
    job = awx_runner.run_job(project, jobs, "restart", RESTART, inventory,
                             survey=survey_defaults(RESTART), credential=login)
    assert job.status == "successful" and job.rc == 0, job
    for host in hosts:
        assert job.count("failures", host) == 0 and job.count("ok", host) > 0, (host, job.stats)
    # Nothing waits for a restart: nothing restarts.
    assert job.changed_tasks() == set(), job.changed_tasks()
    # Every fleet host was reached over SSH and read from its server.
    assert inventory["all"]["vars"]["ansible_connection"] == "ssh"
    read = {e["event_data"]["host"] for e in job.events if e["event"] == "runner_on_ok"
            and e["event_data"]["task"] == "Read which settings wait for a restart"}
    assert read == set(hosts), read
