"""TLS material for security tests (needs the `cryptography` package of the `test` extra)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class TestCertificates:
    """Paths of the PEM files :func:`generate_test_certificates` wrote (all keys are PKCS#8).

    * ``ca_cert``: the CA every other certificate chains to (a client's truststore).
    * ``broker_keystore``: broker certificate (SANs ``localhost`` and ``127.0.0.1``) + CA + key, for a broker
      listener's ``ssl.keystore.type=PEM`` / ``ssl.keystore.location``.
    * ``wrong_host_keystore``: the same for a broker certificate naming only ``wrong-host.invalid``.
    * ``expired_keystore``: the same for a broker certificate (SANs ``localhost``, ``127.0.0.1``) that expired a day
      ago, signed by the same CA.
    * ``client_cert`` / ``client_key`` / ``client_keystore`` (both in one file): a client certificate for mutual TLS;
      ``client_key_encrypted`` is its key encrypted with ``client_key_password``.
    * ``other_ca_cert``: a CA that signed nothing here (a truststore that trusts no broker).
    """
    __test__ = False  # not a pytest test class

    directory: Path
    ca_cert: Path
    broker_keystore: Path
    wrong_host_keystore: Path
    client_cert: Path
    client_key: Path
    client_keystore: Path
    client_key_encrypted: Path
    client_key_password: str
    other_ca_cert: Path
    expired_keystore: Path


def generate_test_certificates(directory: str | os.PathLike, *, days: int = 2,
                               client_key_password: str = "kwire-key-pass") -> TestCertificates:
    """Write a throw-away CA, broker certificates and a client certificate (RSA 2048) into ``directory``."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    until = now + datetime.timedelta(days=days)

    def new_key():
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "spark-kwire tests"),
                          x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def make_ca(cn: str):
        key = new_key()
        cert = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(name(cn))
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(until)
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False,
                                             encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return key, cert

    def make_leaf(ca_key, ca_cert, cn: str, sans: list, usage, *, valid=(now, until)):
        key = new_key()
        builder = (x509.CertificateBuilder().subject_name(name(cn)).issuer_name(ca_cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(valid[0]).not_valid_after(valid[1])
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                  critical=False))
        if sans:
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return key, builder.sign(ca_key, hashes.SHA256())

    def pem_cert(cert) -> bytes:
        return cert.public_bytes(serialization.Encoding.PEM)

    def pem_key(key, password: str | None = None) -> bytes:
        encryption = (serialization.BestAvailableEncryption(password.encode()) if password
                      else serialization.NoEncryption())
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)

    def write(filename: str, data: bytes) -> Path:
        path = out / filename
        path.write_bytes(data)
        os.chmod(path, 0o600)
        return path

    ca_key, ca_cert = make_ca("kwire test CA")
    _, other_ca = make_ca("kwire untrusted CA")
    server = [ExtendedKeyUsageOID.SERVER_AUTH]
    broker_key, broker_cert = make_leaf(ca_key, ca_cert, "localhost",
                                        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
                                        server)
    wrong_key, wrong_cert = make_leaf(ca_key, ca_cert, "wrong-host.invalid", [x509.DNSName("wrong-host.invalid")],
                                      server)
    expired_key, expired_cert = make_leaf(
        ca_key, ca_cert, "localhost", [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
        server, valid=(now - datetime.timedelta(days=30), now - datetime.timedelta(days=1)))
    client_key, client_cert = make_leaf(ca_key, ca_cert, "kwire-client", [], [ExtendedKeyUsageOID.CLIENT_AUTH])
    return TestCertificates(
        directory=out,
        ca_cert=write("ca.pem", pem_cert(ca_cert)),
        broker_keystore=write("broker.pem", pem_cert(broker_cert) + pem_cert(ca_cert) + pem_key(broker_key)),
        wrong_host_keystore=write("wrong-host.pem", pem_cert(wrong_cert) + pem_cert(ca_cert) + pem_key(wrong_key)),
        client_cert=write("client.crt", pem_cert(client_cert)),
        client_key=write("client.key", pem_key(client_key)),
        client_keystore=write("client.pem", pem_cert(client_cert) + pem_key(client_key)),
        client_key_encrypted=write("client-encrypted.key", pem_key(client_key, client_key_password)),
        client_key_password=client_key_password,
        other_ca_cert=write("other-ca.pem", pem_cert(other_ca)),
        expired_keystore=write("expired.pem", pem_cert(expired_cert) + pem_cert(ca_cert) + pem_key(expired_key)),
    )
