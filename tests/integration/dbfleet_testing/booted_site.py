"""site.yml over the SSH fleet's booted hosts, pkg1-pkg4 (the distributions' packages,
tests/integration/fleet/hosts/test_booted_hosts.py) and pkg5 (the vendor-style unit, test_vendor_unit.py beside it),
in one sequence of runs that each test reads for its hosts (fixture ``site_runs``, session-scoped, offered by
fleet/hosts/conftest.py); and what server_facts finds on each of them, one ad-hoc run over all five (fixture
``booted_facts``)."""
import json
import os
import subprocess

import pytest

from dbfleet_testing.lab import BOOTED_HOSTS, REPO, inside
from dbfleet_testing.runs import env, playbook, recap

# MariaDB 10.5+ and MySQL 8.4+ default innodb_adaptive_hash_index to OFF, MySQL 8.0 to ON: it is turned OFF at runtime
# first on every host, so ON is a real change everywhere.
SITE_VARS = {"adaptive_hash_enabled": True}
# The role's drop-in on each host: in the directory its package's option files include last.
SITE_DROPINS = {"pkg1": "/etc/mysql/mariadb.conf.d/60-dbfleet-adaptive_hash.cnf",
                "pkg2": "/etc/mysql/mariadb.conf.d/60-dbfleet-adaptive_hash.cnf",
                "pkg3": "/etc/mysql/mariadb.conf.d/60-dbfleet-adaptive_hash.cnf",
                "pkg4": "/etc/mysql/mysql.conf.d/60-dbfleet-adaptive_hash.cnf",
                "pkg5": "/etc/mysql/mysql.conf.d/60-dbfleet-adaptive_hash.cnf"}


class SiteRuns:
    """site.yml on every booted host from the package's state (the role's file removed, adaptive hash OFF at runtime):
    check mode, applied, applied again, check mode again, with what each run left read in between. ``changed``:
    run -> host -> the recap's changed count; ``output``: run -> its output's end; ``ahi``: moment (before, checked,
    applied) -> host -> @@innodb_adaptive_hash_index; ``dropin_after_check``: host -> whether the role's file was
    there after the check-mode run; ``dropin_text``, ``print_defaults``: host -> the role's file and what
    my_print_defaults mysqld printed after the applied run."""

    RUNS = (("checked", True), ("applied", False), ("again", False), ("checked_again", True))

    def __init__(self, lab):
        self.lab = lab
        self.changed, self.output, self.ahi = {}, {}, {}
        for host in BOOTED_HOSTS:      # the package's state (a run before this one may have left the role's file)
            inside(lab, host, "rm", "-f", SITE_DROPINS[host])
            lab.query(host, "SET GLOBAL innodb_adaptive_hash_index = OFF")
        self.ahi["before"] = self.read_ahi()
        for name, check in self.RUNS:
            code, out = playbook(lab.booted_inventory, "site.yml", SITE_VARS, check=check)
            assert code == 0, out[-3000:]
            self.changed[name] = dict((h, c["changed"]) for h, c in recap(out).items())
            self.output[name] = out[-3000:]
            if name == "checked":
                self.ahi["checked"] = self.read_ahi()
                self.dropin_after_check = dict(
                    (h, os.path.exists(os.path.join(lab.lab_dir, "fleet", h, "root", SITE_DROPINS[h].lstrip("/"))))
                    for h in BOOTED_HOSTS)
            elif name == "applied":
                self.ahi["applied"] = self.read_ahi()
                self.dropin_text = dict((h, inside(lab, h, "cat", SITE_DROPINS[h])) for h in BOOTED_HOSTS)
                self.print_defaults = dict((h, inside(lab, h, "my_print_defaults", "mysqld")) for h in BOOTED_HOSTS)

    def read_ahi(self):
        return dict((h, self.lab.query(h, "SELECT @@innodb_adaptive_hash_index AS v")[0]["v"]) for h in BOOTED_HOSTS)


@pytest.fixture(scope="session")
def site_runs(booted_machines):
    """SiteRuns on the booted hosts (conftest.booted_machines), once for the modules that read it."""
    return SiteRuns(booted_machines)


def module_results(inventory, hosts, module, tmp_path, args=""):
    """One ad-hoc module run over hosts through the inventory (SSH as deploy, become): host -> its result dict
    (ansible --tree: a file per host)."""
    tree = tmp_path / ("tree-" + module)
    proc = subprocess.run([os.path.join(REPO, ".venv", "bin", "ansible"), "-i", inventory, ":".join(hosts), "-m",
                           module, "-a", args, "-t", str(tree)], env=env(), capture_output=True, text=True,
                          timeout=300, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = {}
    for host in hosts:
        with open(tree / host, encoding="utf-8") as handle:
            results[host] = json.load(handle)
    return results


@pytest.fixture(scope="session")
def booted_facts(booted_machines, tmp_path_factory):
    """host -> what dbfleet.innodb.server_facts finds on each booted host, one run over pkg1-pkg5 read by
    test_booted_hosts.py and test_vendor_unit.py."""
    results = module_results(booted_machines.booted_inventory, BOOTED_HOSTS, "dbfleet.innodb.server_facts",
                             tmp_path_factory.mktemp("booted_facts"))
    return dict((host, result["server_facts"]) for host, result in results.items())
