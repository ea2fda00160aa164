"""Ed25519 provenance signatures over what a memory asserts.

The signed message is ``attestor-memory-v2 | tenant | namespace | id | agent_id |
t_created | digest(content)`` (stored as ``ed25519v2:<base64>``), so a signed row moved
to another tenant or namespace, in the file or by an export rewritten to name another
tenant, no longer verifies. A signature made before (``ed25519:``) is over
``id | agent_id | t_created | digest(content)`` and still verifies over that. The
digest is recomputed from the content on every sign and verify (never read from the
stored ``content_hash`` column): a content edit made after signing, even one
that also rewrote the stored hash, fails verification. The digest is keyed by the
row's salt (``models.content_digest``: ``hmac1:<hex>``), so a signature that outlives
its row (copied into an export, or another tenant's import record) cannot confirm a
guess of the erased words with the public key; a row written before salts is signed
over the plain SHA-256 hex, as it always was.

The private key lives in a PEM file that only its owner may read. A key file
readable by group or others is refused, because anyone who can read it can
forge provenance for every memory.

The same key signs every audit entry the service appends: the message is
``attestor-audit-v1|tenant|seq|hash`` (``audit_message``), and the hash already
covers the entry's fields and its predecessor's hash, so one signature commits to
the whole chain up to that entry. Verification needs only the public key.
An export's chain head (``attestor-export-v2|tenant|entries|head|exported_at|digests``,
``export_message``) is signed too, so a file cut at its newest entries, whose remaining
entries still carry their signatures, no longer verifies, nor one whose episodes, entities,
relations or quota (recorded by no audit entry) were edited.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from attestor_arango.clock import to_us
from attestor_arango.config import SigningSettings, default_data_dir
from attestor_arango.errors import ValidationError
from attestor_arango.models import AuditEntry, Memory, content_digest

PREFIX = "ed25519:"  # audit entries, and memories signed before v2
PREFIX_V2 = "ed25519v2:"  # memories: the message names tenant and namespace
KEY_FILENAME = "signing_key.pem"


class KeyFileError(ValidationError):
    """The signing key file is unsafe or unreadable; the message says how to fix it."""

    code = "signing_key_invalid"


def signed_message(memory: Memory, *, version: int = 2) -> bytes:
    """The exact bytes signed for a memory; content hashed here, not taken from the row.
    ``version=1``: the message of a signature made before v2 (no tenant, no namespace)."""
    digest = content_digest(memory.content, memory.salt)
    text = f"{memory.id}|{memory.provenance.agent_id}|{to_us(memory.t_created)}|{digest}"
    if version == 2:
        text = f"attestor-memory-v2|{memory.tenant}|{memory.namespace}|{text}"
    return text.encode("utf-8")


def audit_message(tenant: str, seq: int, entry_hash: str) -> bytes:
    """The exact bytes signed for an audit entry (domain-separated from memory messages)."""
    return f"attestor-audit-v1|{tenant}|{seq}|{entry_hash}".encode()


def key_id_of(public_key: Ed25519PublicKey) -> str:
    """First 16 hex chars of sha256(raw public key), as ``Signer.key_id`` names a key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def export_message(
    tenant: str, entries: int, head: str | None, exported_at: str, sections: dict[str, str]
) -> bytes:
    """The exact bytes signed for an export's chain head: its entry count and last hash,
    and the digest of each section no audit entry records (``import_source.SECTIONS``)."""
    digests = "|".join(f"{name}={sections[name]}" for name in sorted(sections))
    return f"attestor-export-v2|{tenant}|{entries}|{head or ''}|{exported_at}|{digests}".encode()


class Signer:
    """Signs memories on write and verifies them later.

    Construct with a key, or use ``Signer.from_file`` / ``Signer.from_settings``.
    """

    def __init__(self, private_key: Ed25519PrivateKey, key_path: Path | None = None) -> None:
        self._key = private_key
        self.public_key: Ed25519PublicKey = private_key.public_key()
        self.key_path = key_path

    @property
    def key_id(self) -> str:
        """First 16 hex chars of sha256(raw public key): names the key in reports."""
        return key_id_of(self.public_key)

    def public_pem(self) -> str:
        """The public key (SubjectPublicKeyInfo PEM): all a third party needs to verify."""
        return self.public_key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def sign(self, memory: Memory) -> str:
        raw = self._key.sign(signed_message(memory))
        return PREFIX_V2 + base64.b64encode(raw).decode("ascii")

    def verify(self, memory: Memory) -> bool:
        """True only for a signature made by this key over the memory as it is now."""
        return _verify(self.public_key, memory)

    def sign_audit(self, tenant: str, seq: int, entry_hash: str) -> str:
        """The signature stored with an audit entry (``AuditEntry.signature``)."""
        raw = self._key.sign(audit_message(tenant, seq, entry_hash))
        return PREFIX + base64.b64encode(raw).decode("ascii")

    def sign_export(self, message: bytes) -> str:
        """The signature of an export's chain head (``export_message``)."""
        return PREFIX + base64.b64encode(self._key.sign(message)).decode("ascii")

    def verify_audit(self, entry: AuditEntry) -> bool:
        """True only for an entry signed by this key as it is now (public key only)."""
        return _verify_audit(self.public_key, entry)

    @classmethod
    def generate(cls) -> Signer:
        """A fresh in-memory key (tests, or before ``save``)."""
        return cls(Ed25519PrivateKey.generate())

    def save(self, path: str | Path) -> Path:
        """Writes the private key as PEM with mode 0600, refusing to overwrite a file."""
        target = Path(path).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        pem = self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise KeyFileError(
                f"signing key file {target} already exists; load it instead of generating one"
            ) from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        self.key_path = target
        return target

    @classmethod
    def from_file(cls, path: str | Path, *, create: bool = False) -> Signer:
        """Loads a PEM Ed25519 key; with ``create`` a missing file is generated (mode 0600)."""
        target = Path(path).expanduser()
        if not target.exists():
            if not create:
                raise KeyFileError(
                    f"signing key file {target} does not exist; create one with "
                    "Signer.generate().save(path) or enable signing without key_path"
                )
            signer = cls.generate()
            signer.save(target)
            return signer
        check_key_permissions(target)
        try:
            key = serialization.load_pem_private_key(target.read_bytes(), password=None)
        except (ValueError, TypeError) as exc:
            raise KeyFileError(
                f"signing key file {target} is not an unencrypted PEM private key: {exc}"
            ) from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise KeyFileError(
                f"signing key file {target} holds a {type(key).__name__}, not an Ed25519 key"
            )
        return cls(key, target)

    @classmethod
    def from_settings(cls, settings: SigningSettings, data_dir: Path | None) -> Signer | None:
        """None when signing is off; else the configured key (which must exist), or one
        generated on first use in ``data_dir`` (the user's data directory by default)."""
        if not settings.enabled:
            return None
        if settings.key_path:
            return cls.from_file(settings.key_path, create=False)
        return cls.from_file((data_dir or default_data_dir()) / KEY_FILENAME, create=True)


def _verify(public_key: Ed25519PublicKey, memory: Memory) -> bool:
    sig = memory.signature
    if not sig:
        return False
    version, prefix = (2, PREFIX_V2) if sig.startswith(PREFIX_V2) else (1, PREFIX)
    if not sig.startswith(prefix):
        return False
    try:
        raw = base64.b64decode(sig[len(prefix) :], validate=True)
        public_key.verify(raw, signed_message(memory, version=version))
    except (InvalidSignature, ValueError):
        return False
    return True


def _verify_audit(public_key: Ed25519PublicKey, entry: AuditEntry) -> bool:
    message = audit_message(entry.tenant, entry.seq, entry.hash)
    return verify_bytes(public_key, entry.signature, message)


def verify_bytes(public_key: Ed25519PublicKey, sig: object, message: bytes) -> bool:
    """True only for an ``ed25519:`` signature ``sig`` by ``public_key`` over ``message``."""
    if not isinstance(sig, str) or not sig.startswith(PREFIX):
        return False
    try:
        raw = base64.b64decode(sig[len(PREFIX) :], validate=True)
        public_key.verify(raw, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def load_public_key(public_pem: str) -> Ed25519PublicKey:
    """An Ed25519 public key from PEM; raises ``KeyFileError`` for anything else."""
    try:
        key = serialization.load_pem_public_key(public_pem.encode("ascii"))
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise KeyFileError(f"not a PEM public key: {exc}") from exc
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"the public key is a {type(key).__name__}, not Ed25519")
    return key


def verify_with_public_key(public_pem: str, memory: Memory) -> bool:
    """Verification without the private key, e.g. by an auditor holding an export."""
    return _verify(load_public_key(public_pem), memory)


def verify_audit_with_public_key(public_pem: str, entry: AuditEntry) -> bool:
    """An audit entry's signature checked with the public key alone (e.g. of an export)."""
    return _verify_audit(load_public_key(public_pem), entry)


def check_key_permissions(path: Path) -> None:
    """Refuses a key file that group or others may read or write (POSIX only)."""
    if os.name != "posix":
        return
    mode = path.stat().st_mode
    if not stat.S_ISREG(mode):
        raise KeyFileError(f"signing key path {path} is not a regular file")
    loose = mode & (stat.S_IRWXG | stat.S_IRWXO)
    if loose:
        raise KeyFileError(
            f"signing key file {path} has mode {stat.S_IMODE(mode):04o}, so group or other users "
            f"can access it; run `chmod 600 {path}` and rotate the key if it may have leaked"
        )
