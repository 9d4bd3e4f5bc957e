# dbfleet.innodb: set-up, lab fleet and checks.
# Two commands do everything on a fresh machine: `make demo` and `make test`.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT        := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
VENV        ?= $(ROOT)/.venv
PY          := $(VENV)/bin/python
COLLECTIONS := $(ROOT)/.collections
LAB         := $(PY) $(ROOT)/lab/lab.py
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export ANSIBLE_CONFIG := $(ROOT)/ansible.cfg
# The checks start thousands of Python processes on the same sources (lab.py, the modules the tests run directly):
# their bytecode is kept under .cache/pycache, outside the tree, also where the environment sets
# PYTHONDONTWRITEBYTECODE (Python then checks each cached file against its source).
export PYTHONPYCACHEPREFIX := $(ROOT)/.cache/pycache
unexport PYTHONDONTWRITEBYTECODE

APT_PACKAGES := mariadb-server mariadb-client libaio1 libnuma1 openssh-server iproute2 haproxy \
                percona-toolkit sysbench libmemcached-tools unzip maven chromium chromium-driver \
                debootstrap galera-4 rsync nftables systemd-container
# gcc builds bench/verify_fleet/delay_relay.c, the delayed network path of the latency bench and of
# tests/integration/local/playbooks/test_verify_fleet_latency.py (this kernel has no netem).
APT_PACKAGES += gcc
ANSIBLE_BUNDLE := ansible==12.3.0
# The execution environment (make ee): podman with runc (ee/containers.conf), debootstrap for its base image.
EE_APT_PACKAGES := podman runc uidmap debootstrap
EE_IMAGE ?= localhost/dbfleet-innodb-ee:1.0.0

.PHONY: help deps test-extended apt venv collections lab-up lab-down lab-status fleet-up fleet-clusters-up fleet-down fleet-status \
        demo test check lint sanity units integration molecule build-test bench clean ee ee-apt core-matrix

help:
	@echo "make demo    install what is needed, bring the lab up, run site.yml and verify.yml"
	@echo "make test    install what is needed and run every check"
	@echo "make check   the fast tier, no lab (a few minutes): changelog lint, units, ansible-lint, sanity, HTML docs"
	@echo "make lab-up | lab-down | lab-status      local lab fleet (one process per server)"
	@echo "make fleet-up | fleet-down | fleet-status  SSH fleet (a network namespace per host): db1-db4, the Galera"
	@echo "                                           clusters and the Group Replication group, each with its replica"
	@echo "                                           (DBFLEET_FLEET_CLUSTERS=0: db1-db4 only; fleet-clusters-up: alias)"
	@echo "make ee      build the execution environment image (podman, ansible-builder; docs/awx.md)"
	@echo "make docs-html   the collection's HTML docs (.build/docsite/html); make release-notes: CHANGELOG.rst"

# ---------------------------------------------------------------- set-up
# install_debs LIST: install the Debian packages of LIST that are missing, then check each one installed.
define install_debs
@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages: $$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get update -qq; \
	  for try in 1 2 3; do apt-get install -y -qq $$missing >/dev/null && break; \
	    echo "apt-get install failed (try $$try); retrying"; sleep 2; done; \
	  for p in $$missing; do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || { echo "ERROR: Debian package $$p did not install" >&2; exit 1; }; done; \
	fi
endef

deps: apt venv collections

apt: .cache/apt.stamp
.cache/apt.stamp: Makefile
	@mkdir -p .cache
	$(call install_debs,$(APT_PACKAGES))
	@touch $@

venv: $(VENV)/.stamp
$(VENV)/.stamp: requirements/venv.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	@$(PY) -m pip install -q --disable-pip-version-check -r requirements/venv.txt
	@touch $@

collections: $(COLLECTIONS)/.stamp
$(COLLECTIONS)/.stamp: $(VENV)/.stamp Makefile
	@mkdir -p $(COLLECTIONS)/ansible_collections/dbfleet .cache/wheel
	@ln -sfn $(ROOT) $(COLLECTIONS)/ansible_collections/dbfleet/innodb
	@if [ ! -d $(COLLECTIONS)/ansible_collections/community/mysql ]; then \
	  $(PY) -m pip download -q --disable-pip-version-check --no-deps -d .cache/wheel $(ANSIBLE_BUNDLE); \
	  $(PY) lab/extract_collection.py .cache/wheel/ansible-12.3.0-py3-none-any.whl community/mysql $(COLLECTIONS); \
	fi
	@# awx.awx: the controller objects as code (awx/), checked offline against its modules' argument specs.
	@if [ ! -d $(COLLECTIONS)/ansible_collections/awx/awx ]; then \
	  test -f .cache/wheel/ansible-12.3.0-py3-none-any.whl \
	    || $(PY) -m pip download -q --disable-pip-version-check --no-deps -d .cache/wheel $(ANSIBLE_BUNDLE); \
	  $(PY) lab/extract_collection.py .cache/wheel/ansible-12.3.0-py3-none-any.whl awx/awx $(COLLECTIONS); \
	fi
	@touch $@

# ---------------------------------------------------------------- execution environment
ee-apt: .cache/ee-apt.stamp
.cache/ee-apt.stamp: Makefile
	@mkdir -p .cache
	$(call install_debs,$(EE_APT_PACKAGES))
	@touch $@

# The image, from execution-environment.yml (ee/build.sh): EE_IMAGE names it, EE_BASE_IMAGE a registry's
# EE base instead of the local Debian one, EE_CA_BUNDLE the CA bundle pip trusts in the build.
ee: ee-apt venv
	EE_IMAGE=$(EE_IMAGE) $(ROOT)/ee/build.sh

# ---------------------------------------------------------------- lab
lab-up: deps
	$(LAB) up
lab-down:
	@if [ -x $(PY) ]; then $(LAB) down; else echo "no lab here"; fi
lab-status:
	$(LAB) status

# db1-db4 and the fleet's clusters: Galera galera1-3 + galera_replica (MariaDB 10.11), galera118_1-3 +
# galera118_replica (MariaDB 11.8), Group Replication gr1-3 + gr_replica (about 2-3 min more and ~3 GB of RAM).
# DBFLEET_FLEET_CLUSTERS=0 make fleet-up: db1-db4 only, for small machines. fleet-clusters-up: the same as fleet-up.
FLEET_CLUSTERS_ENV := DBFLEET_FLEET_WITH_GALERA=1 DBFLEET_FLEET_WITH_GALERA118=1 DBFLEET_FLEET_WITH_GR=1
ifeq ($(DBFLEET_FLEET_CLUSTERS),0)
FLEET_UP_ENV :=
else
FLEET_UP_ENV := $(FLEET_CLUSTERS_ENV)
endif
fleet-up: deps
	$(FLEET_UP_ENV) $(LAB) --mode ssh up
fleet-clusters-up: deps
	$(FLEET_CLUSTERS_ENV) $(LAB) --mode ssh up
fleet-down:
	@if [ -x $(PY) ]; then $(LAB) --mode ssh down; else echo "no fleet here"; fi
fleet-status:
	$(LAB) --mode ssh status

# ---------------------------------------------------------------- demo
demo: lab-up
	ansible-playbook -i inventories/lab playbooks/site.yml
	ansible-playbook -i inventories/lab playbooks/verify.yml
	@echo
	@echo "Fleet report: $(ROOT)/reports/verify.html (also reports/verify.json, reports/verify-junit.xml)"

# ---------------------------------------------------------------- checks
test: deps ee-apt
	$(ROOT)/tests/run-all.sh

# The fast tier for the edit-test loop, no lab (a few minutes): changelog lint, unit tests, ansible-lint, sanity and
# the HTML docs build (tests/check.sh). make test runs all of them too.
check: deps
	$(ROOT)/tests/check.sh

# What make test leaves out for its time budget: faults it covers, again on another flavor (pytest marker
# `extended`; none today: pytest's exit 5, no test selected, is no failure), and the drop runbook's Molecule
# scenario on the SSH fleet.
test-extended: deps lab-up
	$(PY) -m pytest -q -m extended tests/integration || [ $$? -eq 5 ]
	DBFLEET_MOLECULE_EXTENDED=1 DBFLEET_FLEET_NET=12 $(ROOT)/tests/molecule.sh drop_tables_fleet

lint: deps
	ansible-lint --profile production

sanity: deps
	$(ROOT)/tests/sanity.sh

units: deps
	$(PY) -m pytest -q tests/unit

# Sanity and unit tests on the other ansible-core versions meta/runtime.yml claims (requirements/core-matrix.txt),
# each in its own virtualenv in the lab cache (~/.cache/dbfleet-lab/core/<version>-<hash>, tests/core-matrix.sh);
# `make sanity units` run the pinned one.
core-matrix: deps
	@failed=0; for series in $$(awk '!/^#/ && NF {print $$1}' requirements/core-matrix.txt); do \
	  $(ROOT)/tests/core-matrix.sh $$series || failed=1; done; exit $$failed

integration: deps
	$(PY) -m pytest -q tests/integration

molecule: deps
	$(ROOT)/tests/molecule.sh

build-test: deps
	$(ROOT)/tests/build-test.sh

bench: lab-up
	@echo "see bench/README.md"

clean: lab-down fleet-down
	rm -rf .build reports

# The roles' inputs and defaults for the modules (plugins/module_utils/roles/specs.py), from roles/<role>/meta/argument_specs.yml;
# every role's meta/main.yml and README.md (tests/unit/test_role_meta.py).
.PHONY: role-specs
role-specs:
	$(PY) tests/unit/plugins/module_utils/roles/test_specs.py
	$(PY) tests/unit/test_role_meta.py

# The collection's HTML docs as users read them (antsibull-docs, sphinx; docsite/): .build/docsite/html/index.html.
# A warning fails the build (sphinx -W), so does a plugin or role whose docs antsibull-docs cannot render.
DOCSITE := $(ROOT)/.build/docsite
.PHONY: docs-html
docs-html: deps
	$(ROOT)/tests/docs-html.sh $(DOCSITE)

# The release notes: CHANGELOG.rst and changelogs/changelog.yaml for galaxy.yml's version, from the fragments (which
# it removes). Run once on main when every change of the release is merged (docs/development.md, "Releasing").
.PHONY: release-notes
release-notes: deps
	antsibull-changelog lint
	antsibull-changelog release --version $$(sed -n 's/^version: *//p' galaxy.yml)
