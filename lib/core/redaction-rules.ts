import { isCardNumber } from './redaction-checks.js';

/** A pattern the redactor replaces with `[REDACTED:<name>]` wherever it occurs in a string value. */
export interface RedactionRule {
  /** Shown in the placeholder `[REDACTED:<name>]`: letters, digits, `_`, `.` and `-`. */
  name: string;
  /**
   * What to find. The redactor scans globally whatever the flags (i, m, s and u are kept). With a
   * named group `secret`, only that group is replaced and the rest (`password=`, `Bearer `, a URL's
   * user and host) is kept so the text still reads; without one, the whole match is.
   */
  pattern: RegExp;
  /**
   * Apply the rule only to a string that contains a match of `near`, or that sits in an object or
   * array beside a string that does: for secrets with no shape of their own, recognisable only by
   * their company (an AWS secret key beside its access key id).
   */
  near?: RegExp;
  /**
   * A last look at each candidate (the `secret` group, or the whole match; the match; its named
   * groups): false keeps it.
   */
  accept?: (secret: string, match: string, groups: Partial<Record<string, string>>) => boolean;
}

const AWS_ACCESS_KEY_ID = /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b/;

/** `Basic <base64>` is a credential only when it decodes to printable `user:password`. */
function isBasicCredential(secret: string): boolean {
  try {
    const decoded = atob(secret);
    return decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
  } catch {
    return false;
  }
}

/**
 * The built-in rules, in the order they run. Multi-line and structured forms first, so a later,
 * looser rule never sees half of one; the placeholder of an earlier rule is never redacted again.
 */
/**
 * A built-in rule may carry a hint: a cheap necessary condition of a match (tested
 * case-insensitively, with every other hint in one scan), so the many strings of a payload in
 * which no built-in format can occur cost one scan instead of one per rule. A rule without a hint
 * runs on every string: a forgotten hint costs time, never a miss.
 */
export interface BuiltInRule extends RedactionRule {
  hint?: RegExp;
}

export const DEFAULT_REDACTION_RULES: readonly BuiltInRule[] = [
  // PEM and PGP private keys; a block cut short (truncated output) is redacted to the end.
  {
    name: 'private_key',
    hint: /-----BEGIN /,
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)/,
  },
  // scheme://user:password@host: the password goes, the user and host stay.
  { name: 'url_credentials', hint: /:\/\//, pattern: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/?#@"'<>]*:(?<secret>[^\s/?#@"'<>]+)@/i },
  { name: 'slack_webhook', hint: /hooks\.slack\.com\//, pattern: /\bhooks\.slack\.com\/(?<secret>(?:services|workflows|triggers)\/[A-Za-z0-9_/-]+)/ },
  { name: 'discord_webhook', hint: /\/api\/webhooks\//, pattern: /\bdiscord(?:app)?\.com\/api\/webhooks\/(?<secret>\d+\/[A-Za-z0-9_-]+)/ },
  // Azure storage / Service Bus connection strings and SAS signatures.
  {
    name: 'azure_key',
    hint: /(?:accountkey|sharedaccesskey|sharedsecretvalue)=/,
    pattern: /\b(?:AccountKey|SharedAccessKey|SharedSecretValue)=(?<secret>[^;"'\s]{16,})/i,
  },
  { name: 'azure_sas_signature', hint: /sig=/, pattern: /[?&]sig=(?<secret>[A-Za-z0-9%+/=]{16,})/ },
  // HTTP header lines; before bearer/basic so `Authorization: Bearer x` becomes one placeholder.
  {
    name: 'http_header',
    hint: /authorization|cookie|api-key|x-auth-token/,
    pattern: /\b(?:Authorization|Proxy-Authorization|Cookie|Set-Cookie|X-Api-Key|X-Auth-Token|Api-Key)[ \t]*:[ \t]*(?<secret>[^\r\n"\\]+)/i,
  },
  { name: 'bearer_token', hint: /bearer\s/, pattern: /\bBearer\s+(?<secret>[A-Za-z0-9\-._~+/]{8,}=*)/i },
  { name: 'basic_auth', hint: /basic\s/, pattern: /\bBasic\s+(?<secret>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])/i, accept: isBasicCredential },
  { name: 'aws_access_key_id', hint: /a(?:kia|sia|gpa|ida|roa|npa|nva|ipa)/, pattern: new RegExp(AWS_ACCESS_KEY_ID.source) },
  {
    name: 'aws_secret_access_key',
    hint: /secret_?access_?key/,
    pattern: /(?:aws_?secret_?access_?key|secret_?access_?key)(\\?["']?\s*[:=]\s*\\?["']?)(?<secret>[A-Za-z0-9/+=]{40})/i,
  },
  // A bare 40-character secret key, recognised by the access key id beside it.
  {
    name: 'aws_secret_access_key',
    pattern: /(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])/,
    near: AWS_ACCESS_KEY_ID,
    // Not a git sha or another hex digest: mixed case, as AWS generates them.
    accept: (s) => /[A-Z]/.test(s) && /[a-z]/.test(s),
  },
  { name: 'stripe_key', hint: /[sr]k_(?:live|test)_/, pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/ },
  { name: 'stripe_webhook_secret', hint: /whsec_/, pattern: /\bwhsec_[A-Za-z0-9+/=]{24,}/ },
  { name: 'api_key', hint: /[spr]k-/, pattern: /\b(?:sk|pk|rk)-(?:live-|test-|proj-|ant-|svcacct-)?[A-Za-z0-9_-]{20,}\b/ },
  { name: 'google_api_key', hint: /aiza/, pattern: /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/ },
  { name: 'google_oauth_secret', hint: /gocspx-/, pattern: /\bGOCSPX-[A-Za-z0-9_-]{20,}/ },
  { name: 'google_oauth_token', hint: /ya29\./, pattern: /\bya29\.[0-9A-Za-z_-]{20,}/ },
  // Entra ID (Azure AD) application client secrets: three characters, a digit, `Q~`, then 31-34.
  {
    name: 'azure_client_secret',
    hint: /\dq~/,
    pattern: /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~-]|\.[A-Za-z0-9_~-])/,
  },
  { name: 'github_token', hint: /gh[pousr]_|github_pat_/, pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/ },
  {
    name: 'gitlab_token',
    hint: /gl[a-z]{2,5}-|gr1348941/,
    pattern: /\b(?:gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|agent|oas|ffct)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})/,
  },
  // Bitbucket app passwords and access tokens, Atlassian API tokens.
  { name: 'atlassian_token', hint: /at(?:bb|att|ctt)/, pattern: /\bAT(?:BB|ATT|CTT)[A-Za-z0-9_=.-]{24,}/ },
  { name: 'npm_token', hint: /npm_/, pattern: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { name: 'huggingface_token', hint: /hf_/, pattern: /\bhf_[A-Za-z0-9]{30,}\b/ },
  { name: 'slack_token', hint: /xox[abposr]-|xapp-/, pattern: /\b(?:xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[0-9]-[A-Za-z0-9-]{10,})/ },
  { name: 'discord_token', hint: /\.[a-z0-9_-]{6}\./, pattern: /\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])/ },
  { name: 'telegram_bot_token', hint: /\d{8}:/, pattern: /\b\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/ },
  { name: 'twilio_key', hint: /sk[0-9a-f]{32}/, pattern: /\bSK[0-9a-fA-F]{32}\b/ },
  { name: 'shopify_token', hint: /shp(?:at|ca|pa|ss)_/, pattern: /\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b/ },
  { name: 'pypi_token', hint: /pypi-/, pattern: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/ },
  { name: 'docker_token', hint: /dckr_pat_/, pattern: /\bdckr_pat_[A-Za-z0-9_-]{20,}/ },
  { name: 'digitalocean_token', hint: /do[opr]_v1_/, pattern: /\bdo[opr]_v1_[a-f0-9]{64}\b/ },
  { name: 'vault_token', hint: /hv[sbr]\./, pattern: /\bhv[sbr]\.[A-Za-z0-9_-]{24,}/ },
  { name: 'square_token', hint: /sq0(?:atp|csp)-/, pattern: /\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}/ },
  { name: 'mailgun_key', hint: /key-[0-9a-f]/, pattern: /\bkey-[0-9a-f]{32}\b/ },
  { name: 'sendgrid_key', hint: /sg\./, pattern: /\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}/ },
  { name: 'jwt', hint: /eyj/, pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  /*
   * Payment card numbers, bare or grouped by spaces or dashes (`4111 1111 1111 1111`,
   * `3782-822463-10005`): kept only with an issuer's prefix and length and a valid Luhn digit, so
   * order ids, amounts and timestamps stay.
   */
  {
    name: 'payment_card',
    hint: /[2-6]\d{3}[ -]?\d{3}/,
    // The first digit before the look-behind: scanning for a digit is much cheaper than a look-behind at every position.
    pattern: /[2-6](?<![\w-][2-6])(?:\d{12,18}|\d{3}([ -])\d{3,6}(?:\1\d{3,6}){1,3})(?!\w)/,
    accept: isCardNumber,
  },
];

/**
 * A base64 or base64url blob (16 characters or more) is redacted when the text it decodes to holds
 * a secret by the other rules: a key pair, a `.env` or a service-account JSON wrapped for an
 * environment variable or a Kubernetes Secret. Run last, by the redactor itself (it needs every
 * other rule); binary data (images, hashes, random keys) does not decode to text and stays.
 */
export const BASE64_RULE_NAME = 'base64_secret';
export const BASE64_HINT = /[A-Za-z0-9+/_-]{16}/;
export const BASE64_CANDIDATE = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])/;

/**
 * A word every built-in secret key name contains (the key test in redaction-keys.ts): keys in
 * free text are looked at only when their name holds one, so the many ordinary `"key": "value"`
 * pairs of a JSON body cost a failed lookahead, not a call of the key test each.
 */
export const SECRET_KEY_STEMS = ['pass', 'pwd', 'secret', 'token', 'key', 'auth', 'cookie', 'credential', 'connection', 'session', 'otp', 'cvv', 'cvc', 'dsn'];

/**
 * `name=value`, `name: "value"`, `"name": "value"` and `\"name\": \"value\"` in free text (a
 * tool that returns a JSON or YAML body as a string, a .env file, a query string), where `name`
 * is a secret key by the same test as an object key: the built-in names, the application's, minus
 * its allow-listed ones. Run after the formats, so `token=ghp_...` keeps the more precise name.
 * A quoted value cut short (truncated output, a parse error quoting it) runs to its line's end.
 */
export function keyedTextRules(isSecretName: (name: string) => boolean, stems: readonly string[] | undefined): RedactionRule[] {
  // A key in free text: `name=`, `name: `, `"name": ` (also escaped, JSON inside a string).
  const stem = stems && stems.length > 0 ? String.raw`(?=[A-Za-z0-9_.-]{0,63}?(?:${stems.join('|')}))` : '';
  const NAME = String.raw`(?<name>${stem}[A-Za-z_][A-Za-z0-9_.-]{0,63})`;
  // Not inside a longer name.
  const KEY_START = String.raw`(?<![A-Za-z0-9_.\-])`;
  const accept = (secret: string, _match: string, groups: Partial<Record<string, string>>): boolean => {
    const name = groups['name'] ?? '';
    if (!isSecretName(name)) return false;
    // `max_token=4096` is a count.
    return !(/token$/i.test(name) && /^\d+$/.test(secret));
  };
  return [
    {
      name: 'secret_assignment',
      pattern: new RegExp(String.raw`(?<q>["'])${NAME}\k<q>\s*:\s*(?<v>["'])(?<secret>(?:\\.|(?!\k<v>)[^\\\r\n])*)(?:\k<v>|(?=[\r\n])|$)`, 'i'),
      accept,
    },
    {
      name: 'secret_assignment',
      // Escaped once or more (JSON text inside JSON text): `\"name\": \"value\"`, `\\\"name\\\": ...`.
      pattern: new RegExp(String.raw`(?<b>\\+)(?<q>["'])${NAME}\k<b>\k<q>\s*:\s*\k<b>(?<v>["'])(?<secret>(?:(?!\k<b>\k<v>)[^\r\n])*)\k<b>\k<v>`, 'i'),
      accept,
    },
    {
      name: 'secret_assignment',
      // The value's quote may be escaped (`password=\"x\"` in JSON text): the secret stops before the escape.
      pattern: new RegExp(
        String.raw`${KEY_START}${NAME}[ \t]*[:=][ \t]*(?<e>\\?)(?<v>["'])(?<secret>(?:(?!\k<e>\k<v>)[^\r\n])*)(?:\k<e>\k<v>|(?=[\r\n])|$)`,
        'i',
      ),
      accept,
    },
    { name: 'secret_assignment', pattern: new RegExp(String.raw`${KEY_START}${NAME}[ \t]*(?:=|:[ \t])[ \t]*(?<secret>[^\s"'\\,;&<>]+)`, 'i'), accept },
  ];
}
