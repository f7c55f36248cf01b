"""What PLAIN and SCRAM have in common: a user name and a password, from a login of the settings (a user's, or a
delegation token's for SCRAM: its id and HMAC, sent with the SCRAM extension ``tokenauth=true``)."""

from __future__ import annotations

from spark_kwire.client.auth.sasl.mechanism import SaslMechanism
from spark_kwire.client.settings.logins import DelegationTokenLogin, PlainLogin, ScramLogin
from spark_kwire.client.settings.secret import Secret

__all__ = ["UserPasswordMechanism"]


class UserPasswordMechanism(SaslMechanism):
    """A mechanism that authenticates a user name with a password (PLAIN, SCRAM)."""

    def __init__(self, login: PlainLogin | ScramLogin | DelegationTokenLogin) -> None:
        self.login = login
        self.name = self.label = login.mechanism

    @property
    def token(self) -> bool:
        return isinstance(self.login, DelegationTokenLogin)

    @property
    def principal(self) -> str:
        return self.login.username  # a delegation token login: the token's id

    @property
    def password(self) -> Secret:
        return self.login.password  # a delegation token login: the token's HMAC

    @property
    def extensions(self) -> dict[str, str]:
        return {"tokenauth": "true"} if self.token else {}

    @property
    def who(self) -> str:
        if self.token:  # the user name is a delegation token's id
            return f"delegation token {self.principal!r}"
        return f"user {self.principal!r}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name}, user={self.principal!r})"
