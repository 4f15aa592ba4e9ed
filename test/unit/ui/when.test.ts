// Times in the inspector: a moment on another day than today says its date, so an approval asked
// today and due in three days does not read as due a moment before it was asked.
import { describe, expect, it } from 'vitest';
import { approvalAsked } from '../../../dev/ui/client/conversation.js';
import { clock, when } from '../../../dev/ui/client/format.js';

const asked = Date.parse('2026-03-04T10:00:00.000Z');
const due = Date.parse('2026-03-07T09:59:59.000Z'); // three days later, a second earlier in the day

describe('when', () => {
  it('is the time alone on the same UTC day as now, else the date and the time', () => {
    expect(when(asked, asked + 60_000)).toBe('10:00:00.000');
    expect(when(asked, asked)).toBe(clock(asked));
    expect(when(due, asked)).toBe('2026-03-07 09:59:59.000');
    expect(when(asked, due)).toBe('2026-03-04 10:00:00.000');
    // Just before and after midnight UTC are two days.
    expect(when(Date.parse('2026-03-04T23:59:59.999Z'), Date.parse('2026-03-05T00:00:00.000Z'))).toBe('2026-03-04 23:59:59.999');
    expect(when('2026-03-04T10:00:00.000Z', asked)).toBe('10:00:00.000');
    expect(when('not a time', asked)).toBe('');
  });

  it("on the approval card: the deadline three days later carries its date", () => {
    expect(approvalAsked({ asked, expiresAt: due }, asked + 5_000)).toBe('Approval asked at 10:00:00.000, rejected if unanswered by 2026-03-07 09:59:59.000.');
    // Looked at on the deadline's day, the request is the one with a date.
    expect(approvalAsked({ asked, expiresAt: due }, due)).toBe('Approval asked at 2026-03-04 10:00:00.000, rejected if unanswered by 09:59:59.000.');
    expect(approvalAsked({ asked }, asked)).toBe('Approval asked at 10:00:00.000.');
  });
});
