import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunNotFoundError } from '../../lib/core/errors.js';
import type { InboxItem } from '../../lib/core/inbox.js';
import { cancelItem, newHead, newRun, type StoreTarget, type StoreUnderTest } from './fixtures.js';

export function inboxContract(target: StoreTarget): void {
  describe.runIf(target.available)(`Inbox contract: ${target.name}`, () => {
    let sut: StoreUnderTest;
    beforeAll(async () => {
      sut = await target.setup();
    });
    afterAll(async () => {
      await sut?.dispose();
    });

    it('stores items in id order, bumps the inbox version per item, deletes ingested ones', async () => {
      const run = newRun();
      await sut.store.createHead(newHead(run, sut.clock.now()));
      const resolve: InboxItem = { id: '01B', kind: 'resolve', by: 'ops@example.com', callId: '3-0', outcome: 'succeeded', result: { ok: true } };
      const action: InboxItem = { id: '01C', kind: 'run_action', by: 'ops', action: 'retry' };
      await sut.store.put(run, action);
      await sut.store.put(run, resolve);
      await sut.peer().put(run, cancelItem('01A'));
      expect(await sut.store.list(run)).toEqual([cancelItem('01A'), resolve, action]);
      expect((await sut.store.getHead(run))?.inboxVersion).toBe(3);
      await sut.store.delete(run, '01B');
      await sut.store.delete(run, '01B'); // deleting twice is harmless
      expect((await sut.store.list(run)).map((i) => i.id)).toEqual(['01A', '01C']);
      expect(await sut.store.list(newRun())).toEqual([]);
    });

    it('keeps a repeated put to one item and never loses the version bump', async () => {
      const run = newRun();
      await sut.store.createHead(newHead(run, sut.clock.now()));
      expect(await sut.store.put(run, cancelItem('01A'))).toBe(true);
      // The second put says the item was already there: deterministic ids make "first one wins" checkable.
      expect(await sut.store.put(run, cancelItem('01A'))).toBe(false);
      expect(await sut.store.list(run)).toEqual([cancelItem('01A')]);
      // At least one bump per distinct item (DynamoDB bumps again on a repeat: see dynamo-inbox.ts).
      expect((await sut.store.getHead(run))?.inboxVersion).toBeGreaterThanOrEqual(1);
    });

    it('refuses items for a run that does not exist and leaves nothing behind', async () => {
      const run = newRun();
      await expect(sut.store.put(run, cancelItem('01A'))).rejects.toBeInstanceOf(RunNotFoundError);
      expect(await sut.store.list(run)).toEqual([]);
    });
  });
}
