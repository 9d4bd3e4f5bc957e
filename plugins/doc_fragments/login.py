# -*- coding: utf-8 -*-
# Copyright: dbfleet.innodb contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):

    # Login options shared by every module that talks to a server.
    # Names and behaviour follow community.mysql so one module_defaults block serves both.
    DOCUMENTATION = r'''
options:
  login_user:
    description:
      - The user to connect as.
      - When not set, the host variable C(dbfleet_login_user) is used, then the user from
        O(config_file), then the user the module runs as.
    type: str
    aliases: [ login_username ]
  login_password:
    description:
      - The password for O(login_user). Never logged.
      - When not set, the host variable C(dbfleet_login_password) is used, then the password from
        O(config_file), if any.
    type: str
  login_host:
    description:
      - Host the server runs on. Ignored when O(login_unix_socket) is set.
      - A task that sets O(login_host) or O(login_unix_socket) names its server - it gets none of the
        host variables C(dbfleet_login_host), C(dbfleet_login_port), C(dbfleet_login_unix_socket), only the
        credentials and TLS options it does not give itself; a task that sets only O(login_port) gets no
        C(dbfleet_login_unix_socket).
      - When not set, the host variable C(dbfleet_login_host) is used, then C(host) in the
        C([client]) group of O(config_file), then C(localhost).
    type: str
  login_port:
    description:
      - TCP port of the server. Ignored when O(login_unix_socket) is set.
      - When not set, the host variable C(dbfleet_login_port) is used, then C(port) in the
        C([client]) group of O(config_file), then C(3306).
    type: int
  login_unix_socket:
    description:
      - Path to the server's Unix socket. When set, the connection uses it instead of TCP.
      - With a socket, MariaDB's unix_socket authentication lets C(root) log in without a password.
      - When not set, the host variable C(dbfleet_login_unix_socket) is used, then C(socket) in the
        C([client]) group of O(config_file) unless O(login_host) or O(login_port) is given.
    type: str
  config_file:
    description:
      - Client option file to read login settings from (C(user), C(password), C(host), C(port),
        C(socket), C(ssl-ca), C(ssl-cert), C(ssl-key), C(ssl-mode)). An option given to the module wins over the file.
      - Read as the MySQL and MariaDB clients read it - groups C([client]), C([client-server]),
        C([client-mariadb]), C([mysql]) and C([mariadb-client]), the last value wins, C(!include) and
        C(!includedir) followed, quotes removed, every line on its own (an indented line is not the
        continuation of the one above). A line the client would refuse fails the module with the file and
        the line number, never the line's text.
      - A missing file is ignored. Set to an empty string to read none.
      - When not set, the host variable C(dbfleet_config_file) is used.
    type: path
    default: '~/.my.cnf'
  connect_timeout:
    description:
      - Seconds to wait for the connection.
    type: int
    default: 30
  ca_cert:
    description:
      - The CA certificate (PEM file) that must have signed the server's certificate. With it the
        connection uses TLS and fails when the server's certificate does not verify.
      - V(system) names the system's CA store instead of a file (any certificate a public CA issued); it is
        used only with the host name checked (O(login_ssl_mode=verify_identity)), never with V(verify_ca).
      - When not set, the host variable C(dbfleet_login_ca_cert) is used, then C(ssl-ca) of O(config_file).
    type: path
    aliases: [ ssl_ca ]
  client_cert:
    description:
      - The client's certificate (PEM file), for accounts that C(REQUIRE X509) or a subject.
      - When not set, the host variable C(dbfleet_login_client_cert) is used, then C(ssl-cert) of O(config_file).
    type: path
    aliases: [ ssl_cert ]
  client_key:
    description:
      - The private key (PEM file) of O(client_cert).
      - When not set, the host variable C(dbfleet_login_client_key) is used, then C(ssl-key) of O(config_file).
    type: path
    aliases: [ ssl_key ]
  check_hostname:
    description:
      - Whether the server's certificate must name the host connected to (O(login_host)); used when
        O(login_ssl_mode) is not set, as in community.mysql.
      - When not set, it is checked whenever O(ca_cert) is given (O(login_ssl_mode=verify_identity));
        V(false) keeps the check of the certificate against O(ca_cert) but not of the name
        (O(login_ssl_mode=verify_ca)). V(true) needs O(ca_cert) too (a file, or V(system)), as the mysql client's
        C(VERIFY_IDENTITY) needs C(--ssl-ca).
      - A value that contradicts O(login_ssl_mode) (V(true) with anything but V(verify_identity), V(false)
        with V(verify_identity)) fails the module before it connects.
      - When not set, the host variable C(dbfleet_login_check_hostname) is used.
    type: bool
  login_ssl_mode:
    description:
      - TLS of a TCP connection, as MySQL's C(--ssl-mode) names it. V(disabled) never uses TLS;
        V(preferred) uses TLS when the server offers it, without verifying the server; V(required) always
        uses TLS (a server without TLS is refused before anything is sent to it), without verifying the
        server; V(verify_ca) also verifies the server's certificate against O(ca_cert); V(verify_identity) also
        checks that the certificate names O(login_host). As with the mysql client, V(verify_ca) and
        V(verify_identity) without O(ca_cert) fail before connecting (O(ca_cert=system) trusts the system's
        CAs, with V(verify_identity) only).
      - A TCP login to a server that is not on this machine and not verified (V(disabled), V(preferred),
        V(required)) works, with a warning in the task result that names the server and how to verify it.
      - When not set, it follows the other TLS options as community.mysql does - V(verify_identity) with
        O(ca_cert) or O(check_hostname=true), V(verify_ca) with O(ca_cert) and O(check_hostname=false),
        V(required) with a client certificate alone, else V(preferred). This default keeps existing
        community.mysql playbooks working; set V(verify_identity) (and O(ca_cert)) wherever the server
        is reached over a network.
      - Whatever the mode, the password is never sent in clear to a server that is not verified - an
        account whose authentication asks for it (C(mysql_clear_password), MariaDB's PAM C(dialog)) logs in
        only over a verified TLS connection (V(verify_ca), V(verify_identity)) or a unix socket; otherwise
        the module fails and the password does not leave.
      - The full authentication of C(caching_sha2_password) and C(sha256_password) sends the password itself,
        inside TLS or, without TLS, encrypted with an RSA public key. Inside TLS it is sent only to a verified
        server, over a unix socket, to a loopback address whose listener is the server's
        (O(login_trust_loopback)), or with O(login_ssl_mode=required) set explicitly (to accept an unverified
        server). Without TLS, the RSA exchange is made only with the key O(login_server_public_key) gives, with
        O(login_get_server_public_key=true), or to a loopback address whose listener is the server's; otherwise
        the module fails before the answer that would carry the key request or the password, naming the server
        and these two options. O(login_ssl_mode=preferred), set explicitly or not, allows none of this.
        C(mysql_native_password) and the fast path of C(caching_sha2_password) send only a hash.
      - Over a unix socket (O(login_unix_socket)) TLS is not used, whatever the mode.
      - When not set, the host variable C(dbfleet_login_ssl_mode) is used, then C(ssl-mode) of O(config_file).
      - The controller mode of M(dbfleet.innodb.verify_fleet) sends the password to a server that is not on
        the controller only when it can verify the server, or when this option is set (then the report says
        the server was not verified).
    type: str
    choices: [ disabled, preferred, required, verify_ca, verify_identity ]
  login_server_public_key:
    description:
      - The server's RSA public key (a PEM file, the server's C(public_key.pem)), as the mysql client's
        C(--server-public-key-path). Without TLS, C(sha256_password) and the full authentication of
        C(caching_sha2_password) encrypt the password with this key; a key the server sends is ignored, so only
        the server that holds the private key can read the password.
      - When not set, the host variable C(dbfleet_login_server_public_key) is used.
    type: path
  login_get_server_public_key:
    description:
      - Whether to take the RSA public key the server sends, without TLS, to encrypt the password with
        (C(sha256_password), the full authentication of C(caching_sha2_password)), as the mysql client's
        C(--get-server-public-key). Nothing verifies that key - whoever answers on the address gets the password.
        Prefer O(login_server_public_key), verified TLS or a unix socket.
      - When not set (or V(false)), the module fails before asking for the key (see O(login_ssl_mode)).
      - When not set, the host variable C(dbfleet_login_get_server_public_key) is used.
    type: bool
  login_trust_loopback:
    description:
      - Whether a TCP login to a loopback address (C(127.0.0.1), C(::1), C(localhost) over TCP) may carry the
        password itself (full authentication, inside unverified TLS or by the server's RSA key), as a unix socket
        does. The mysql client never lets it (only TLS, a unix socket and shared memory are secure transports).
      - With V(true) (the default), only when the process listening on the exact address and port connected to
        is proven to run as the server's user, checked on every connection (the restart gate's included) - its
        owner in C(/proc/net/tcp) or C(/proc/net/tcp6) is root, the user the module runs as, or a user the host
        shows to run the server (the owner of the server's socket or data directory when nobody else can write
        there, or the user of the main process of a server unit of systemd). Another user's listener (any local
        user can listen on a free port while mysqld is down, or on C([::1]:3306) when the server listens on
        C(127.0.0.1) only) gets nothing; the module then logs in through the local server's unix socket when one
        is found and its server listens on the named port, otherwise it fails naming the listener's owner.
      - A unix socket's server is checked the same way (C(SO_PEERCRED)) whatever this option says.
      - With V(false), no loopback TCP login carries the password, as with the mysql client; the login goes
        through the local server's unix socket first when one is found (C(socket) of O(config_file), else where
        a client finds it) and its server listens on the named port; otherwise over TCP, where the password
        itself is not sent.
      - When not set, the host variable C(dbfleet_login_trust_loopback) is used.
    type: bool
requirements:
  - PyMySQL 1.0 or later (Python library) on the host the module runs on.
attributes:
  action:
    support: full
    description:
      - The collection's action plugin fills each login option the task does not pass (neither as an
        argument nor through C(module_defaults)) from the host variable named in its description,
        templated. With C(delegate_to), the delegated host's variables are used.
  action_group:
    support: full
    membership: [ dbfleet.innodb.innodb ]
    description: Use C(group/dbfleet.innodb.innodb) in C(module_defaults) to set options for every module of the collection at once.
notes:
  - Credentials given here are never written to the module's output, also at C(-vvv).
  - An ad-hoc C(ansible HOST -m dbfleet.innodb.MODULE) call logs in with the host variables like a playbook does.
'''
