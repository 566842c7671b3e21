
// go-plugin AutoMTLS for a Node.js plugin. The host passes its one-time client certificate in
// PLUGIN_CLIENT_CERT and expects the plugin to serve TLS with a fresh self-signed certificate
// for "localhost", sent back as base64 (raw, no padding) DER in the handshake line. Node's crypto
// makes keys and signatures but not certificates, so the few DER structures are built here.

import crypto from 'node:crypto';

function tlv(tag, body) {
  const n = body.length;
  let len;
  if (n < 0x80) {
    len = Buffer.from([n]);
  } else {
    const bytes = [];
    for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
    len = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), len, body]);
}

const seq = (...items) => tlv(0x30, Buffer.concat(items));

function int(buf) { // unsigned big-endian bytes -> DER INTEGER
  let b = buf;
  while (b.length > 1 && b[0] === 0 && b[1] < 0x80) b = b.subarray(1);
  if (b[0] & 0x80) b = Buffer.concat([Buffer.from([0]), b]);
  return tlv(0x02, b);
}

function oid(dotted) {
  const p = dotted.split('.').map(Number);
  const out = [40 * p[0] + p[1]];
  for (const v of p.slice(2)) {
    const chunk = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift(0x80 | (x & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

const bits = (buf, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), buf]));

function utcTime(d) {
  const p = (n) => String(n).padStart(2, '0');
  const s = p(d.getUTCFullYear() % 100) + p(d.getUTCMonth() + 1) + p(d.getUTCDate()) +
    p(d.getUTCHours()) + p(d.getUTCMinutes()) + p(d.getUTCSeconds()) + 'Z';
  return tlv(0x17, Buffer.from(s));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const TRUE = tlv(0x01, Buffer.from([0xff]));

// serverCertificate returns {certPem, keyPem, certDer} for a self-signed "localhost" CA
// certificate valid for server and client auth, like go-plugin's own.
function serverCertificate() {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const name = seq(tlv(0x31, seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from('localhost')))));
  const now = Date.now();
  const extensions = tlv(0xa3, seq(
    seq(oid('2.5.29.19'), TRUE, tlv(0x04, seq(TRUE))),
    seq(oid('2.5.29.15'), TRUE, tlv(0x04, bits(Buffer.from([0x84]), 2))),
    seq(oid('2.5.29.37'), tlv(0x04, seq(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2')))),
    seq(oid('2.5.29.17'), tlv(0x04, seq(tlv(0x82, Buffer.from('localhost'))))),
  ));
  const serial = crypto.randomBytes(16);
  serial[0] &= 0x7f;
  const tbs = seq(
    tlv(0xa0, int(Buffer.from([2]))),
    int(serial),
    ECDSA_SHA256,
    name,
    seq(utcTime(new Date(now - 30e3)), utcTime(new Date(now + 86400e3))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = crypto.sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const certDer = seq(tbs, ECDSA_SHA256, bits(signature));
  const b64 = certDer.toString('base64').match(/.{1,64}/g).join('\n');
  return {
    certPem: Buffer.from(`-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`),
    keyPem: Buffer.from(privateKey.export({ type: 'sec1', format: 'pem' })),
    certDer,
  };
}

// handshakeCert is the certificate as go-plugin's handshake line carries it.
const handshakeCert = (der) => der.toString('base64').replace(/=+$/, '');

export { serverCertificate, handshakeCert };
