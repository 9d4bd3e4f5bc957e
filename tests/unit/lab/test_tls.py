"""lab/dbfleet_lab/tls.py: the lab CA and the server certificates the TLS tests rely on."""
import os
import ssl
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'lab'))

from dbfleet_lab import tls  # noqa: E402  pylint: disable=wrong-import-position


def _alt_names(cert):
    return subprocess.run(['openssl', 'x509', '-in', cert, '-noout', '-ext', 'subjectAltName'], capture_output=True,
                          text=True, check=True).stdout


def test_certificates_are_signed_by_the_lab_ca_for_their_names(tmp_path):
    lab = str(tmp_path)
    for host in ('mysql80', 'mariadb118'):
        tls.prepare(lab, host, os.path.join(lab, host))
    ca = tls.ca_paths(lab)[0]
    good = tls.server_cert_paths(os.path.join(lab, 'mysql80'))[1]
    wrong = tls.server_cert_paths(os.path.join(lab, 'mariadb118'))[1]
    assert 'IP Address:127.0.0.1' in _alt_names(good) and 'DNS:localhost' in _alt_names(good)
    assert 'wrong-name.dbfleet.invalid' in _alt_names(wrong) and '127.0.0.1' not in _alt_names(wrong)
    for cert in (good, wrong):
        out = subprocess.run(['openssl', 'verify', '-CAfile', ca, cert], capture_output=True, text=True, check=False)
        assert out.returncode == 0, out.stdout + out.stderr
    assert oct(os.stat(tls.ca_paths(lab)[1]).st_mode & 0o777) == '0o600'
    # The CA is made once; a host's certificate is kept while its kind stays the same.
    before = os.stat(good).st_mtime_ns
    tls.prepare(lab, 'mysql80', os.path.join(lab, 'mysql80'))
    assert os.stat(good).st_mtime_ns == before
    ssl.create_default_context(cafile=ca)       # a CA file Python loads


def test_option_lines_only_for_hosts_with_a_lab_certificate(tmp_path):
    lines = tls.server_options('mysql80', str(tmp_path / 'mysql80'))
    assert [line.split(' = ')[0] for line in lines] == ['ssl-ca', 'ssl-cert', 'ssl-key']
    assert all(str(tmp_path / 'mysql80') in line for line in lines)      # inside the instance (chroot servers)
    assert tls.server_options('mariadb1011', str(tmp_path / 'mariadb1011')) == []
