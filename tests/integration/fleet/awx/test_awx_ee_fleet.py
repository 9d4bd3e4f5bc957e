"""The AWX job templates on the SSH fleet: the rolling restart job run the way AWX runs it, inside the execution
environment image (make ee) (the local lab's jobs are local/awx/)."""
import os

from dbfleet_testing import awx_runner
from dbfleet_testing.awx_runner import RESTART, assert_ran_inside_without_password, survey_defaults

ROOT = awx_runner.ROOT


def test_rolling_restart_inside_the_image_on_the_ssh_fleet(container_job, fleet):
    inventory, login, _gv = awx_runner.controller_inventory(os.path.join(ROOT, "inventories", "fleet", "hosts.yml"))
    login = awx_runner.fleet_login(login, fleet)
    hosts = awx_runner.all_hosts(inventory)
    # The job reaches the fleet hosts over SSH from the container, with the fleet's key exposed to it.
    key = inventory["all"]["vars"]["ansible_ssh_private_key_file"]
    assert os.path.isfile(key), key
    job = container_job("restart-ee", RESTART, inventory, expose=(os.path.dirname(key),),
                        survey=survey_defaults(RESTART), credential=login)
    assert job.status == "successful" and job.rc == 0, job
    read = {e["event_data"]["host"] for e in job.events if e["event"] == "runner_on_ok"
            and e["event_data"]["task"] == "Read which settings wait for a restart"}
    assert read == set(hosts), read
    assert job.changed_tasks() == set()
    assert_ran_inside_without_password(job, login)
