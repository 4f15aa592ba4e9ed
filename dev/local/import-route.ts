import { errorMessage } from '../../lib/core/errors.js';
import { RunFileError } from '../../lib/testing/eval/eval-errors.js';
import { parseRunFile } from '../../lib/testing/eval/run-file.js';
import { importRuns, type RunStorage } from '../../lib/testing/eval/run-transfer.js';

/** The path `logbook runs import` posts a run file to: served by the local stack only, never by a deployed API. */
export const IMPORT_PATH = '/local/import';

/**
 * A run file is one request, so it may be larger than the API's JSON limit: the whole file, read
 * into memory by a process on this machine (the server is loopback-only). Larger: export fewer runs.
 */
const MAX_IMPORT_BYTES = 256 * 1024 * 1024;

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * The local stack's fetch handler with `POST /local/import` in front of the API: the run file's
 * runs are written into the stack's own table and bucket under `tenant` (the local caller's),
 * through importRuns (payloads first, then the events, then the head). A bad file is a 400
 * naming its line; nothing of it is written.
 */
export function withImportRoute<E>(api: (request: Request, env?: E) => Response | Promise<Response>, storage: RunStorage, tenant: string) {
  return async (request: Request, env?: E): Promise<Response> => {
    if (new URL(request.url).pathname !== IMPORT_PATH) return api(request, env);
    if (request.method !== 'POST') return json(405, { error: { code: 'method_not_allowed', message: `${request.method} is not allowed here; use POST` } });
    const length = Number(request.headers.get('content-length') ?? 0);
    if (length > MAX_IMPORT_BYTES) return json(413, { error: { code: 'payload_too_large', message: `a run file of at most ${MAX_IMPORT_BYTES} bytes` } });
    const text = await request.text();
    try {
      const runs = parseRunFile(text, 'the run file');
      return json(200, await importRuns(storage, runs, { tenant }));
    } catch (error) {
      if (error instanceof RunFileError) return json(400, { error: { code: error.code, message: error.message } });
      return json(500, { error: { code: 'import_failed', message: errorMessage(error) } });
    }
  };
}
