"""User name and password for PLAIN and SCRAM: from ``sasl.jaas.config`` or ``sasl.username`` + ``sasl.password``."""

from __future__ import annotations

from dataclasses import dataclass

from spark_kwire.client.config import ClientConfig, Secret
from spark_kwire.client.errors import ConfigError
from spark_kwire.client.auth.jaas import parse_jaas_config
from spark_kwire.client.auth.sasl.mechanism import SaslMechanism

__all__ = ["UserCredentials", "UserPasswordMechanism", "user_credentials"]


@dataclass(frozen=True)
class UserCredentials:
    username: str
    password: Secret
    extensions: dict  # SCRAM extensions (Kafka's tokenauth=true for delegation tokens)
    source: str  # the option they came from


def user_credentials(config: ClientConfig) -> UserCredentials:
    """The credentials PLAIN and SCRAM send; a :class:`ConfigError` names what is missing."""
    extensions: dict[str, str] = {}
    if config.sasl_jaas_config is not None and config.sasl_jaas_config.reveal().strip():
        jaas = parse_jaas_config(config.sasl_jaas_config)
        username = jaas.get("username")
        pw = jaas.get("password")
        if (jaas.get("tokenauth") or "").lower() == "true":
            extensions["tokenauth"] = "true"
        if username is not None and pw is not None:
            return UserCredentials(username, Secret(pw), extensions, "sasl.jaas.config")
        if config.sasl_username and config.sasl_password is not None:
            return UserCredentials(config.sasl_username, config.sasl_password, extensions, "sasl.username")
        missing = "username" if username is None else "password"
        raise ConfigError("sasl.jaas.config", config.sasl_jaas_config,
                          reason=f"the login module has no {missing}=\"...\" option (needed for "
                                 f"{config.sasl_mechanism})")
    if config.sasl_username is not None or config.sasl_password is not None:
        if not config.sasl_username:
            raise ConfigError("sasl.username", config.sasl_username,
                              reason="sasl.password is set but sasl.username is not")
        if config.sasl_password is None:
            raise ConfigError("sasl.password", None, reason="sasl.username is set but sasl.password is not")
        return UserCredentials(config.sasl_username, config.sasl_password, extensions, "sasl.username")
    raise ConfigError("sasl.jaas.config", None,
                      reason=f"security.protocol={config.security_protocol} needs credentials: set "
                             f"sasl.jaas.config (e.g. org.apache.kafka.common.security.scram.ScramLoginModule "
                             f"required username=\"...\" password=\"...\";) or sasl.username and sasl.password")


class UserPasswordMechanism(SaslMechanism):
    """A mechanism that authenticates a user name with a password (PLAIN, SCRAM): who it is, for messages."""

    _credentials: UserCredentials

    @property
    def principal(self) -> str:
        return self._credentials.username

    @property
    def who(self) -> str:
        if self._credentials.extensions.get("tokenauth") == "true":  # the user name is a delegation token's id
            return f"delegation token {self.principal!r}"
        return f"user {self.principal!r}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}, user={self.principal!r})"
