// The token of an `Authorization: Bearer <token>` header (RFC 6750 b64token syntax), shared by
// the webhooks' cluster tokens and the reconcilers' Pub/Sub push tokens.
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i.exec(authorization ?? '');
  return match?.[1];
}
