// A certificate authority made at start-up: kube-sim serves HTTPS with a certificate it signs,
// and tests can ask it for serving certificates for their own webhook servers.
//
// Certificates are assembled in DER by hand (a few dozen lines) and signed with node:crypto:
// ECDSA P-256 keys take a millisecond, and nothing heavy is imported, which keeps start-up far
// under the one-second budget (@peculiar/x509 alone costs ~130 ms to import and needs a
// reflect-metadata polyfill).
import { createHash, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthority extends KeyPairPem {
  /** A serving (and client) certificate for the given DNS names and IP addresses. */
  issue(hosts: string[], commonName?: string): KeyPairPem;
}

// --- DER encoding, only what an X.509 v3 certificate needs ---------------------------------

function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  if (length < 0x80) return Buffer.concat([Buffer.from([tag, length]), content]);
  const lengthBytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) lengthBytes.unshift(rest & 0xff);
  return Buffer.concat([Buffer.from([tag, 0x80 | lengthBytes.length, ...lengthBytes]), content]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 + n, content);
const octetString = (content: Buffer): Buffer => tlv(0x04, content);
const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
const bool = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0]));

function integer(bytes: Buffer): Buffer {
  // DER integers are signed: a leading 1 bit needs a zero byte in front to stay positive.
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const chunk = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function bitString(content: Buffer, unusedBits = 0): Buffer {
  return tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), content]));
}

function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z'; // YYYYMMDDHHMMSSZ
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

const name = (commonName: string): Buffer => sequence(set(sequence(oid('2.5.4.3'), utf8(commonName))));

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [bool(true)] : []), octetString(value));
}

/** keyUsage as a DER BIT STRING: bit 0 is the most significant bit of the first byte. */
function keyUsage(bits: number[]): Buffer {
  let byte = 0;
  for (const bit of bits) byte |= 0x80 >> bit;
  const unused = Math.min(7, Math.max(0, 7 - Math.max(...bits)));
  return bitString(Buffer.from([byte]), unused);
}

function subjectAltNames(hosts: string[]): Buffer {
  return sequence(...hosts.map((host) => (isIP(host) === 4
    ? tlv(0x87, Buffer.from(host.split('.').map(Number)))
    : tlv(0x82, Buffer.from(host, 'ascii')))));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const USAGE = { digitalSignature: 0, keyEncipherment: 2, keyCertSign: 5, cRLSign: 6 };

interface CertificateSpec {
  subject: string;
  issuer: string;
  publicKey: KeyObject;
  signingKey: KeyObject;
  issuerKeyId?: Buffer;
  isCA: boolean;
  hosts: string[];
}

function keyIdentifier(publicKey: KeyObject): Buffer {
  return createHash('sha1').update(publicKey.export({ type: 'spki', format: 'der' })).digest();
}

function buildCertificate(spec: CertificateSpec): string {
  const now = Date.now();
  const ownKeyId = keyIdentifier(spec.publicKey);
  const extensions = [
    extension('2.5.29.19', true, spec.isCA ? sequence(bool(true)) : sequence()),
    extension('2.5.29.15', true, keyUsage(spec.isCA
      ? [USAGE.digitalSignature, USAGE.keyCertSign, USAGE.cRLSign]
      : [USAGE.digitalSignature, USAGE.keyEncipherment])),
    extension('2.5.29.14', false, octetString(ownKeyId)),
  ];
  if (spec.issuerKeyId) extensions.push(extension('2.5.29.35', false, sequence(tlv(0x80, spec.issuerKeyId))));
  if (!spec.isCA) {
    extensions.push(extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2'))));
    extensions.push(extension('2.5.29.17', false, subjectAltNames(spec.hosts)));
  }
  const serial = randomBytes(16);
  // Positive and minimally encoded: a first byte of 0x00 would be padding Go's x509 rejects
  // ("malformed serial number"), one of 0x80 or more a negative number.
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))), // v3
    integer(serial),
    ECDSA_WITH_SHA256,
    name(spec.issuer),
    sequence(time(new Date(now - 60 * 60 * 1000)), time(new Date(now + 10 * 365 * 24 * 60 * 60 * 1000))),
    name(spec.subject),
    spec.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, spec.signingKey);
  const der = sequence(tbs, ECDSA_WITH_SHA256, bitString(signature));
  return toPem('CERTIFICATE', der);
}

function toPem(label: string, der: Buffer): string {
  const body = der.toString('base64').match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function newKeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

function keyPem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export function createCertificateAuthority(commonName = 'kube-sim-ca'): CertificateAuthority {
  const ca = newKeyPair();
  const certPem = buildCertificate({
    subject: commonName, issuer: commonName, publicKey: ca.publicKey, signingKey: ca.privateKey, isCA: true, hosts: [],
  });
  const caKeyId = keyIdentifier(ca.publicKey);
  return {
    certPem,
    keyPem: keyPem(ca.privateKey),
    issue(hosts: string[], leafName = hosts[0] ?? 'kube-sim'): KeyPairPem {
      const leaf = newKeyPair();
      return {
        certPem: buildCertificate({
          subject: leafName, issuer: commonName, publicKey: leaf.publicKey, signingKey: ca.privateKey,
          issuerKeyId: caKeyId, isCA: false, hosts,
        }),
        keyPem: keyPem(leaf.privateKey),
      };
    },
  };
}

/** True when `certPem` was signed by `caPem` (used by the tests of this module). */
export function isSignedBy(certPem: string, caPem: string): boolean {
  const ca = new X509Certificate(caPem);
  return new X509Certificate(certPem).verify(ca.publicKey);
}
