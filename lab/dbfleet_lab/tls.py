"""The lab's certificate authority and the server certificates of the lab hosts that speak TLS.

Made with the ``openssl`` command at ``lab.py up``, once per lab directory:

    <lab>/tls/ca.pem, ca.key             the lab CA (the tests verify servers against ca.pem)
    <lab>/<host>/tls/server-cert.pem     the host's certificate, signed by the lab CA
    <lab>/<host>/tls/server-key.pem
    <lab>/<host>/tls/ca.pem              a copy of the CA, inside the instance directory (a chroot
                                         server sees only that directory of the lab)

Which host gets which certificate (SERVER_CERTS):

- ``good``: subjectAltName DNS:localhost, IP:127.0.0.1 - what the lab's logins use; a client that
  checks the name (``login_ssl_mode: verify_identity``) accepts it.
- ``wrong_name``: signed by the same CA but for DNS:wrong-name.dbfleet.invalid only - the chain
  verifies (``verify_ca``), the name does not (``verify_identity`` refuses it).

Hosts not named keep what their server does by itself (MySQL 8.0 and later and MariaDB 11.4 and
later make a self-signed certificate; MariaDB 10.11 offers no TLS at all).
"""
import os
import subprocess

from . import LabError

SERVER_CERTS = {"mysql80": "good", "mariadb118": "wrong_name"}
SUBJECT_NAMES = {"good": ("localhost", "DNS:localhost,IP:127.0.0.1"),
                 "wrong_name": ("wrong-name.dbfleet.invalid", "DNS:wrong-name.dbfleet.invalid")}
DAYS = 3650


def _openssl(args, cwd):
    proc = subprocess.run(["openssl"] + args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, check=False)
    if proc.returncode != 0:
        raise LabError("openssl %s failed (exit %d):\n%s" % (args[0], proc.returncode, proc.stdout.strip()))


def ca_paths(lab_dir):
    directory = os.path.join(lab_dir, "tls")
    return os.path.join(directory, "ca.pem"), os.path.join(directory, "ca.key")


def ensure_ca(lab_dir):
    """The lab CA's certificate path (made once per lab directory)."""
    ca_cert, ca_key = ca_paths(lab_dir)
    if os.path.exists(ca_cert) and os.path.exists(ca_key):
        return ca_cert
    directory = os.path.dirname(ca_cert)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    _openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key.tmp", "-out", "ca.pem.tmp",
              "-days", str(DAYS), "-subj", "/CN=dbfleet lab CA", "-addext", "basicConstraints=critical,CA:TRUE",
              "-addext", "keyUsage=critical,keyCertSign,cRLSign"], directory)
    os.chmod(os.path.join(directory, "ca.key.tmp"), 0o600)
    os.replace(os.path.join(directory, "ca.key.tmp"), ca_key)
    os.replace(os.path.join(directory, "ca.pem.tmp"), ca_cert)
    return ca_cert


def server_cert_paths(instance_dir):
    directory = os.path.join(instance_dir, "tls")
    return (os.path.join(directory, "ca.pem"), os.path.join(directory, "server-cert.pem"),
            os.path.join(directory, "server-key.pem"))


def ensure_server_cert(lab_dir, instance_dir, kind):
    """Make the instance's certificate of `kind` (SUBJECT_NAMES) unless it is there already."""
    ca_cert = ensure_ca(lab_dir)
    ca_key = ca_paths(lab_dir)[1]
    ca_copy, cert, key = server_cert_paths(instance_dir)
    stamp = os.path.join(os.path.dirname(cert), "kind")
    current = open(stamp, encoding="utf-8").read().strip() if os.path.exists(stamp) else None
    if current != kind or not all(os.path.exists(p) for p in (ca_copy, cert, key)):
        common_name, alt_names = SUBJECT_NAMES[kind]
        directory = os.path.dirname(cert)
        os.makedirs(directory, exist_ok=True)
        _openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server-key.pem", "-out", "server.csr",
                  "-subj", "/CN=%s" % common_name], directory)
        extensions = os.path.join(directory, "ext.cnf")
        with open(extensions, "w", encoding="utf-8") as handle:
            handle.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n" % alt_names)
        _openssl(["x509", "-req", "-in", "server.csr", "-CA", ca_cert, "-CAkey", ca_key, "-CAcreateserial",
                  "-CAserial", os.path.join(directory, "ca.srl"), "-out", "server-cert.pem", "-days", str(DAYS),
                  "-extfile", extensions], directory)
        with open(ca_cert, encoding="utf-8") as src, open(ca_copy, "w", encoding="utf-8") as dst:
            dst.write(src.read())
        os.chmod(key, 0o600)
        for leftover in ("server.csr", "ext.cnf"):
            os.remove(os.path.join(directory, leftover))
        with open(stamp, "w", encoding="utf-8") as handle:
            handle.write(kind + "\n")


def server_options(host_name, instance_dir):
    """The [mysqld] TLS option lines of a lab host ([] for hosts that keep their server's own TLS)."""
    if host_name not in SERVER_CERTS:
        return []
    ca_copy, cert, key = server_cert_paths(instance_dir)
    return ["ssl-ca = %s" % ca_copy, "ssl-cert = %s" % cert, "ssl-key = %s" % key]


def prepare(lab_dir, host_name, instance_dir):
    """Before a host's server starts: its certificate, when it has one (SERVER_CERTS)."""
    if host_name in SERVER_CERTS:
        ensure_server_cert(lab_dir, instance_dir, SERVER_CERTS[host_name])
