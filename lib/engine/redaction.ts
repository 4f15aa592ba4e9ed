import type { JsonValue } from '../core/json.js';

export interface RedactionRule {
  name: string;
  pattern: RegExp;
}

/** Default rules for common secrets. Each match becomes `[REDACTED:<name>]`. */
export const DEFAULT_REDACTION_RULES: RedactionRule[] = [
  { name: 'private_key', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g },
  { name: 'aws_access_key_id', pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b/g },
  {
    name: 'aws_secret_access_key',
    pattern: /(aws_secret_access_key|secretAccessKey|AWS_SECRET_ACCESS_KEY)(["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=]{40}/g,
  },
  { name: 'bearer_token', pattern: /\b(Bearer)\s+[A-Za-z0-9\-._~+/]{8,}=*/g },
  { name: 'api_key', pattern: /\b(?:sk|pk|rk)-(?:live-|test-|proj-|ant-)?[A-Za-z0-9_-]{20,}\b/g },
  { name: 'github_token', pattern: /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b/g },
  { name: 'slack_token', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g },
  { name: 'jwt', pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g },
  {
    name: 'secret_assignment',
    pattern: /\b(api[_-]?key|secret|password|passwd|token)(["']?\s*[:=]\s*["']?)[^\s"',;]{8,}/gi,
  },
];

/**
 * Redacts string values (never object keys, so ids, tool names and the JSON structure stay as
 * they are). Applied to every payload before it is written: live and resumed runs see the same.
 */
export class Redactor {
  constructor(private readonly rules: RedactionRule[] = DEFAULT_REDACTION_RULES) {}

  text(value: string): string {
    let out = value;
    for (const rule of this.rules) {
      out = out.replace(rule.pattern, (match: string, ...groups: unknown[]) => {
        // Keep a "name=" or "Bearer" prefix when the rule captured it, so the text still reads.
        const g1 = typeof groups[0] === 'string' ? groups[0] : undefined;
        const g2 = typeof groups[1] === 'string' ? groups[1] : undefined;
        if (g1 !== undefined && g2 !== undefined && match.startsWith(g1 + g2)) return `${g1}${g2}[REDACTED:${rule.name}]`;
        if (g1 !== undefined && match.startsWith(g1)) return `${g1} [REDACTED:${rule.name}]`;
        return `[REDACTED:${rule.name}]`;
      });
    }
    return out;
  }

  json(value: JsonValue): JsonValue {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.json(v));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, JsonValue> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.json(v);
      return out;
    }
    return value;
  }
}
