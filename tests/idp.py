"""An identity provider for the sign-in tests: signing keys made in the test (RSA and EC), its
JWKS served over loopback HTTP by a thread (rotated, taken down, its fetches counted), and
tokens signed, forged and tampered with."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

ISSUER = "https://idp.example.test/realms/excerpt"
AUDIENCE = "excerpt-api"


@dataclass
class SigningKey:
    """One key of the issuer: its kid, algorithm and private key."""

    kid: str
    alg: str
    private: Any

    @classmethod
    def rsa(cls, kid: str) -> SigningKey:
        return cls(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))

    @classmethod
    def ec(cls, kid: str) -> SigningKey:
        return cls(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))

    def jwk(self) -> dict[str, Any]:
        algorithm = jwt.algorithms.RSAAlgorithm if self.alg.startswith("RS") \
            else jwt.algorithms.ECAlgorithm
        data: dict[str, Any] = json.loads(algorithm.to_jwk(self.private.public_key()))
        return {**data, "kid": self.kid, "use": "sig", "alg": self.alg}

    def public_pem(self) -> bytes:
        return bytes(self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        return jwt.encode(claims, self.private, algorithm=self.alg,
                          headers={"kid": self.kid, **header})


def claims(sub: str = "u-1", **more: Any) -> dict[str, Any]:
    """Valid claims of the issuer for the audience, an hour to live, and ``more``."""
    now = int(time.time())
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "iat": now, "nbf": now - 5,
            "exp": now + 3600, **more}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forged(header: dict[str, Any], body: dict[str, Any], secret: bytes | None) -> str:
    """A token signed by hand: HS256 with ``secret`` (a public key's PEM, in the confusion
    attack), or no signature at all when ``secret`` is None (``alg: none``)."""
    signing = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(body).encode())}"
    if secret is None:
        return signing + "."
    return signing + "." + _b64(hmac.new(secret, signing.encode(), hashlib.sha256).digest())


def tampered(token: str, **changes: Any) -> str:
    """``token`` with its payload edited and its signature kept."""
    head, payload, signature = token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return f"{head}.{_b64(json.dumps({**body, **changes}).encode())}.{signature}"


@dataclass
class Issuer:
    """The JWKS endpoint: ``keys`` served at ``url`` while ``up``; ``fetches`` counted."""

    keys: list[SigningKey]
    up: bool = True
    fetches: int = 0
    url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def document(self) -> bytes | None:
        with self.lock:
            self.fetches += 1
            return json.dumps({"keys": [k.jwk() for k in self.keys]}).encode() \
                if self.up else None


@contextmanager
def serving(issuer: Issuer) -> Iterator[Issuer]:
    """``issuer``'s JWKS on a loopback port (``issuer.url``) while the block runs."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = issuer.document()
            self.send_response(200 if body is not None else 503)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body or b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer.url = f"http://127.0.0.1:{server.server_address[1]}/certs"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
