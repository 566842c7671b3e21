"""go-plugin AutoMTLS for a Python plugin, with the standard library only.

The host passes its one-time client certificate in PLUGIN_CLIENT_CERT and expects the plugin to
serve TLS with a fresh self-signed certificate for "localhost", sent back base64 (raw, no
padding) DER in the handshake line. Python's ssl module cannot make a certificate, and Debian's
python3-grpcio brings no crypto library, so this file builds one: an ECDSA P-256 key and an
X.509 v3 certificate signed with it. Nothing here needs to be fast or constant-time beyond what
a one-time key for a loopback connection to the parent process warrants.
"""

import base64
import datetime
import hashlib
import secrets

# NIST P-256.
_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_A = _P - 3
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
      0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)


def _jacobian_double(p):
    x, y, z = p
    if y == 0:
        return (0, 0, 0)
    ysq = y * y % _P
    s = 4 * x * ysq % _P
    m = (3 * x * x + _A * pow(z, 4, _P)) % _P
    nx = (m * m - 2 * s) % _P
    ny = (m * (s - nx) - 8 * ysq * ysq) % _P
    nz = 2 * y * z % _P
    return (nx, ny, nz)


def _jacobian_add(p, q):
    if p[2] == 0:
        return q
    if q[2] == 0:
        return p
    u1 = p[0] * q[2] * q[2] % _P
    u2 = q[0] * p[2] * p[2] % _P
    s1 = p[1] * pow(q[2], 3, _P) % _P
    s2 = q[1] * pow(p[2], 3, _P) % _P
    if u1 == u2:
        return _jacobian_double(p) if s1 == s2 else (0, 0, 0)
    h = u2 - u1
    r = s2 - s1
    h2 = h * h % _P
    h3 = h * h2 % _P
    u1h2 = u1 * h2 % _P
    nx = (r * r - h3 - 2 * u1h2) % _P
    ny = (r * (u1h2 - nx) - s1 * h3) % _P
    nz = h * p[2] * q[2] % _P
    return (nx, ny, nz)


def _multiply(k, point=_G):
    result = (0, 0, 0)
    addend = (point[0], point[1], 1)
    while k:
        if k & 1:
            result = _jacobian_add(result, addend)
        addend = _jacobian_double(addend)
        k >>= 1
    x, y, z = result
    zinv = pow(z, -1, _P)
    return (x * zinv * zinv % _P, y * zinv * zinv * zinv % _P)


def _sign(d, message):
    e = int.from_bytes(hashlib.sha256(message).digest(), "big")
    while True:
        k = secrets.randbelow(_N - 1) + 1
        r = _multiply(k)[0] % _N
        if r == 0:
            continue
        s = pow(k, -1, _N) * (e + r * d) % _N
        if s != 0:
            return r, s


# DER encoding, just what a certificate needs.
def _tlv(tag, body):
    n = len(body)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + body


def _seq(*items):
    return _tlv(0x30, b"".join(items))


def _int(v):
    raw = v.to_bytes(v.bit_length() // 8 + 1, "big")  # leading 0 keeps it positive
    while len(raw) > 1 and raw[0] == 0 and raw[1] < 0x80:
        raw = raw[1:]
    return _tlv(0x02, raw)


def _oid(dotted):
    parts = [int(p) for p in dotted.split(".")]
    body = bytes([40 * parts[0] + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        p >>= 7
        while p:
            chunk.append(0x80 | (p & 0x7F))
            p >>= 7
        body += bytes(reversed(chunk))
    return _tlv(0x06, body)


def _bits(raw, unused=0):
    return _tlv(0x03, bytes([unused]) + raw)


def _time(t):
    return _tlv(0x17, t.strftime("%y%m%d%H%M%SZ").encode())


def _pem(kind, der):
    b64 = base64.b64encode(der).decode()
    lines = [b64[i:i + 64] for i in range(0, len(b64), 64)]
    return ("-----BEGIN %s-----\n%s\n-----END %s-----\n" % (kind, "\n".join(lines), kind)).encode()


_ECDSA_SHA256 = _seq(_oid("1.2.840.10045.4.3.2"))
_P256 = _oid("1.2.840.10045.3.1.7")


def server_certificate():
    """Returns (cert_pem, key_pem, cert_der) for a fresh self-signed "localhost" certificate.

    Like go-plugin's own, it is its own CA (the host pins it as the only root) and is valid for
    server and client auth.
    """
    d = secrets.randbelow(_N - 1) + 1
    x, y = _multiply(d)
    public = b"\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big")
    name = _seq(_tlv(0x31, _seq(_oid("2.5.4.3"), _tlv(0x0C, b"localhost"))))
    now = datetime.datetime.now(datetime.timezone.utc)
    extensions = _tlv(0xA3, _seq(
        _seq(_oid("2.5.29.19"), _tlv(0x01, b"\xff"), _tlv(0x04, _seq(_tlv(0x01, b"\xff")))),
        _seq(_oid("2.5.29.15"), _tlv(0x01, b"\xff"), _tlv(0x04, _bits(b"\x84", 2))),
        _seq(_oid("2.5.29.37"), _tlv(0x04, _seq(_oid("1.3.6.1.5.5.7.3.1"), _oid("1.3.6.1.5.5.7.3.2")))),
        _seq(_oid("2.5.29.17"), _tlv(0x04, _seq(_tlv(0x82, b"localhost")))),
    ))
    tbs = _seq(
        _tlv(0xA0, _int(2)),
        _int(secrets.randbits(127) | 1),
        _ECDSA_SHA256,
        name,
        _seq(_time(now - datetime.timedelta(seconds=30)), _time(now + datetime.timedelta(days=1))),
        name,
        _seq(_seq(_oid("1.2.840.10045.2.1"), _P256), _bits(public)),
        extensions,
    )
    r, s = _sign(d, tbs)
    cert = _seq(tbs, _ECDSA_SHA256, _bits(_seq(_int(r), _int(s))))
    key = _seq(_int(1), _tlv(0x04, d.to_bytes(32, "big")), _tlv(0xA0, _P256), _tlv(0xA1, _bits(public)))
    return _pem("CERTIFICATE", cert), _pem("EC PRIVATE KEY", key), cert


def handshake_cert(cert_der):
    """The certificate as go-plugin's handshake line carries it."""
    return base64.b64encode(cert_der).decode().rstrip("=")
