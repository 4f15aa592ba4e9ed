import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { TransientStoreError } from '../../core/errors.js';
import type { OutcomeNotice, OutcomePublisher } from '../../ports/outcome-publisher.js';
import type { JsonValue } from '../../core/json.js';

/** What a subscriber receives in `detail`: `id` (runId:seq) is stable across re-publication. */
export interface OutcomeDetail {
  id: string;
  tenant: string;
  runId: string;
  seq: number;
  status: string;
  summary: string;
  code?: string;
  /** A completed run's structured output, as JSON (agents with an output schema). */
  output?: JsonValue;
  /** Set instead of `output` when it was too large for the event: read GET /runs/{id}. */
  outputOmitted?: true;
  /** For a workflow run: the workflow and the version it pinned. */
  workflow?: { name: string; version: string };
}

export function outcomeDetail(notice: OutcomeNotice): OutcomeDetail {
  return {
    id: `${notice.runId}:${notice.seq}`,
    tenant: notice.tenant,
    runId: notice.runId,
    seq: notice.seq,
    status: notice.status,
    summary: notice.summary,
    ...(notice.code !== undefined ? { code: notice.code } : {}),
    ...(notice.output !== undefined ? { output: notice.output } : {}),
    ...(notice.outputOmitted ? { outputOmitted: true as const } : {}),
    ...(notice.workflow ? { workflow: { ...notice.workflow } } : {}),
  };
}

/**
 * Publishes `Agent Run Completed` / `Failed` / `Needs Attention` on an EventBridge bus. The lease
 * holder publishes once per outcome seq and marks it; a crash between the two publishes again with
 * the same detail id, so subscribers dedupe on `detail.id`.
 */
export class EventBridgeOutcomePublisher implements OutcomePublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
    private readonly source = 'logbook',
  ) {}

  async publish(notice: OutcomeNotice): Promise<void> {
    let response;
    try {
      response = await this.client.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: this.busName,
              Source: this.source,
              DetailType: notice.detailType,
              Resources: [],
              Detail: JSON.stringify(outcomeDetail(notice)),
            },
          ],
        }),
      );
    } catch (error) {
      throw new TransientStoreError(`PutEvents failed for ${notice.runId}:${notice.seq}`, { cause: error });
    }
    if ((response.FailedEntryCount ?? 0) > 0) {
      const entry = response.Entries?.[0];
      throw new TransientStoreError(`PutEvents rejected ${notice.runId}:${notice.seq}: ${entry?.ErrorCode ?? 'unknown'} ${entry?.ErrorMessage ?? ''}`.trim());
    }
  }
}

/** A publisher for a bus, with a client built for the region (and a local endpoint, if any). */
export function createEventBridgePublisher(options: { busName: string; region: string; endpoint?: string; source?: string }): EventBridgeOutcomePublisher {
  const client = new EventBridgeClient({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } } : {}),
  });
  return new EventBridgeOutcomePublisher(client, options.busName, options.source);
}
