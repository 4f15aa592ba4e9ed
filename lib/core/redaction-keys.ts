/**
 * Which object keys hold secrets. A key is compared lower-cased with everything but letters and
 * digits removed, so `apiKey`, `api_key`, `API-KEY` and `x-api-key` are all `apikey`-shaped.
 */
export function normalizeKey(key: string): string {
  return key.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Anywhere in the key: `password`, `db_password`, `passwordConfirmation`, `userPasswd`. */
const CONTAINS = ['password', 'passwd', 'passphrase'];

/**
 * At the end of the key: `clientSecret`, `githubToken`, `refresh_token`, `stripeApiKey`. A suffix,
 * not a substring, so `secretName`, `secretArn`, `tokenUrl` and `tokenType` stay readable, and
 * only singular `token`: `tokens`, `inputTokens` and `max_tokens` are counts.
 */
const SUFFIXES = [
  'secret',
  'secrets',
  'token',
  'apikey',
  'apikeys',
  'privatekey',
  'secretkey',
  'secretaccesskey',
  'accountkey',
  'signingkey',
  'encryptionkey',
  'masterkey',
  'sharedaccesskey',
  'credential',
  'credentials',
  'connectionstring',
  'authorization',
  'cookie',
  'cookies',
  'sessionid',
  'sessionkey',
];

/** Whole keys only: short names that mean a secret only on their own. */
const EXACT = new Set(['auth', 'otp', 'cvv', 'cvc', 'dsn', 'pass', 'pwd', 'pw']);

/**
 * `db_pass`, `SMTP_PASS`, `adminPwd`: a password by its short name at the end of the key, but not
 * the words that end in `pass` (`bypass`, `compass`, `overpass`, a boarding pass).
 */
const SHORT_SUFFIX = /(?:pass|pwd)$/;
const NOT_A_PASSWORD = /(?:by|com|over|under|sur|tres|boarding|first|second|single|multi)pass$/;

/** Tokens that are cursors or idempotency keys, not credentials: redacting them breaks paging. */
const CURSORS = /(?:next|page|nextpage|pagination|continuation|nextcontinuation|sync|client|idempotency|cancellation|starting|marker)token$/;

export function isCursorName(normalized: string): boolean {
  return CURSORS.test(normalized);
}

/** True for a key whose value the redactor replaces whole (every string beneath it). */
export function isSecretKey(normalized: string): boolean {
  if (normalized === '' || isCursorName(normalized)) return false;
  if (EXACT.has(normalized)) return true;
  if (CONTAINS.some((c) => normalized.includes(c)) || SUFFIXES.some((s) => normalized.endsWith(s))) return true;
  return SHORT_SUFFIX.test(normalized) && !NOT_A_PASSWORD.test(normalized);
}
