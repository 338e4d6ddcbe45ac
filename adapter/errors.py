"""The one error tree of the sidecar.

Every refusal the sidecar can give is one of these classes; each has a stable ``code`` that
goes on the wire (its meaning, and whether the ``seq`` is used up: docs/protocol.md, "The
ack"), reads as a sentence, and carries what the ack needs (``path``, ``rule``)::

    SidecarError                      code
    ├── InvalidMessage                invalid_message   (schema; ``path`` = JSON pointer)
    ├── TooLarge                      too_large
    ├── OutOfOrder                    out_of_order      (a gap in ``seq``)
    ├── RateLimited                   rate_limited
    ├── Superseded                    superseded        (the sender is no longer the world's writer)
    ├── TooManyCombats                too_many_combats
    ├── TooManyCombatants             too_many_combatants
    ├── UnknownCombat                 unknown_combat
    ├── UnknownCombatant              unknown_combatant
    ├── UnknownPrompt                 unknown_prompt
    ├── NotPermitted                  not_permitted
    ├── RuleViolation                 rule_violation    (``rule`` = the rule id)
    ├── StoreUnavailable              store_unavailable (the database went away; not stored)
    │   └── ServedElsewhere           served_elsewhere  (another process owns the world; hosted)
    └── InternalError                 internal_error    (a bug; the message is refused)

    ConnectRefused (auth_failed, unknown_ruleset, protocol_mismatch, invalid_auth; hosted
    mode: served_elsewhere, store_unavailable)
    is raised while a connection is being accepted; it never becomes an ack.

The sidecar itself may refuse to start; those errors never reach a client either, their
message (what is wrong, what to do) goes to stderr and the command exits non-zero::

    StartupError
    ├── ConfigError                   a flag or environment value it cannot start with
    ├── StoreUnusable                 the database must not be used
    │   ├── StoreInUse                another sidecar process serves it
    │   ├── StoreReadOnly             it (or its folder) cannot be written
    │   └── StoreCorrupt              it cannot be trusted
    └── CannotListen                  the address or port cannot be bound

Errors become acks in one place (:func:`SidecarError.to_wire`); a traceback never reaches a
client. An engine function that raises one of these leaves the game state as it was.
"""

from __future__ import annotations

from typing import Any

#: a field of a message: its name, or the names and indexes leading into it
Field = str | tuple[str | int, ...]


class SidecarError(Exception):
    """A message was refused; nothing it asked for happened."""

    code = "error"

    def __init__(
        self, message: str, *, path: str | None = None, rule: str | None = None,
        field: Field | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.rule = rule
        #: the field of the message the refusal is about, as the engine names it (a field, or
        #: names and indexes into it); the pipeline sets ``path`` from it (adapter.pipeline)
        self.field = field

    def to_wire(self) -> dict[str, Any]:
        """The ``error`` object of a refusing ack (``path`` and ``rule`` when set)."""
        return _wire(code=self.code, message=self.message, path=self.path, rule=self.rule)


class InvalidMessage(SidecarError):
    code = "invalid_message"


class TooLarge(SidecarError):
    code = "too_large"


class OutOfOrder(SidecarError):
    code = "out_of_order"


class RateLimited(SidecarError):
    code = "rate_limited"


class Superseded(SidecarError):
    """The connection is no longer its world's writer (another took over); nothing is stored
    and its ``seq`` is not used up: it belongs to the new writer."""

    code = "superseded"


class TooManyCombats(SidecarError):
    code = "too_many_combats"


class TooManyCombatants(SidecarError):
    code = "too_many_combatants"


class UnknownCombat(SidecarError):
    code = "unknown_combat"


class UnknownCombatant(SidecarError):
    code = "unknown_combatant"


class UnknownPrompt(SidecarError):
    code = "unknown_prompt"


class NotPermitted(SidecarError):
    code = "not_permitted"


class RuleViolation(SidecarError):
    code = "rule_violation"


class StoreUnavailable(SidecarError):
    """The database cannot store the message: its file was deleted or replaced while serving
    (nothing is stored until the sidecar restarts), or SQLite failed to write it (e.g. the
    disk is full). The message uses up no seq; the module resends it."""

    code = "store_unavailable"


class ServedElsewhere(StoreUnavailable):
    """Hosted mode: another sidecar process holds the world's lease (and may have stored this
    seq); nothing was stored here. At connect it refuses the connection with the same code:
    the module retries, and reaches the owner (or this process once the owner is gone)."""

    code = "served_elsewhere"


class InternalError(SidecarError):
    code = "internal_error"


class ConnectRefused(Exception):
    """A connection was refused before it was accepted; ``code`` is the reason code."""

    def __init__(self, code: str, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path

    def to_wire(self) -> dict[str, Any]:
        return _wire(code=self.code, message=self.message, path=self.path)


def _wire(**fields: str | None) -> dict[str, Any]:
    """The fields that are set, in their order."""
    return {name: value for name, value in fields.items() if value is not None}


# ---------------------------------------------------------------- the sidecar does not start


class StartupError(Exception):
    """The sidecar does not start; the message says why and what to do."""


class ConfigError(StartupError):
    """A setting has a value the sidecar cannot start with."""


class StoreUnusable(StartupError):
    """The sidecar must not start on this database (the message says why and what to do)."""


class StoreInUse(StoreUnusable):
    """Another sidecar process serves this database."""


class StoreReadOnly(StoreUnusable):
    """The database (or its folder) cannot be written."""


class StoreCorrupt(StoreUnusable):
    """The database file cannot be trusted; the sidecar must not start on it."""


class CannotListen(StartupError):
    """The address or port cannot be bound (in use, or not an address of this machine)."""
