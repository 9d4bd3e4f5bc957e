# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
# The work is done by the action plugin plugins/action/verify_fleet.py, on the controller; this file documents it.

from __future__ import annotations

DOCUMENTATION = r'''
---
module: verify_fleet
short_description: Audit the running settings of many servers at once, from the controller, over SQL
version_added: 1.0.0
description:
  - Runs once, on the controller, and audits the server of every host in O(hosts) over one database
    connection each, many at once (as many as the controller can hold, O(pool)). No module is sent to any host.
  - Each host's result is what M(dbfleet.innodb.verify) returns for it, with the same per-variable statuses
    (C(ok), C(startup_unknown), C(drift_runtime), C(drift_config), C(pending_restart), C(unsupported),
    C(not_settable), C(error)); where the server runs the desired value but what a restart brings is not
    visible over SQL, the variable is C(startup_unknown), which is not drift.
  - Each host's login comes from that host's own inventory variables (C(dbfleet_login_user),
    C(dbfleet_login_password), C(dbfleet_login_host), C(dbfleet_login_port), the TLS ones), as for every module
    of the collection. A unix socket or an option file (C(dbfleet_login_unix_socket), C(dbfleet_config_file))
    is a file on the host and is not used from the controller, nor are the host's certificate and key files
    (C(dbfleet_login_ca_cert), C(dbfleet_login_client_cert), C(dbfleet_login_client_key)); a loopback C(dbfleet_login_host) on a host that
    is not the controller is replaced by its C(ansible_host) (else its inventory name).
  - The controller reads no file of the host. What a restart would bring is known where the server says it
    over SQL - values saved with SET PERSIST (MySQL 8 C(performance_schema.persisted_variables)) and where each
    running value came from (MySQL 8 C(performance_schema.variables_info), MariaDB
    C(information_schema.SYSTEM_VARIABLES)). Where it does not, the item's C(startup.state) is C(unavailable)
    and its notes say that only the running value was checked; M(dbfleet.innodb.verify) on the host reads the
    option files themselves.
  - The desired settings of the roles in O(desired_from) are worked out per host from the host's role
    variables and the server's facts, as M(dbfleet.innodb.desired_settings) does. C(flush_neighbors) needs the
    storage under the datadir, which only the host can tell, so it is audited here only for hosts with
    C(flush_neighbors_storage_class) set; for the others the host's C(errors) say it was not audited.
  - One host that cannot be reached, refuses the login or fails is an error item for that host (C(failed),
    C(msg)); the other hosts are audited. Each host has O(timeout) seconds for the connection and each read.
  - Reads only on the servers. Without O(report_dir) it changes nothing and reports C(changed=false), also in
    check mode. With O(report_dir) it writes the report files there on the controller and reports
    C(changed=true); in check mode it writes nothing and says it would.
author:
  - dbfleet maintainers (@dbfleet)
options:
  hosts:
    description:
      - The inventory names of the hosts to audit, usually C(ansible_play_hosts_all) or
        C(query('ansible.builtin.inventory_hostnames', pattern)).
    type: list
    elements: str
    required: true
  desired_from:
    description:
      - Roles whose desired settings are audited on each host, worked out from the host's role variables; roles of
        the registry (C(plugins/module_utils/roles/desired.py) C(REGISTRY)).
    type: list
    elements: str
    default: []
  role_hosts:
    description:
      - Role name to the hosts it applies to (as C(site.yml) applies C(memcached) only to its host pattern).
        A role not named here applies to every host.
    type: dict
    default: {}
  settings_variable:
    description:
      - The host variable with more settings to audit (variable name to desired value), merged last.
    type: str
    default: verify_extra_settings
  pool:
    description:
      - How many hosts are audited at the same time (a thread, a socket and a database connection each on the
        controller; waits for the network overlap, so with 100 ms of round trip a few hundred in flight keep
        the controller busy).
      - Not set (the default) - as many as the controller can hold, at most 512 - the lowest of its open
        files (C(ulimit -n), less those open and 64 kept back), half its available memory at 512 KiB per host,
        and its thread limit. The number used is returned as RV(pool).
      - Set - 1 to 65536, and no more than the controller can hold; any other value fails the task before any
        host is read, naming the bound. Keep it below the servers' C(max_connections) headroom when inventory
        names share servers.
      - With more than one worker process (O(workers)), the pool is shared out over them.
    type: int
  workers:
    description:
      - How many processes audit the hosts, each with its share of them (dealt out in turn) and of O(pool), its
        results passed back as each host completes and merged in the order of O(hosts). A host costs the
        controller a few milliseconds of CPU (TLS, the protocol, the audit) under one Python interpreter lock per
        process, so one process uses one core at most.
      - Not set (the default) - one per CPU this controller process may run on, with at least 64 hosts each (one
        for a smaller fleet). The number used is returned as RV(workers).
      - Set - 1 to 256 (1 - no extra process), no more than the hosts; any other value fails the task before any
        host is read.
      - A worker process that ends before passing back all its hosts (killed, out of memory) makes each host it
        did not pass back an error item that names the process and how it ended; the other hosts are audited.
    type: int
  timeout:
    description:
      - Seconds for each host's connection and for each of its reads; a host that does not answer in time is
        an error item. 1 to 3600.
    type: int
    default: 10
  deadline:
    description:
      - Seconds for the whole exchange with one host - TCP connect, TLS, authentication and every query. When it
        passes, the connection's socket is shut down and the host is an error item, however the server behaves
        (a server that sends a byte every few seconds never trips O(timeout)). 1 to 3600.
    type: int
    default: 60
  controller_ca_cert:
    description:
      - A CA certificate file on the controller, used for every host. The hosts' own C(dbfleet_login_ca_cert),
        C(dbfleet_login_client_cert) and C(dbfleet_login_client_key) name files on the hosts and are never read
        on the controller (each host's result says so in C(errors)).
    type: path
  controller_client_cert:
    description:
      - A client certificate file on the controller, used for every host (see O(controller_ca_cert)).
    type: path
  controller_client_key:
    description:
      - The key of O(controller_client_cert), a file on the controller.
    type: path
  target_version:
    description:
      - An upgrade target, V(<flavor>-<version>) with a flavor of C(mysql), C(percona), C(mariadb),
        C(aurora-mysql) (for example V(mysql-8.4), V(mariadb-11.8)).
      - When set, each host's result lists the tables whose engine the host's own version or the target
        does not have (C(blockers)), read from C(information_schema.TABLES) as M(dbfleet.innodb.verify) does, and the
        upgrade readiness of its settings (C(upgrade), as M(dbfleet.innodb.verify) returns it). The option files are
        not read from the controller, the settings are those the server records as set by an option file, the
        command line or C(mysqld-auto.cnf) (C(performance_schema.variables_info), C(information_schema.SYSTEM_VARIABLES)),
        so a line written C(loose-) or an option that is no variable is not seen (each host's C(upgrade.notes) says so).
        Any other value fails the task before any host is read.
    type: str
  report_dir:
    description:
      - When set, the directory on the controller where the report files go - C(verify.json), C(verify.html)
        and C(verify-junit.xml), as C(playbooks/verify.yml) writes them with the filters
        P(dbfleet.innodb.verify_report#filter), P(dbfleet.innodb.verify_report_html#filter) and
        P(dbfleet.innodb.verify_report_junit#filter) - and the result holds RV(report) instead of RV(hosts).
      - For thousands of hosts; templating every host's result through the play costs far more than the audit.
      - The three files are written as one set - staged in a new directory under C(<report_dir>/.verify-report/),
        then made current by one rename of the link C(.verify-report/current) that the three names point through -
        so a reader never sees files of two runs. Every value of a secret variable (C(wsrep_sst_auth),
        C(report_password), names ending in C(_password), C(_auth), C(_secret), ...) is masked in them, as are
        credentials (C(password=...)) inside option strings such as C(wsrep_provider_options); other values are
        never masked.
      - A missing O(report_dir) is made with the directory mode that goes with O(report_mode) (0700 for 0600); an
        existing one is left as it is.
    type: path
  report_mode:
    description:
      - The mode of the report files, an octal string such as V(0600) or V(0640) that lets the owner read and
        write. The report's own subdirectory gets the matching directory mode (V(0700) for V(0600)).
    type: raw
    default: '0600'
  results_from:
    description:
      - Audit nothing here; read each host's registered M(dbfleet.innodb.verify) result from this host variable
        (the per-host mode of C(playbooks/verify.yml), V(__verify_result)) and only write the report files into
        O(report_dir), in the same way as the controller mode does. Needs O(report_dir).
    type: str
  startup_cache:
    description:
      - Where the option files cannot be read (always, from the controller), take what a restart brings from
        the host's last per-host audit - the cacheable fact C(verify_startup_state) that C(playbooks/verify.yml)
        sets in the per-host mode with C(verify_startup_cache=true), kept across runs by Ansible's fact cache
        (for example C(ANSIBLE_CACHE_PLUGIN=jsonfile)) - instead of calling the variable C(startup_unknown).
      - The item's C(startup) then carries C(read_at) and C(age_seconds), and its C(source) names the per-host
        run; a state older than O(startup_cache_max_age) is not used (a note says so).
    type: bool
    default: false
  startup_cache_max_age:
    description: Seconds after which the cached option-file state of O(startup_cache) is stale and not used (1 to
      31622400).
    type: int
    default: 86400
attributes:
  action:
    support: full
    description: Runs as an action plugin on the controller only.
  async:
    support: none
    description: Runs to completion in the task.
  check_mode:
    support: full
    description: Audits the same in check mode; with O(report_dir), writes no file and says it would.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to show a difference of.
  platform:
    platforms: posix
    support: full
    description: Runs on the controller (or the execution environment), which must reach each database port.
notes:
  - The result holds no credential (a password that a server's message might quote is masked), so the task
    needs no C(no_log) and its errors stay readable, also at C(-vvv).
seealso:
  - module: dbfleet.innodb.verify
  - module: dbfleet.innodb.desired_settings
'''

EXAMPLES = r'''
- name: Audit every database host from the controller (AWX execution environment)
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Audit the fleet over SQL
      dbfleet.innodb.verify_fleet:
        hosts: "{{ query('ansible.builtin.inventory_hostnames', 'databases') }}"
        desired_from: [adaptive_hash, memcached]
        role_hosts:
          memcached: "{{ query('ansible.builtin.inventory_hostnames', 'memcached') }}"
        pool: 32
        timeout: 10
      register: audit

    - name: Hosts that drift
      ansible.builtin.debug:
        msg: "{{ audit.hosts | dict2items | selectattr('value.drift', 'defined')
                 | selectattr('value.drift') | map(attribute='key') | list }}"

- name: The full report files, as the per-host mode writes them
  ansible.builtin.import_playbook: dbfleet.innodb.verify
  vars:
    verify_mode: controller
'''

RETURN = r'''
hosts:
  description:
    - Inventory name to that host's result. A result that could be audited is what M(dbfleet.innodb.verify)
      returns (C(variables), C(summary), C(drift), C(skipped_variables), C(server), C(option_files), C(errors)) plus
      C(connected_to) (where the controller logged in, never the password) and C(seconds); one that could not has C(failed=true) and C(msg).
  returned: when O(report_dir) is not set
  type: dict
  sample:
    db1:
      drift: true
      connected_to: dbfleet@10.0.0.11:3306
      seconds: 0.04
      errors: []
      variables:
        innodb_io_capacity:
          status: drift_runtime
          desired: 300
          runtime: '200'
          origin: COMPILED
          startup: {state: unavailable, value: null, source: null}
          notes:
            - the server runs 200
            - the server says the running value came from the compiled-in default when it started; an option
              file edited since is not visible over SQL
    db2:
      failed: true
      msg: "cannot connect to dbfleet@10.0.0.12:3306: (2003) Can't connect to MySQL server on '10.0.0.12' (timed out)"
report:
  description:
    - The report (as P(dbfleet.innodb.verify_report#filter) builds it) without its per-variable cells - C(summary),
      C(variables), and each host's C(status) and C(reason) - when O(report_dir) is set.
  returned: when O(report_dir) is set
  type: dict
  sample:
    summary: {hosts: 1000, hosts_ok: 600, hosts_startup_unknown: 390, hosts_drift: 8, hosts_error: 2, drift_hosts: [db7],
              startup_unknown_hosts: [db1], error_hosts: [db2]}
    hosts:
      db2: {status: error, reason: "cannot connect to dbfleet@10.0.0.12:3306: (2003) Can't connect"}
report_files:
  description: The report files written (or, in check mode, that would be written).
  returned: when O(report_dir) is set
  type: list
  elements: path
  sample: [/srv/reports/verify.json, /srv/reports/verify.html, /srv/reports/verify-junit.xml]
pool:
  description: How many hosts were audited at the same time (O(pool), or what the controller could hold).
  returned: always
  type: int
  sample: 512
seconds:
  description:
    - Where the run's time went, in seconds of wall time - C(inputs) reading each host's login and desired
      settings from the inventory, C(audit) the audits, C(report) building and writing the report files
      (with O(report_dir) only).
  returned: unless O(results_from) is set
  type: dict
  sample: {inputs: 2.1, audit: 8.4, report: 1.9}
workers:
  description: How many processes audited the hosts (O(workers), or one per usable CPU).
  returned: unless O(results_from) is set
  type: int
  sample: 2
summary:
  description:
    - How many hosts were audited, and how many are ok, drift or could not be audited.
    - C(hosts_startup_unknown) counts the hosts without drift where at least one variable is C(startup_unknown)
      (runs the desired value, what a restart brings is not known); C(hosts_ok) does not count them.
  returned: always
  type: dict
  sample: {hosts: 1000, hosts_ok: 600, hosts_startup_unknown: 390, hosts_drift: 8, hosts_error: 2}
'''
