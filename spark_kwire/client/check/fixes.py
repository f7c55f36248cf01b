"""The one table of known failures: each kind of warning or failure a check reports, the steps it appears in, and
its fix in one sentence. Every warn and fail row carries the fix of its kind; docs/checking-a-connection.md shows
this table and a test keeps the two equal."""

from __future__ import annotations

from typing import NamedTuple

from spark_kwire.client.check.rows import (API_VERSIONS, CONNECT, METADATA, REGISTRY, REGISTRY_AUTH,
                                           REGISTRY_SUBJECT, RESOLVE, SASL_AUTHENTICATE, SASL_LOGIN, SASL_MECHANISMS,
                                           SETTINGS, STEPS, THROUGHPUT, TLS_CERTIFICATE, TLS_CLIENT_CERTIFICATE,
                                           TLS_FILES, TLS_HANDSHAKE, TLS_HOSTNAME, TOPIC, TOPIC_ACCESS)

__all__ = ["Fix", "FIXES", "fix_for"]


class Fix(NamedTuple):
    steps: tuple[str, ...]
    sentence: str


_KERBEROS = (SASL_LOGIN, SASL_AUTHENTICATE)

FIXES: dict[str, Fix] = {
    # settings
    "settings_no_effect": Fix((SETTINGS,), "Remove the settings named: they configure Java client features that "
                              "kwire does not have, and the query runs without them."),
    # network
    "dns_unresolved": Fix((RESOLVE,), "Correct the host name in kafka.bootstrap.servers, or make it resolvable from "
                          "this host (DNS, /etc/hosts, the cluster's network)."),
    "dns_timeout": Fix((RESOLVE,), "Make the DNS servers of this host answer (resolv.conf, the network's resolver): "
                       "every connection waits on them."),
    "tcp_refused": Fix((CONNECT,), "Check the port in kafka.bootstrap.servers and that a broker listens there "
                       "(the listener's port and bind address)."),
    "tcp_timeout": Fix((CONNECT,), "Open the route from this host to the broker (firewall, security group, VPC "
                       "peering, proxy): the connection attempt got no answer."),
    "tcp_unreachable": Fix((CONNECT,), "Give this host a route to the broker's network (routing, VPN, VPC peering)."),
    "tcp_some_addresses": Fix((CONNECT,), "Make the broker listen on every address its name resolves to, or remove "
                              "the dead addresses from DNS: clients try them in turn and lose time."),
    "advertised_unresolved": Fix((RESOLVE,), "Set the brokers' advertised.listeners to a host name this host can "
                                 "resolve: clients connect to the addresses Metadata returns, not to "
                                 "kafka.bootstrap.servers."),
    "advertised_unreachable": Fix((CONNECT,), "Set the brokers' advertised.listeners to an address this host can "
                                  "reach (or open the route to it): clients connect to the addresses Metadata "
                                  "returns, not to kafka.bootstrap.servers."),
    # TLS
    "tls_files": Fix((TLS_FILES,), "Put the file the option names on this host (the driver and every executor) and "
                     "make it readable by this process, or point the option at where it is."),
    "not_tls_listener": Fix((TLS_HANDSHAKE,), "Connect to the broker's TLS listener, or set kafka.security.protocol "
                            "to PLAINTEXT (or SASL_PLAINTEXT) if this listener is not encrypted."),
    "listener_wants_tls": Fix((TLS_HANDSHAKE,), "Set kafka.security.protocol to SSL (or SASL_SSL): this listener "
                              "speaks TLS."),
    "tls_handshake_failed": Fix((TLS_HANDSHAKE,), "Allow a TLS version and cipher both sides support "
                                "(kafka.ssl.enabled.protocols, kafka.ssl.cipher.suites and the broker's ssl.* "
                                "settings)."),
    "tls_timeout": Fix((TLS_HANDSHAKE,), "Check that the port is the broker's TLS listener and that nothing between "
                       "this host and the broker holds the connection (a proxy or load balancer)."),
    "tls_untrusted": Fix((TLS_CERTIFICATE,), "Set kafka.ssl.truststore.location (PEM) or kafka.ssl.ca.location to "
                         "the CA that issued the broker's certificate."),
    "tls_expired": Fix((TLS_CERTIFICATE,), "Renew the broker's certificate and reload it on the broker (or correct "
                       "this host's clock if it is the clock that is wrong)."),
    "tls_not_yet_valid": Fix((TLS_CERTIFICATE,), "Correct this host's clock (NTP), or wait until the broker's "
                             "certificate is valid."),
    "tls_expires_soon": Fix((TLS_CERTIFICATE,), "Renew the broker's certificate before it expires: clients refuse "
                            "it from that day on."),
    "tls_verification_off": Fix((TLS_CERTIFICATE,), "Remove kafka.enable.ssl.certificate.verification=false and "
                                "trust the brokers' CA instead: anyone on the network path can impersonate them."),
    "tls_hostname_mismatch": Fix((TLS_HOSTNAME,), "Connect with a host name the certificate names (its "
                                 "subjectAltName), or reissue the certificate for the names in "
                                 "kafka.bootstrap.servers and advertised.listeners."),
    "tls_hostname_unchecked": Fix((TLS_HOSTNAME,), "Set kafka.ssl.endpoint.identification.algorithm=https once the "
                                  "certificates name the brokers' hosts: without it any certificate of the CA "
                                  "passes."),
    "tls_client_certificate_required": Fix((TLS_CLIENT_CERTIFICATE,), "Configure the client certificate the "
                                           "broker requires: kafka.ssl.keystore.location (PEM with the key), or "
                                           "kafka.ssl.certificate.location and kafka.ssl.key.location."),
    "tls_client_certificate_rejected": Fix((TLS_CLIENT_CERTIFICATE,), "Use a client certificate issued by a CA in "
                                           "the broker's ssl.truststore, and not expired."),
    # SASL logins on this host
    "sasl_login_missing": Fix((SASL_LOGIN,), "Make what the login needs present on this host (the driver and every "
                              "executor): the file, module or package the message names."),
    "oauth_client_refused": Fix((SASL_LOGIN,), "Correct the client id and secret (clientId and clientSecret in "
                                "kafka.sasl.jaas.config): the identity provider refused them."),
    "oauth_endpoint_unreachable": Fix((SASL_LOGIN,), "Make the token endpoint (kafka.sasl.oauthbearer.token."
                                      "endpoint.url) reachable from this host, or correct its URL."),
    "oauth_endpoint_tls": Fix((SASL_LOGIN,), "Trust the token endpoint's CA (kafka.ssl.truststore.location, or ssl.* "
                              "options in the JAAS line)."),
    "oauth_token_failed": Fix((SASL_LOGIN,), "Fix the token source named in the message (its answer, or the Python "
                              "provider's error)."),
    "oauth_token_expired": Fix((SASL_LOGIN,), "Make the token source hand out tokens that are not expired (and check "
                               "this host's clock)."),
    "kerberos_no_key_in_keytab": Fix(_KERBEROS, "Export a keytab holding the principal's key (klist -kt <keytab> "
                                     "lists what it holds) and make principal= in the JAAS line name it."),
    "kerberos_wrong_key": Fix(_KERBEROS, "Export the keytab again: the principal's key changed after this one was "
                              "exported."),
    "kerberos_unknown_principal": Fix(_KERBEROS, "Correct the principal (name and realm) in the JAAS line, or create "
                                      "it in the KDC."),
    "kerberos_kdc_unreachable": Fix(_KERBEROS, "Make the realm's KDC reachable from this host (the kdc = lines of "
                                    "the krb5 config, firewall, UDP and TCP port 88)."),
    "kerberos_clock_skew": Fix(_KERBEROS, "Synchronise the clocks of this host, the KDC and the brokers (NTP)."),
    "kerberos_unknown_service": Fix((SASL_AUTHENTICATE,), "Make the host clients connect to (bootstrap servers, "
                                    "advertised listeners) the host in the brokers' principals, and check "
                                    "kafka.sasl.kerberos.service.name."),
    "kerberos_no_ticket": Fix(_KERBEROS, "Run kinit (or keep the ticket cache renewed) for the principal, or log in "
                              "from a keytab (useKeyTab=true)."),
    "kerberos_no_realm": Fix(_KERBEROS, "Give the krb5 config of this host the realm's KDCs and default_realm "
                             "(KRB5_CONFIG or /etc/krb5.conf)."),
    "kerberos_failed": Fix(_KERBEROS, "Look up the principal in the KDC's log: Kerberos refused for the reason the "
                           "detail quotes."),
    # SASL with the broker
    "sasl_mechanism_not_offered": Fix((SASL_MECHANISMS,), "Set kafka.sasl.mechanism to one the listener offers, or "
                                      "enable this one on the broker (sasl.enabled.mechanisms of the listener)."),
    "not_sasl_listener": Fix((SASL_MECHANISMS,), "Connect to the broker's SASL listener, or set "
                             "kafka.security.protocol to PLAINTEXT (or SSL) for this listener."),
    "listener_wants_sasl": Fix((SASL_MECHANISMS,), "Set kafka.security.protocol to SASL_PLAINTEXT (or SASL_SSL), "
                               "kafka.sasl.mechanism to one the listener offers, and its login."),
    "sasl_credentials_refused": Fix((SASL_AUTHENTICATE,), "Correct the user name and password (kafka.sasl.jaas."
                                    "config), and check the user exists for this mechanism on the brokers "
                                    "(kafka-configs --alter --add-config 'SCRAM-SHA-512=[password=...]' for SCRAM)."),
    "oauth_token_refused": Fix((SASL_AUTHENTICATE,), "Ask for a token the broker accepts: its issuer, audience, "
                               "scope and signing key must match the listener's sasl.oauthbearer.* settings."),
    "sasl_failed": Fix((SASL_AUTHENTICATE,), "Read the broker's reason in the detail and the broker's log for the "
                       "listener's SASL settings."),
    # the broker's APIs and metadata
    "api_versions_failed": Fix((API_VERSIONS,), "Check that this is a Kafka listener for "
                               "kafka.security.protocol (a TLS listener needs SSL or SASL_SSL)."),
    "api_missing": Fix((API_VERSIONS,), "Upgrade the brokers: kwire needs these APIs at the versions named "
                       "(Kafka 2.1 or later)."),
    "api_optional_missing": Fix((API_VERSIONS,), "Upgrade the brokers if you need the features named; reads and "
                                "writes work without them."),
    "metadata_failed": Fix((METADATA,), "Read the broker's error in the detail: the principal may need DESCRIBE on "
                           "the cluster, or the listener a SASL login."),
    # topics
    "topic_missing": Fix((TOPIC,), "Create the topic, or correct its name in the options."),
    "pattern_matches_nothing": Fix((TOPIC,), "Correct subscribePattern (it must match whole topic names), or create "
                                   "a topic it matches."),
    "partition_missing": Fix((TOPIC,), "Name partitions the topic has in assign."),
    "partition_no_leader": Fix((TOPIC,), "Bring the partition's replicas back (their brokers are down), or wait for a "
                               "leader election: reads and writes of it wait meanwhile."),
    "leader_unreachable": Fix((TOPIC,), "Fix the failed connection steps of the leaders named (their rows above): "
                              "reads and writes of their partitions go to them, not to the bootstrap servers."),
    "topic_describe_denied": Fix((TOPIC, TOPIC_ACCESS), "Grant the principal DESCRIBE (and READ or WRITE) on the "
                                 "topic: kafka-acls --add --allow-principal User:<name> --operation Describe "
                                 "--topic <topic>."),
    "topic_read_denied": Fix((TOPIC_ACCESS,), "Grant the principal READ on the topic: kafka-acls --add "
                             "--allow-principal User:<name> --operation Read --topic <topic>."),
    "topic_write_denied": Fix((TOPIC_ACCESS,), "Grant the principal WRITE on the topic: kafka-acls --add "
                              "--allow-principal User:<name> --operation Write --topic <topic>."),
    # schema registry
    "registry_unreachable": Fix((REGISTRY, REGISTRY_AUTH), "Correct schema.registry.url, or make the registry "
                                "reachable from this host (it may sit behind another network than the brokers)."),
    "registry_tls": Fix((REGISTRY_AUTH,), "Trust the registry's CA (schema.registry.ssl.ca.location) or connect with "
                        "a host name its certificate names."),
    "registry_credentials_refused": Fix((REGISTRY_AUTH,), "Correct the registry credentials "
                                        "(schema.registry.basic.auth.user.info, or the bearer token options): the "
                                        "registry refused them."),
    "registry_denied": Fix((REGISTRY_AUTH, REGISTRY_SUBJECT), "Grant the registry principal read access to the "
                           "subjects (the registry's ACLs or RBAC)."),
    "registry_failed": Fix((REGISTRY_AUTH, REGISTRY_SUBJECT), "Read the registry's answer in the detail."),
    "subject_missing": Fix((REGISTRY_SUBJECT,), "Register the value schema under the subject (a producer with "
                           "auto.register.schemas does), or correct the topic name or subject name strategy."),
    # throughput
    "throughput_failed": Fix((THROUGHPUT,), "Read the error in the detail: the fetch from the leader failed although "
                             "the earlier steps passed."),
    # the check itself
    "check_error": Fix(tuple(STEPS), "Report the detail to spark-kwire's maintainers: the check met something it "
                       "did not foresee (the other steps still ran)."),
}


def fix_for(kind: str) -> str:
    """The fix sentence of a kind; a kind the table does not hold is a bug (KeyError), never a silent row."""
    return FIXES[kind].sentence
