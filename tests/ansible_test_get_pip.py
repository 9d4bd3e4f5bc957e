"""Stand-in for the pip bootstrap script that ansible-test downloads for its sanity venvs.

ansible-test runs this file as __main__ inside a fresh virtual environment, with pip install
arguments (e.g. `--disable-pip-version-check pip==24.2 --no-setuptools --no-wheel`). The public script
comes from a host that is not reachable from every build machine; PyPI is. This installs the
interpreter's bundled pip with ensurepip, then lets that pip install what was asked for.
"""
import ensurepip
import os
import subprocess
import sys

# ansible-test runs pip with a reduced environment; keep the machine's CA bundle in use so a
# registry behind a TLS-inspecting proxy still verifies.
CA_CANDIDATES = (os.environ.get('PIP_CERT'), os.environ.get('SSL_CERT_FILE'), '/etc/ssl/certs/ca-certificates.crt')


GET_PIP_ONLY = {'--no-setuptools': 'setuptools', '--no-wheel': 'wheel'}


def main():
    args = [a for a in sys.argv[1:] if a not in GET_PIP_ONLY]
    unwanted = [GET_PIP_ONLY[a] for a in sys.argv[1:] if a in GET_PIP_ONLY]
    ensurepip.bootstrap(upgrade=True)
    cert = next((c for c in CA_CANDIDATES if c and os.path.isfile(c)), None)
    if cert:
        args = ['--cert', cert] + args
    rc = subprocess.call([sys.executable, '-m', 'pip', 'install'] + args)
    if rc == 0 and unwanted:
        rc = subprocess.call([sys.executable, '-m', 'pip', 'uninstall', '-q', '-y'] + unwanted)
    sys.exit(rc)


if __name__ == '__main__':
    main()
