"""Fixtures of the AWX job tests (dbfleet_testing.awx_runner): the controller's project, the lab's inventory as the
controller holds it, a directory for the test's jobs, the execution environment image and a job inside it."""
from dbfleet_testing.awx_runner import container_job, image, jobs, lab_inventory, project  # noqa: F401  pylint: disable=unused-import
