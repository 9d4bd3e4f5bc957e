"""What the integration tests share (tests/integration/{local,fleet}/<subject>/test_*.py); no test module imports
another, they import from here and take their fixtures from the conftest.py files.

- lab:           lab.py for a lab, LabHandle (hosts, connections, booted machines), the used lab, DEFAULT_HOSTS;
- runs:          ansible / ansible-playbook as a user runs them (one environment), PLAY RECAP and output readers;
- servers:       the local lab's servers by inventory (login, SQL, a module run as Ansible runs it, verify);
- clusters:      the local lab's Galera cluster and Group Replication group (fixtures in local/clusters/conftest.py);
- clusterfaults: the SSH fleet's clusters under faults (writers, monitors, nothing-lost checks);
- replication:   the SSH fleet's replication pairs db1 -> db2, db3 -> db4 (writes, nothing-lost checks);
- awx_runner:    a job template run the way AWX runs it (ansible-runner, the controller's private data dir);
- report_fleet:  a generated fleet of verify results for the report at scale.
"""
