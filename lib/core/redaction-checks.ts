/**
 * The checks that decide whether a candidate the patterns found is a secret: a payment card number
 * by its issuer prefix, length and Luhn digit; a base64 blob by what it decodes to. Pure and linear
 * in the candidate's length.
 */

/** The Luhn (mod 10) check over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * Lengths issuers give their card numbers, by prefix: Visa, Mastercard (51-55 and 2221-2720),
 * American Express, Discover, UnionPay, JCB, Diners Club and Maestro. A number that has none of
 * these shapes is an id, an amount or a timestamp (epoch milliseconds start with 1), whatever its
 * check digit says.
 */
function issuerLength(digits: string): boolean {
  const n = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p3 = Number(digits.slice(0, 3));
  const p4 = Number(digits.slice(0, 4));
  if (digits[0] === '4') return n === 13 || n === 16 || n === 19;
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16;
  if (p2 === 34 || p2 === 37) return n === 15;
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || p2 === 62 || (p4 >= 3528 && p4 <= 3589)) return n >= 16 && n <= 19;
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) return n >= 14 && n <= 19;
  if (p2 === 50 || (p2 >= 56 && p2 <= 69)) return n >= 13 && n <= 19;
  return false;
}

/** A candidate of the payment_card pattern (digits, maybe grouped by spaces or dashes) that is a card number. */
export function isCardNumber(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '');
  return digits.length >= 13 && digits.length <= 19 && issuerLength(digits) && luhnValid(digits);
}

const PRINTABLE = /^[\t\n\r\x20-\x7e]+$/;

/**
 * The text a base64 (or base64url) blob decodes to, when it is printable ASCII: what a secret
 * wrapped for an environment variable, a Kubernetes Secret or a config file decodes to. Undefined
 * for binary data (an image, a hash, a random key), which is most of what looks like base64.
 */
export function base64Text(candidate: string): string | undefined {
  const body = candidate.replace(/=+$/, '');
  if (body.length % 4 === 1) return undefined;
  const standard = body.replace(/-/g, '+').replace(/_/g, '/');
  try {
    // Binary shows in its first bytes: an image or a random key is refused before it is decoded whole.
    if (standard.length > 64 && !PRINTABLE.test(atob(standard.slice(0, 64)))) return undefined;
    const decoded = atob(standard);
    return decoded.length >= 8 && PRINTABLE.test(decoded) ? decoded : undefined;
  } catch {
    return undefined;
  }
}
